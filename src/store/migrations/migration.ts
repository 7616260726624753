import type { DialectName } from "../database.js";

/**
 * One schema change, written once per engine: DDL is where SQLite and PostgreSQL truly differ
 * (STRICT tables and INTEGER on SQLite, BIGINT and identity columns on PostgreSQL, and the
 * triggers that keep the ledger append-only). Both describe the same tables and constraints.
 */
export interface Migration {
  version: number;
  name: string;
  sql: Record<DialectName, string>;
}
