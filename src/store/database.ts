import type { Kysely } from "kysely";
import type { Tables } from "./schema.js";

export type Queries = Kysely<Tables>;
export type DialectName = "sqlite" | "postgres";

/**
 * One statement of the request path, written once in plain SQL that both engines accept (`?`
 * placeholders), prepared once and reused. Kysely builds and compiles a query anew on every call,
 * which cost the gateway more CPU than SQLite spent running the statements; the few statements
 * every request runs (key, rate window, hold, settle, idempotency) are written this way instead.
 */
export interface Statement<Row> {
  /**
   * Runs it on `q`: the database's own `db` (a statement of its own), or inside `transaction`
   * the handle `work` was given. Integer columns read back as checked safe integers, as with `db`.
   */
  all(q: Queries, params: readonly unknown[]): Promise<Row[]>;
}

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
  /** `text` uses `?` for parameters and no `?` anywhere else (PostgreSQL numbers them). */
  statement<Row>(text: string): Statement<Row>;
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
