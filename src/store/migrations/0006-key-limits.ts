import type { Migration } from "./migration.js";

/**
 * Keys with limits of their own (issue 21). Every limit is NULL for "none", so every key that
 * existed before this migration stays unlimited. `spent_micro` counts the euros charged through
 * the key from here on; `held_micro` what requests in flight hold against it. A budget is checked
 * in the same conditional UPDATE that takes the hold (spent + held + amount <= budget), exactly
 * as the balance is, so concurrent requests on any number of instances can never overspend it.
 * `reservations.key_id` names the key a balance hold was also taken on (NULL: none).
 */
const sqlite = `
  ALTER TABLE api_keys ADD COLUMN requests_per_minute INTEGER CHECK (requests_per_minute >= 1);
  ALTER TABLE api_keys ADD COLUMN budget_micro INTEGER CHECK (budget_micro >= 0);
  ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
  ALTER TABLE api_keys ADD COLUMN spent_micro INTEGER NOT NULL DEFAULT 0 CHECK (spent_micro >= 0);
  ALTER TABLE api_keys ADD COLUMN held_micro INTEGER NOT NULL DEFAULT 0 CHECK (held_micro >= 0);
  ALTER TABLE reservations ADD COLUMN key_id TEXT;
`;

const postgres = `
  ALTER TABLE api_keys ADD COLUMN requests_per_minute BIGINT CHECK (requests_per_minute >= 1);
  ALTER TABLE api_keys ADD COLUMN budget_micro BIGINT CHECK (budget_micro >= 0);
  ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
  ALTER TABLE api_keys ADD COLUMN spent_micro BIGINT NOT NULL DEFAULT 0 CHECK (spent_micro >= 0);
  ALTER TABLE api_keys ADD COLUMN held_micro BIGINT NOT NULL DEFAULT 0 CHECK (held_micro >= 0);
  ALTER TABLE reservations ADD COLUMN key_id TEXT;
`;

export const migration: Migration = { version: 6, name: "key_limits", sql: { sqlite, postgres } };
