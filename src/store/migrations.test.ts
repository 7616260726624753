import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "./db.js";
import { StoreError } from "./errors.js";
import { currentSchemaVersion, migrate, MIGRATIONS, type Migration } from "./migrations.js";
import { useTempDir } from "./test-helpers.js";

const temp = useTempDir();
const connections: BetterSqlite3.Database[] = [];

function rawMemoryDb() {
  const db = new BetterSqlite3(":memory:");
  connections.push(db);
  return db;
}

afterEach(() => {
  for (const db of connections.splice(0)) if (db.open) db.close();
  temp.cleanup();
});

const recorded = (db: BetterSqlite3.Database) =>
  db.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all();

const tableNames = (db: BetterSqlite3.Database) =>
  db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all() as string[];

describe("migrate", () => {
  it("applies every known migration once and records each in schema_migrations", () => {
    const db = rawMemoryDb();
    const result = migrate(db, { now: () => 123 });
    expect(result, JSON.stringify(result)).toEqual({
      applied: MIGRATIONS.map((m) => m.version),
      version: MIGRATIONS.length,
    });
    expect(recorded(db)).toEqual(MIGRATIONS.map(({ version, name }) => ({ version, name })));
    expect(tableNames(db)).toEqual(expect.arrayContaining(["accounts", "api_keys", "schema_migrations"]));
  });

  it("is a no-op when run again on a current database", () => {
    const db = rawMemoryDb();
    migrate(db);
    const before = db.prepare("SELECT * FROM schema_migrations").all();
    const again = migrate(db);
    expect(again, JSON.stringify(again)).toEqual({ applied: [], version: MIGRATIONS.length });
    expect(db.prepare("SELECT * FROM schema_migrations").all()).toEqual(before);
  });

  it("applies only the migrations newer than the recorded version", () => {
    const db = rawMemoryDb();
    const first: Migration = { version: 1, name: "one", sql: "CREATE TABLE one (x INTEGER)" };
    const second: Migration = { version: 2, name: "two", sql: "CREATE TABLE two (x INTEGER)" };
    migrate(db, { migrations: [first] });
    const result = migrate(db, { migrations: [first, second] });
    expect(result, JSON.stringify(result)).toEqual({ applied: [2], version: 2 });
    expect(currentSchemaVersion(db)).toBe(2);
    expect(tableNames(db)).toEqual(["one", "schema_migrations", "two"]);
  });

  it("rolls back a failing migration completely and records nothing for it", () => {
    const db = rawMemoryDb();
    const broken: Migration = {
      version: 1,
      name: "broken",
      sql: "CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);",
    };
    expect(() => migrate(db, { migrations: [broken] })).toThrow(/no_such_table/);
    expect(tableNames(db)).toEqual(["schema_migrations"]);
    expect(currentSchemaVersion(db)).toBe(0);
  });

  it("rejects a database whose schema is newer than this build knows", () => {
    const db = rawMemoryDb();
    migrate(db);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      MIGRATIONS.length + 1,
      "from_the_future",
      0,
    );
    expect(() => migrate(db)).toThrow(
      expect.objectContaining({ name: "StoreError", code: "schema_too_new" }),
    );
  });

  it("rejects a migration list that is not numbered 1, 2, 3… without gaps", () => {
    const db = rawMemoryDb();
    const gap: Migration[] = [
      { version: 1, name: "one", sql: "" },
      { version: 3, name: "three", sql: "" },
    ];
    expect(() => migrate(db, { migrations: gap })).toThrow(/position 1 has version 3/);
  });
});

describe("openDatabase", () => {
  it("creates the parent directory and migrates a new file with WAL, foreign keys and a busy timeout", () => {
    const path = join(temp.dir(), "a", "b", "judge.db");
    const db = openDatabase(path);
    connections.push(db);
    const settings = {
      journal: db.pragma("journal_mode", { simple: true }),
      foreignKeys: db.pragma("foreign_keys", { simple: true }),
      busyTimeout: db.pragma("busy_timeout", { simple: true }),
      version: currentSchemaVersion(db),
    };
    expect(settings, JSON.stringify(settings)).toEqual({
      journal: "wal",
      foreignKeys: 1,
      busyTimeout: 5000,
      version: MIGRATIONS.length,
    });
  });

  it("reopens an existing file without re-running migrations", () => {
    const path = join(temp.dir(), "judge.db");
    openDatabase(path).close();
    const db = openDatabase(path);
    connections.push(db);
    expect(recorded(db)).toHaveLength(MIGRATIONS.length);
  });

  it("refuses a file written by a newer schema and leaves it untouched", () => {
    const path = join(temp.dir(), "judge.db");
    const db = openDatabase(path);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      99,
      "from_the_future",
      0,
    );
    db.close();

    let thrown: unknown;
    try {
      openDatabase(path);
    } catch (error) {
      thrown = error;
    }
    expect(thrown, String(thrown)).toBeInstanceOf(StoreError);
    expect(thrown).toMatchObject({ code: "schema_too_new" });
    expect((thrown as Error).message).toContain("version 99");
  });

  it("reports a file that is not a SQLite database as database_unavailable", () => {
    const dir = temp.dir();
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "not-a-db.db");
    writeFileSync(path, "this is definitely not sqlite ".repeat(100));
    expect(() => openDatabase(path)).toThrow(
      expect.objectContaining({ code: "database_unavailable" }),
    );
  });

  it("opens :memory: without creating any file", () => {
    const db = openDatabase(":memory:");
    connections.push(db);
    expect(currentSchemaVersion(db)).toBe(MIGRATIONS.length);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
  });
});
