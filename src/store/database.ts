import type { Kysely } from "kysely";
import type { Tables } from "./schema.js";

export type Queries = Kysely<Tables>;
export type DialectName = "sqlite" | "postgres";

/**
 * One open database, SQLite or PostgreSQL. The repositories write their SQL once against
 * `db` (Kysely); what truly differs between the engines lives behind this interface, written
 * once per engine in sqlite.ts and postgres.ts: how a transaction starts, how a migration
 * script runs, and what the driver's error codes mean.
 */
export interface Database {
  readonly dialect: DialectName;
  /** Where it is, for messages: a file path, or a URL without its password. */
  readonly location: string;
  readonly db: Queries;
  /**
   * Runs `work` in one transaction: BEGIN IMMEDIATE on SQLite (one writer at a time, across
   * processes), READ COMMITTED on PostgreSQL. Every debit inside is a single conditional
   * statement, so neither engine needs more isolation than that.
   */
  transaction<T>(work: (trx: Queries) => Promise<T>): Promise<T>;
  /** A migration: takes the migration lock, then runs the script (several statements). */
  lockForMigration(trx: Queries): Promise<void>;
  runScript(trx: Queries, script: string): Promise<void>;
  /** A driver error as the store reports it: a StoreError when it means something to a caller. */
  translate(error: unknown): unknown;
  isUniqueViolation(error: unknown): boolean;
  isForeignKeyViolation(error: unknown): boolean;
  /** Resolves when the database answers a trivial query; rejects with database_unavailable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
