import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_TEST_URL, STORE_ENGINES, tableNames, type TestDatabase } from "../testing/databases.js";
import type { Database } from "./database.js";
import { StoreError } from "../record-errors.js";
import { currentSchemaVersion, migrate, MIGRATIONS, type Migration } from "./migrate.js";
import { openPostgres } from "./postgres.js";
import { openSqlite } from "./sqlite.js";
import { createStore, type Store } from "./store.js";
import { testDatabases, useTempDir } from "./test-helpers.js";

const recorded = async (database: Database) => database.db.selectFrom("schema_migrations").select(["version", "name"]).orderBy("version").execute();

/** The same script on both engines: these test migrations use SQL both understand. */
const both = (script: string) => ({ sqlite: script, postgres: script });

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const databases = testDatabases(engine);
  afterEach(() => databases.dropAll());

  /** An empty database (no tables yet), not migrated: what `migrate` is given on first start. */
  const empty = async (): Promise<{ database: Database; test: TestDatabase }> => {
    const test = databases.fresh();
    return { database: await test.raw(), test };
  };

  describe("migrate", () => {
    it("applies every known migration once and records each in schema_migrations", async () => {
      const { database } = await empty();
      const result = await migrate(database, { now: () => 123 });
      expect(result, JSON.stringify(result)).toEqual({
        applied: MIGRATIONS.map((m) => m.version),
        version: MIGRATIONS.length,
      });
      expect(await recorded(database)).toEqual(MIGRATIONS.map(({ version, name }) => ({ version, name })));
      expect(await tableNames(database)).toEqual(expect.arrayContaining(["accounts", "api_keys", "schema_migrations"]));
    });

    it("is a no-op when run again on a current database", async () => {
      const { database } = await empty();
      await migrate(database);
      const before = await database.db.selectFrom("schema_migrations").selectAll().execute();
      const again = await migrate(database);
      expect(again, JSON.stringify(again)).toEqual({ applied: [], version: MIGRATIONS.length });
      expect(await database.db.selectFrom("schema_migrations").selectAll().execute()).toEqual(before);
    });

    it("applies only the migrations newer than the recorded version", async () => {
      const { database } = await empty();
      const first: Migration = { version: 1, name: "one", sql: both("CREATE TABLE one (x INTEGER)") };
      const second: Migration = { version: 2, name: "two", sql: both("CREATE TABLE two (x INTEGER)") };
      await migrate(database, { migrations: [first] });
      const result = await migrate(database, { migrations: [first, second] });
      expect(result, JSON.stringify(result)).toEqual({ applied: [2], version: 2 });
      expect(await currentSchemaVersion(database)).toBe(2);
      expect(await tableNames(database)).toEqual(["one", "schema_migrations", "two"]);
    });

    it("rolls back a failing migration completely and records nothing for it", async () => {
      const { database } = await empty();
      const broken: Migration = {
        version: 1,
        name: "broken",
        sql: both("CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);"),
      };
      await expect(migrate(database, { migrations: [broken] })).rejects.toThrow(/no_such_table/);
      // The version is read first: the migrations table is created in the failed transaction, so reading creates it again.
      expect(await currentSchemaVersion(database)).toBe(0);
      expect(await tableNames(database)).toEqual(["schema_migrations"]);
    });

    it("rejects a database whose schema is newer than this build knows", async () => {
      const { database } = await empty();
      await migrate(database);
      await database.db
        .insertInto("schema_migrations")
        .values({ version: MIGRATIONS.length + 1, name: "from_the_future", applied_at: 0 })
        .execute();
      await expect(migrate(database)).rejects.toThrow(expect.objectContaining({ name: "StoreError", code: "schema_too_new" }));
    });

    it("rejects a migration list that is not numbered 1, 2, 3… without gaps", async () => {
      const { database } = await empty();
      const gap: Migration[] = [
        { version: 1, name: "one", sql: both("") },
        { version: 3, name: "three", sql: both("") },
      ];
      await expect(migrate(database, { migrations: gap })).rejects.toThrow(/position 1 has version 3/);
    });
  });

  describe("createStore", () => {
    it("reopens an existing database without re-running migrations", async () => {
      const { store, database } = await databases.store();
      await store.close();
      await database.store();
      const raw = await database.raw();
      expect(await recorded(raw)).toHaveLength(MIGRATIONS.length);
    });

    it("refuses a database written by a newer schema, with StoreError schema_too_new, and leaves it untouched", async () => {
      const { store, database } = await databases.store();
      await store.close();
      const raw = await database.raw();
      await raw.db.insertInto("schema_migrations").values({ version: 99, name: "from_the_future", applied_at: 0 }).execute();
      const before = await database.dump();

      let thrown: unknown;
      try {
        await database.store();
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(thrown)).toBeInstanceOf(StoreError);
      expect(thrown).toMatchObject({ code: "schema_too_new" });
      expect((thrown as Error).message).toContain("version 99");
      expect(await database.dump()).toEqual(before);
    });
  });
});

describe("createStore on SQLite", () => {
  const temp = useTempDir();
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close();
    temp.cleanup();
  });
  const pragma = async (database: Database, name: string) => Object.values((await sql.raw(`PRAGMA ${name}`).execute(database.db)).rows[0] as object)[0];

  it("creates the parent directory and migrates a new file with WAL, foreign keys and a busy timeout", async () => {
    const path = join(temp.dir(), "a", "b", "judge.db");
    opened.push(await createStore({ location: path }));
    const database = openSqlite(path);
    opened.push(database);
    const settings = {
      journal: await pragma(database, "journal_mode"),
      foreignKeys: await pragma(database, "foreign_keys"),
      busyTimeout: await pragma(database, "busy_timeout"),
      version: await currentSchemaVersion(database),
    };
    expect(settings, JSON.stringify(settings)).toEqual({
      journal: "wal",
      foreignKeys: 1,
      busyTimeout: 5000,
      version: MIGRATIONS.length,
    });
  });

  it("reports a file that is not a SQLite database as database_unavailable", async () => {
    const dir = temp.dir();
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "not-a-db.db");
    writeFileSync(path, "this is definitely not sqlite ".repeat(100));
    await expect(createStore({ location: path })).rejects.toThrow(expect.objectContaining({ code: "database_unavailable" }));
  });

  it("opens :memory: without creating any file", async () => {
    const store = await createStore({ location: ":memory:" });
    opened.push(store);
    expect(store.location).toBe(":memory:");
    expect(await store.accounts.list()).toEqual([]);
  });
});

describe("createStore on PostgreSQL", () => {
  const databases = testDatabases("postgres");
  afterEach(() => databases.dropAll());

  it("creates the schema if missing and migrates it; connections stay in it, under a statement timeout", async () => {
    const { store, database } = await databases.store();
    expect(store.location).toBe(POSTGRES_TEST_URL);
    // A plan the store creates lands in its schema, not in public.
    await store.plans.create({ name: "in schema", requestsPerMinute: 1, allowanceQuestions: 0, pricePerMillion: 0 });
    const connection = await openPostgres({ url: database.location, schema: database.schema, statementTimeoutMs: 1_234 });
    try {
      const shown = {
        schema: (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(connection.db)).rows[0]!.s,
        timeout: (await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(connection.db)).rows[0]!.statement_timeout,
        version: await currentSchemaVersion(connection),
        plans: (await connection.db.selectFrom("plans").select("name").where("name", "=", "in schema").execute()).length,
      };
      expect(shown, JSON.stringify(shown)).toEqual({ schema: database.schema, timeout: "1234ms", version: MIGRATIONS.length, plans: 1 });
      // A statement past the timeout is cut off by the server, and reported as the database being unavailable.
      const slow = await sql`SELECT pg_sleep(3)`.execute(connection.db).catch((error: unknown) => connection.translate(error));
      expect(slow, String(slow)).toMatchObject({ name: "StoreError", code: "database_unavailable" });
    } finally {
      await connection.close();
    }
  });

  it("several instances starting at once on a fresh schema all succeed, and each migration runs exactly once", async () => {
    // A few rounds, each on a fresh schema, so the creation of the schema itself is raced too.
    for (let round = 0; round < 3; round++) {
      const database = databases.fresh();
      const stores: Store[] = await Promise.all(Array.from({ length: 4 }, () => database.store()));
      const raw = await database.raw();
      const rows = await raw.db.selectFrom("schema_migrations").select(["version", "name"]).orderBy("version").execute();
      expect(rows, `round ${round}: ${JSON.stringify(rows)}`).toEqual(MIGRATIONS.map(({ version, name }) => ({ version, name })));
      for (const store of stores) expect(await store.accounts.list()).toEqual([]);
    }
  });

  it("reports a server that cannot be reached as database_unavailable", async () => {
    await expect(createStore({ location: "postgres://root@127.0.0.1:1/test", statementTimeoutMs: 1_000 })).rejects.toThrow(
      expect.objectContaining({ code: "database_unavailable" }),
    );
  });
});
