import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { StoreError } from "./errors.js";
import { migrate } from "./migrations.js";

export type Database = BetterSqlite3.Database;

/** How long a writer waits for another process's lock before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/** `:memory:` and `""` (a private temporary database) have no file to create or journal. */
function isFileBacked(path: string): boolean {
  return path !== ":memory:" && path !== "";
}

/**
 * Opens (creating if needed) the SQLite database at `path` and migrates it to the latest schema.
 * Throws `StoreError` "database_unavailable" if the file cannot be opened and "schema_too_new"
 * if it was written by a newer build.
 */
export function openDatabase(path: string): Database {
  let db: Database | undefined;
  try {
    if (isFileBacked(path)) mkdirSync(dirname(path), { recursive: true });
    db = new BetterSqlite3(path);
    // The first statements are where a non-SQLite file or a read-only location shows up.
    configure(db, path);
  } catch (error) {
    db?.close();
    throw unavailable(path, error);
  }
  try {
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function unavailable(path: string, error: unknown): StoreError {
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreError("database_unavailable", `Cannot open database ${path}: ${reason}`, {
    cause: error,
  });
}

function configure(db: Database, path: string): void {
  // First, so that even switching to WAL waits for another process's lock instead of failing.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (isFileBacked(path)) {
    // WAL lets the HTTP server read while a CLI process writes; NORMAL sync is durable
    // across application crashes under WAL and avoids an fsync per transaction.
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
  }
  db.pragma("foreign_keys = ON");
}
