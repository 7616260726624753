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
  {
    version: 2,
    name: "plans_ledger_reservations_rate_limits_idempotency",
    sql: `
      CREATE TABLE plans (
        id                   TEXT PRIMARY KEY,
        name                 TEXT NOT NULL UNIQUE,
        requests_per_minute  INTEGER NOT NULL CHECK (requests_per_minute >= 1),
        allowance_questions  INTEGER NOT NULL CHECK (allowance_questions >= 0),
        price_per_million    INTEGER NOT NULL CHECK (price_per_million >= 0),
        created_at           INTEGER NOT NULL
      ) STRICT;

      -- Every account needs a plan; existing accounts get this one.
      INSERT INTO plans VALUES ('plan_default', 'default', 60, 1000, 50000, CAST(strftime('%s', 'now') AS INTEGER) * 1000);

      -- Balances in micro-euros. The CHECKs are a last line of defence: every debit is already
      -- a conditional statement, so a violation means a bug, and the transaction aborts.
      ALTER TABLE accounts ADD COLUMN plan_id TEXT NOT NULL DEFAULT 'plan_default';
      ALTER TABLE accounts ADD COLUMN balance_micro INTEGER NOT NULL DEFAULT 0 CHECK (balance_micro >= 0);
      ALTER TABLE accounts ADD COLUMN reserved_micro INTEGER NOT NULL DEFAULT 0
        CHECK (reserved_micro >= 0 AND reserved_micro <= balance_micro);

      -- Questions answered (used) and held by requests in flight (reserved), per allowance period.
      CREATE TABLE plan_usage (
        account_id    TEXT NOT NULL REFERENCES accounts(id),
        period_start  INTEGER NOT NULL,
        used          INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
        reserved      INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0),
        PRIMARY KEY (account_id, period_start)
      ) STRICT, WITHOUT ROWID;

      -- Append-only: each balance equals the sum of its account's amounts, and each period's
      -- used equals the sum of its plan entries' questions.
      CREATE TABLE ledger (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id    TEXT NOT NULL REFERENCES accounts(id),
        at            INTEGER NOT NULL,
        kind          TEXT NOT NULL CHECK (kind IN ('top_up', 'charge', 'plan', 'adjustment')),
        amount_micro  INTEGER NOT NULL,
        questions     INTEGER NOT NULL DEFAULT 0,
        input_tokens  INTEGER NOT NULL DEFAULT 0,
        period_start  INTEGER,
        request_id    TEXT,
        note          TEXT
      ) STRICT;
      CREATE INDEX ledger_account ON ledger(account_id, id);
      CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;
      CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END;

      -- A charge held while the model runs; settled into the ledger or released.
      CREATE TABLE reservations (
        id            TEXT PRIMARY KEY,
        account_id    TEXT NOT NULL REFERENCES accounts(id),
        billed_to     TEXT NOT NULL CHECK (billed_to IN ('plan', 'balance')),
        questions     INTEGER NOT NULL,
        input_tokens  INTEGER NOT NULL,
        amount_micro  INTEGER NOT NULL,
        period_start  INTEGER NOT NULL,
        request_id    TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX reservations_expires_at ON reservations(expires_at);

      CREATE TABLE rate_windows (
        account_id    TEXT NOT NULL,
        window_start  INTEGER NOT NULL,
        count         INTEGER NOT NULL,
        PRIMARY KEY (account_id, window_start)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE idempotency_keys (
        account_id    TEXT NOT NULL,
        key           TEXT NOT NULL,
        request_hash  TEXT NOT NULL,
        owner         TEXT NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('running', 'done')),
        response      TEXT,
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        PRIMARY KEY (account_id, key)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX idempotency_keys_expires_at ON idempotency_keys(expires_at);
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
