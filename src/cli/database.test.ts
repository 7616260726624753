import BetterSqlite3 from "better-sqlite3";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { POSTGRES_TEST_URL } from "../testing/databases.js";
import { expectOneLineUserError, runJudge } from "./test-helpers.js";

/**
 * A mistyped --db or JUDGE_DB must not silently create an empty database (and its directories)
 * that then answers "No accounts yet", as if the data were lost. Administration commands open
 * only a database that is already this service's; `--create` (or `judge serve`) creates one.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "judge-cli-db-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const MISSING = /^judge: no database at .*: the file does not exist; check --db or JUDGE_DB \(and JUDGE_DB_SCHEMA\), or pass --create to create it$/m;

/** One of each group: every administration command opens the database through withServices. */
const ADMIN_COMMANDS: string[][] = [
  ["accounts", "create", "--name", "Acme"],
  ["plans", "create", "--name", "pro", "--rpm", "60", "--allowance", "100", "--price", "0.05"],
  ["keys", "list"],
  ["balance", "top-up", "--account", "acct_x", "--amount", "1"],
  ["ledger", "check"],
];

describe("administration commands on SQLite", () => {
  for (const command of ADMIN_COMMANDS) {
    it(`judge ${command.join(" ")} refuses a file that does not exist, naming it, and creates neither it nor its directory`, async () => {
      const typo = join(dir, "dta", "judge.db");
      const run = await runJudge([...command, "--db", typo]);
      expectOneLineUserError(run, MISSING);
      expect(run.stderr, JSON.stringify(run)).toContain(typo);
      expect(existsSync(join(dir, "dta")), "the mistyped directory was created").toBe(false);
    });
  }

  it("refuses a JUDGE_DB that names no file, as it does --db", async () => {
    const typo = join(dir, "judge.bd");
    expectOneLineUserError(await runJudge(["accounts", "list"], { JUDGE_DB: typo }), MISSING);
    expect(existsSync(typo)).toBe(false);
  });

  it("refuses a SQLite file that is not this service's database, and leaves it unchanged", async () => {
    const other = join(dir, "other.db");
    const raw = new BetterSqlite3(other);
    raw.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me');");
    raw.close();
    const before = readFileSync(other);
    const run = await runJudge(["accounts", "list", "--db", other]);
    expectOneLineUserError(run, /^judge: no database of this service in .*other\.db: it has none of its tables; .* or pass --create to create it$/m);
    expect(readFileSync(other).equals(before), "the other application's database was changed").toBe(true);
  });

  it("creates the database with --create, and finds it afterwards without", async () => {
    const fresh = join(dir, "new", "judge.db");
    const created = await runJudge(["--create", "accounts", "create", "--name", "Acme", "--json", "--db", fresh]);
    expect(created.status, JSON.stringify(created)).toBe(0);
    const account = JSON.parse(created.stdout) as { id: string };
    const listed = await runJudge(["accounts", "list", "--json", "--db", fresh]);
    expect(listed.status, JSON.stringify(listed)).toBe(0);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((a) => a.id)).toEqual([account.id]);
  });
});

describe("administration commands on PostgreSQL", () => {
  let schema: string;
  let client: pg.Client;
  beforeEach(async () => {
    schema = `t_cli_${process.pid}_${Date.now().toString(36)}`;
    client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
    await client.connect();
  });
  afterEach(async () => {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
  const schemaExists = async () => (await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rowCount === 1;
  const tables = async () =>
    (await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [schema])).rows.map((r) => r.table_name);

  it("refuses a schema that does not exist, naming it, and does not create it", async () => {
    const run = await runJudge(["plans", "list", "--db", POSTGRES_TEST_URL], { JUDGE_DB_SCHEMA: schema });
    expectOneLineUserError(
      run,
      new RegExp(`^judge: no database of this service in schema "${schema}" of postgres://.*: it has none of its tables; .*--create to create it$`, "m"),
    );
    expect(await schemaExists(), "the schema was created").toBe(false);
  });

  it("refuses a schema that exists without this service's tables, and adds none", async () => {
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.query(`CREATE TABLE "${schema}".notes (id int)`);
    expectOneLineUserError(await runJudge(["accounts", "list", "--db", POSTGRES_TEST_URL], { JUDGE_DB_SCHEMA: schema }), /has none of its tables/);
    expect(await tables()).toEqual(["notes"]);
  });

  it("creates the schema and its tables with --create", async () => {
    const run = await runJudge(["--create", "plans", "list", "--db", POSTGRES_TEST_URL], { JUDGE_DB_SCHEMA: schema });
    expect(run.status, JSON.stringify(run)).toBe(0);
    expect(await tables()).toContain("schema_migrations");
    const again = await runJudge(["plans", "list", "--json", "--db", POSTGRES_TEST_URL], { JUDGE_DB_SCHEMA: schema });
    expect(again.status, JSON.stringify(again)).toBe(0);
  });
});
