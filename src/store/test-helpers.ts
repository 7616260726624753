import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { newTestDatabase, type StoreEngine, type TestDatabase } from "../testing/databases.js";
import type { StoreOptions } from "./store.js";
import type { Store } from "./types.js";

/*
 * No vitest import here: the billing worker processes (src/testing/billing-worker.ts) load this
 * module's neighbours outside vitest, where importing vitest throws. Test files call the
 * clean-up functions from their own afterEach.
 */

/** A fresh directory per test so file-backed databases never leak between tests. */
export function useTempDir(): { dir: () => string; cleanup: () => void } {
  let current: string | undefined;
  return {
    dir() {
      current ??= mkdtempSync(join(tmpdir(), "judge-store-"));
      return current;
    },
    cleanup() {
      if (current) rmSync(current, { recursive: true, force: true });
      current = undefined;
    },
  };
}

/** Fresh databases of one engine for a test file; `dropAll()` (in afterEach) drops every one opened. */
export function testDatabases(engine: StoreEngine) {
  const opened: TestDatabase[] = [];
  const fresh = (): TestDatabase => {
    const database = newTestDatabase(engine);
    opened.push(database);
    return database;
  };
  return {
    fresh,
    /** A migrated store on a fresh database. */
    async store(options: Omit<StoreOptions, "location" | "schema"> = {}): Promise<{ store: Store; database: TestDatabase }> {
      const database = fresh();
      return { store: await database.store(options), database };
    },
    async dropAll(): Promise<void> {
      for (const database of opened.splice(0)) await database.drop();
    },
  };
}

/** Runs one statement on a second, raw connection: what an operator with a SQL prompt could do. */
export async function tamper(database: TestDatabase, statement: string): Promise<void> {
  const raw = await database.raw();
  try {
    await sql.raw(statement).execute(raw.db);
  } finally {
    await raw.close();
  }
}

/** A controllable clock for timestamp assertions. */
export function fakeClock(start = 1_700_000_000_000) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}
