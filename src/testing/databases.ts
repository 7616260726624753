import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { Redis } from "ioredis";
import pg from "pg";
import type { Database } from "../store/database.js";
import { openPostgres } from "../store/postgres.js";
import { openSqlite } from "../store/sqlite.js";
import { createStore, type StoreOptions } from "../store/store.js";
import type { Store } from "../store/types.js";

/**
 * Real databases for tests: a SQLite file in a temporary directory, or a schema of its own on
 * the machine's PostgreSQL (127.0.0.1:5432, trust auth, database `test`), so runs and tests
 * never see each other's rows. Every store test runs on both.
 */
export const STORE_ENGINES = ["sqlite", "postgres"] as const;
export type StoreEngine = (typeof STORE_ENGINES)[number];

export const POSTGRES_TEST_URL = "postgres://root@127.0.0.1:5432/test";
export const REDIS_TEST_URL = "redis://127.0.0.1:6379";

/** Where one test's database lives: pass `location` and `schema` to createStore or JUDGE_DB/JUDGE_DB_SCHEMA. */
export interface TestDatabase {
  engine: StoreEngine;
  location: string;
  /** PostgreSQL only. */
  schema?: string;
  /** A store on it (migrated), with the options given. */
  store(options?: Omit<StoreOptions, "location" | "schema">): Promise<Store>;
  /** A second, raw connection for what the store never does: dumps and tampering. */
  raw(): Promise<Database>;
  /** Every row of every table (sorted, so only contents count): compare before/after to prove nothing changed. */
  dump(): Promise<Record<string, string[]>>;
  /** Drops the schema or removes the file, closing what was opened through this object. */
  drop(): Promise<void>;
}

let counter = 0;

/** A fresh, empty database of `engine`. */
export function newTestDatabase(engine: StoreEngine): TestDatabase {
  const dir = engine === "sqlite" ? mkdtempSync(join(tmpdir(), "judge-db-")) : undefined;
  const schema = engine === "postgres" ? `t_${process.pid}_${Date.now().toString(36)}_${counter++}` : undefined;
  const location = dir ? join(dir, "judge.db") : POSTGRES_TEST_URL;
  const opened: { close(): Promise<void> }[] = [];
  const raw = async () => {
    const database = dir ? openSqlite(location) : await openPostgres({ url: location, schema });
    opened.push(database);
    return database;
  };
  return {
    engine,
    location,
    schema,
    async store(options = {}) {
      const store = await createStore({ ...options, location, schema });
      opened.push(store);
      return store;
    },
    raw,
    async dump() {
      const database = await raw();
      try {
        return await dumpTables(database);
      } finally {
        await database.close();
        opened.splice(opened.indexOf(database), 1);
      }
    },
    async drop() {
      for (const each of opened.splice(0)) await each.close().catch(() => undefined);
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (schema) await dropSchema(schema);
    },
  };
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Table names of the database's own schema, sorted. */
export async function tableNames(database: Database): Promise<string[]> {
  const query =
    database.dialect === "sqlite"
      ? sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
      : sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`;
  return (await query.execute(database.db)).rows.map((row) => row.name);
}

/** Rows as JSON with keys in column order, so both engines dump identically. */
export async function dumpTables(database: Database): Promise<Record<string, string[]>> {
  const dump: Record<string, string[]> = {};
  for (const table of await tableNames(database)) {
    const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(database.db)).rows;
    dump[table] = rows.map((row) => JSON.stringify(row)).sort();
  }
  return dump;
}

/** Deletes every key of the test Redis under `prefix` (a test's, or a benchmark's, own keys). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_TEST_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
