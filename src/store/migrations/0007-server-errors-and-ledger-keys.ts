import type { Migration } from "./migration.js";

/**
 * What the console shows beyond the ledger (issue 21). `server_errors` keeps every 5xx an
 * instance answered (the edge writes one row each, best effort), so the overview lists and
 * counts them across instances and restarts, unlike the per-process Prometheus counters; rows
 * older than the console's 30 days are pruned as new ones come. `ledger.key_id` names the API key
 * a judgment was made with (NULL for top-ups, adjustments and entries made before this migration).
 */
const sqlite = `
  CREATE TABLE server_errors (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    method      TEXT NOT NULL,
    route       TEXT NOT NULL,
    status      INTEGER NOT NULL,
    code        TEXT,
    request_id  TEXT
  ) STRICT;
  CREATE INDEX server_errors_at ON server_errors(at);
  ALTER TABLE ledger ADD COLUMN key_id TEXT;
`;

const postgres = `
  CREATE TABLE server_errors (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          BIGINT NOT NULL,
    method      TEXT NOT NULL,
    route       TEXT NOT NULL,
    status      BIGINT NOT NULL,
    code        TEXT,
    request_id  TEXT
  );
  CREATE INDEX server_errors_at ON server_errors(at);
  ALTER TABLE ledger ADD COLUMN key_id TEXT;
`;

export const migration: Migration = { version: 7, name: "server_errors_and_ledger_keys", sql: { sqlite, postgres } };
