import type { Migration } from "./migration.js";

/** The first tables: accounts and their API keys (stored hashed). */
export const migration: Migration = {
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
};
