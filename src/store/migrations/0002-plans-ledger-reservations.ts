import type { Migration } from "./migration.js";

/** Plans, the append-only ledger, the holds of requests in flight, rate-limit windows and Idempotency-Keys. */
export const migration: Migration = {
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
};
