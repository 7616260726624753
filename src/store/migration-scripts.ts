import type { DialectName } from "./database.js";
import { AUDIT_MIGRATION_NAME, AUDIT_MIGRATION_SQL } from "./migration-audit.js";
import { KEY_LIMITS_MIGRATION } from "./migration-key-limits.js";
import { CONSOLE_MIGRATION } from "./migration-console.js";
import { MODELS_MIGRATION } from "./migration-models.js";

/**
 * Schema changes, in order. Append only: never edit or reorder a migration that has shipped,
 * because existing databases have already run it. Add version N+1 instead.
 *
 * Each migration is written once per engine: DDL is where SQLite and PostgreSQL truly differ
 * (STRICT tables and INTEGER on SQLite, BIGINT and identity columns on PostgreSQL, and the
 * triggers that keep the ledger append-only). Both describe the same tables and constraints.
 */
export interface Migration {
  version: number;
  name: string;
  sql: Record<DialectName, string>;
}

const LEDGER_BY_TIME = `CREATE INDEX ledger_at ON ledger(at);`;

const RATE_WINDOWS_BY_KEY = `
      -- The rate limiter counts whatever key it is given, not only accounts.
      ALTER TABLE rate_windows RENAME COLUMN account_id TO key;
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "accounts_and_api_keys",
    sql: {
      sqlite: `
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
      postgres: `
        CREATE TABLE accounts (
          id          TEXT PRIMARY KEY,
          name        TEXT NOT NULL,
          created_at  BIGINT NOT NULL
        );

        CREATE TABLE api_keys (
          id            TEXT PRIMARY KEY,
          account_id    TEXT NOT NULL REFERENCES accounts(id),
          name          TEXT,
          prefix        TEXT NOT NULL,
          hash          TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
          created_at    BIGINT NOT NULL,
          last_used_at  BIGINT,
          revoked_at    BIGINT
        );

        CREATE INDEX api_keys_account_id ON api_keys(account_id);
        CREATE INDEX api_keys_prefix ON api_keys(prefix);
      `,
    },
  },
  {
    version: 2,
    name: "plans_ledger_reservations_rate_limits_idempotency",
    sql: {
      sqlite: `
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
      postgres: `
        CREATE TABLE plans (
          id                   TEXT PRIMARY KEY,
          name                 TEXT NOT NULL UNIQUE,
          requests_per_minute  BIGINT NOT NULL CHECK (requests_per_minute >= 1),
          allowance_questions  BIGINT NOT NULL CHECK (allowance_questions >= 0),
          price_per_million    BIGINT NOT NULL CHECK (price_per_million >= 0),
          created_at           BIGINT NOT NULL
        );

        INSERT INTO plans VALUES ('plan_default', 'default', 60, 1000, 50000, (extract(epoch FROM now()) * 1000)::bigint);

        -- The same last line of defence as on SQLite: a violation means a bug, and the transaction aborts.
        ALTER TABLE accounts ADD COLUMN plan_id TEXT NOT NULL DEFAULT 'plan_default' REFERENCES plans(id);
        ALTER TABLE accounts ADD COLUMN balance_micro BIGINT NOT NULL DEFAULT 0 CHECK (balance_micro >= 0);
        ALTER TABLE accounts ADD COLUMN reserved_micro BIGINT NOT NULL DEFAULT 0
          CHECK (reserved_micro >= 0 AND reserved_micro <= balance_micro);

        CREATE TABLE plan_usage (
          account_id    TEXT NOT NULL REFERENCES accounts(id),
          period_start  BIGINT NOT NULL,
          used          BIGINT NOT NULL DEFAULT 0 CHECK (used >= 0),
          reserved      BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
          PRIMARY KEY (account_id, period_start)
        );

        CREATE TABLE ledger (
          id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          account_id    TEXT NOT NULL REFERENCES accounts(id),
          at            BIGINT NOT NULL,
          kind          TEXT NOT NULL CHECK (kind IN ('top_up', 'charge', 'plan', 'adjustment')),
          amount_micro  BIGINT NOT NULL,
          questions     BIGINT NOT NULL DEFAULT 0,
          input_tokens  BIGINT NOT NULL DEFAULT 0,
          period_start  BIGINT,
          request_id    TEXT,
          note          TEXT
        );
        CREATE INDEX ledger_account ON ledger(account_id, id);
        -- Append-only, enforced by the database: no UPDATE, DELETE or TRUNCATE gets through.
        CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'the ledger is append-only'; END $$;
        CREATE TRIGGER ledger_no_update_or_delete BEFORE UPDATE OR DELETE ON ledger
          FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
        CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
          FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

        CREATE TABLE reservations (
          id            TEXT PRIMARY KEY,
          account_id    TEXT NOT NULL REFERENCES accounts(id),
          billed_to     TEXT NOT NULL CHECK (billed_to IN ('plan', 'balance')),
          questions     BIGINT NOT NULL,
          input_tokens  BIGINT NOT NULL,
          amount_micro  BIGINT NOT NULL,
          period_start  BIGINT NOT NULL,
          request_id    TEXT NOT NULL,
          created_at    BIGINT NOT NULL,
          expires_at    BIGINT NOT NULL
        );
        CREATE INDEX reservations_expires_at ON reservations(expires_at);

        CREATE TABLE rate_windows (
          account_id    TEXT NOT NULL,
          window_start  BIGINT NOT NULL,
          count         BIGINT NOT NULL,
          PRIMARY KEY (account_id, window_start)
        );

        CREATE TABLE idempotency_keys (
          account_id    TEXT NOT NULL,
          key           TEXT NOT NULL,
          request_hash  TEXT NOT NULL,
          owner         TEXT NOT NULL,
          state         TEXT NOT NULL CHECK (state IN ('running', 'done')),
          response      TEXT,
          created_at    BIGINT NOT NULL,
          expires_at    BIGINT NOT NULL,
          PRIMARY KEY (account_id, key)
        );
        CREATE INDEX idempotency_keys_expires_at ON idempotency_keys(expires_at);
      `,
    },
  },
  {
    version: 3,
    name: "rate_windows_by_key",
    sql: { sqlite: RATE_WINDOWS_BY_KEY, postgres: RATE_WINDOWS_BY_KEY },
  },
  {
    version: 4,
    name: "ledger_by_time",
    // The console's overview totals today's and this month's entries: without it, a scan of the whole ledger.
    sql: { sqlite: LEDGER_BY_TIME, postgres: LEDGER_BY_TIME },
  },
  { version: 5, name: AUDIT_MIGRATION_NAME, sql: AUDIT_MIGRATION_SQL },
  { version: 6, ...KEY_LIMITS_MIGRATION },
  { version: 7, ...CONSOLE_MIGRATION },
  { version: 8, ...MODELS_MIGRATION },
];
