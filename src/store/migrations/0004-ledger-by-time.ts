import type { Migration } from "./migration.js";

/** The console's overview totals today's and this month's entries: without it, a scan of the whole ledger. */
const LEDGER_BY_TIME = `CREATE INDEX ledger_at ON ledger(at);`;

export const migration: Migration = {
  version: 4,
  name: "ledger_by_time",
  sql: { sqlite: LEDGER_BY_TIME, postgres: LEDGER_BY_TIME },
};
