import type { Migration } from "./migration.js";

/** The rate limiter counts whatever key it is given, not only accounts. */
const RATE_WINDOWS_BY_KEY = `
      ALTER TABLE rate_windows RENAME COLUMN account_id TO key;
`;

export const migration: Migration = {
  version: 3,
  name: "rate_windows_by_key",
  sql: { sqlite: RATE_WINDOWS_BY_KEY, postgres: RATE_WINDOWS_BY_KEY },
};
