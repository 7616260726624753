import type BetterSqlite3 from "better-sqlite3";
import { StoreError } from "./errors.js";

/**
 * Schema changes, in order. Append only: never edit or reorder a migration that has shipped,
 * because existing databases have already run it. Add version N+1 instead.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "accounts_and_api_keys",
    sql: `
      CREATE TABLE accounts (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        created_at  INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE api_keys (
        id            TEXT PRIMARY KEY,
        account_id    TEXT NOT NULL REFERENCES accounts(id),
        name          TEXT,
        prefix        TEXT NOT NULL,
        hash          TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
        created_at    INTEGER NOT NULL,
        last_used_at  INTEGER,
        revoked_at    INTEGER
      ) STRICT;

      -- Listing an account's keys, and revoking by the prefix shown in listings.
      -- Authentication uses the index that UNIQUE creates on hash.
      CREATE INDEX api_keys_account_id ON api_keys(account_id);
      CREATE INDEX api_keys_prefix ON api_keys(prefix);
    `,
  },
];

export interface MigrationResult {
  /** Versions applied by this call, in order; empty when the schema was already current. */
  applied: number[];
  /** Schema version after the call. */
  version: number;
}

/** Thrown for a malformed migration list: a programming error, not a user error. */
export function assertWellOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `Migrations must be numbered 1, 2, 3… without gaps; position ${index} has version ` +
          `${migration.version} (${migration.name})`,
      );
    }
  });
}

export function currentSchemaVersion(db: BetterSqlite3.Database): number {
  ensureMigrationsTable(db);
  const row = db.prepare("SELECT MAX(version) AS version FROM schema_migrations").get() as {
    version: number | null;
  };
  return row.version ?? 0;
}

/**
 * Brings the database up to the latest known migration, one transaction per migration.
 * Safe to call on every start and from concurrent processes: each migration re-checks,
 * under an immediate (write-locking) transaction, whether another process applied it first.
 */
export function migrate(
  db: BetterSqlite3.Database,
  options: { migrations?: readonly Migration[]; now?: () => number } = {},
): MigrationResult {
  const migrations = options.migrations ?? MIGRATIONS;
  const now = options.now ?? Date.now;
  assertWellOrdered(migrations);

  const latestKnown = migrations.length;
  const found = currentSchemaVersion(db);
  if (found > latestKnown) {
    throw new StoreError(
      "schema_too_new",
      `Database schema is at version ${found}, but this build only knows up to version ` +
        `${latestKnown}; upgrade the service before using this database`,
    );
  }

  const isApplied = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").pluck();
  const record = db.prepare(
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
  );
  const applied: number[] = [];
  for (const migration of migrations.slice(found)) {
    const applyOne = db.transaction(() => {
      if (isApplied.get(migration.version) !== undefined) return;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, now());
      applied.push(migration.version);
    });
    applyOne.immediate();
  }
  return { applied, version: latestKnown };
}

function ensureMigrationsTable(db: BetterSqlite3.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version     INTEGER PRIMARY KEY,
      name        TEXT NOT NULL,
      applied_at  INTEGER NOT NULL
    ) STRICT
  `);
}
