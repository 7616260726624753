import type { Migration } from "./migration.js";

/**
 * Accounts that can be disabled (nothing deleted), admin tokens of their own (stored hashed,
 * revocable) and the audit log of admin actions, append-only like the ledger.
 */
const sql: Migration["sql"] = {
  sqlite: `
    ALTER TABLE accounts ADD COLUMN disabled_at INTEGER;

    CREATE TABLE admin_tokens (
      id            TEXT PRIMARY KEY,
      name          TEXT NOT NULL,
      prefix        TEXT NOT NULL,
      hash          TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
      created_at    INTEGER NOT NULL,
      last_used_at  INTEGER,
      revoked_at    INTEGER
    ) STRICT;
    -- A name names one active token; a revoked token's name can be given again.
    CREATE UNIQUE INDEX admin_tokens_active_name ON admin_tokens(name) WHERE revoked_at IS NULL;

    CREATE TABLE audit_log (
      id            INTEGER PRIMARY KEY AUTOINCREMENT,
      at            INTEGER NOT NULL,
      actor         TEXT NOT NULL,
      actor_token_id TEXT,
      action        TEXT NOT NULL,
      object_kind   TEXT NOT NULL,
      object_id     TEXT NOT NULL,
      account_id    TEXT,
      details       TEXT NOT NULL
    ) STRICT;
    CREATE INDEX audit_log_account ON audit_log(account_id, id);
    CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
      BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
      BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  `,
  postgres: `
    ALTER TABLE accounts ADD COLUMN disabled_at BIGINT;

    CREATE TABLE admin_tokens (
      id            TEXT PRIMARY KEY,
      name          TEXT NOT NULL,
      prefix        TEXT NOT NULL,
      hash          TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
      created_at    BIGINT NOT NULL,
      last_used_at  BIGINT,
      revoked_at    BIGINT
    );
    CREATE UNIQUE INDEX admin_tokens_active_name ON admin_tokens(name) WHERE revoked_at IS NULL;

    CREATE TABLE audit_log (
      id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at            BIGINT NOT NULL,
      actor         TEXT NOT NULL,
      actor_token_id TEXT,
      action        TEXT NOT NULL,
      object_kind   TEXT NOT NULL,
      object_id     TEXT NOT NULL,
      account_id    TEXT,
      details       TEXT NOT NULL
    );
    CREATE INDEX audit_log_account ON audit_log(account_id, id);
    CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
    CREATE TRIGGER audit_log_no_update_or_delete BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
  `,
};

export const migration: Migration = { version: 5, name: "accounts_disabled_admin_tokens_audit_log", sql };
