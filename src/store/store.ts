import { createAccountsRepository } from "./accounts.js";
import { createAdminTokensRepository } from "./admin-tokens.js";
import { createAuditRepository } from "./audit.js";
import { createBillingRepository } from "./billing.js";
import type { Database } from "./database.js";
import { createIdempotencyRepository } from "./idempotency.js";
import { createKeysRepository } from "./keys.js";
import { createLedgerRepository } from "./ledger.js";
import { migrate } from "./migrate.js";
import { createPlansRepository } from "./plans.js";
import { isPostgresUrl, openPostgres } from "./postgres.js";
import { createRateWindowsRepository } from "./rate-windows.js";
import { createReportsRepository } from "./reports.js";
import { openSqlite } from "./sqlite.js";
import { createTasksRepository } from "./tasks.js";
import type { Store } from "./types.js";
import { existsSync } from "node:fs";
import { sql } from "kysely";
import { DatabaseMissingError, isStoreError } from "../record-errors.js";

/**
 * How long a reservation holds its charge before the sweeper gives it back. It must outlast
 * any request that is still running, so the server sets it from its request timeout.
 */
export const DEFAULT_RESERVATION_TTL_MS = 120_000;

export type {
  Account,
  AccountTerms,
  BilledTo,
  LedgerEntry,
  Plan,
  Reservation,
  Standing,
  StoredResponse,
  Usage,
  AccountsRepository,
  ApiKeyRecord,
  AuthenticatedKey,
  KeysRepository,
  Store,
} from "./types.js";

export interface StoreOptions {
  /** A SQLite file path (`:memory:` for a throwaway store) or a `postgres://…` URL. */
  location: string;
  /** PostgreSQL only: the schema holding the tables (default `public`). */
  schema?: string;
  /** PostgreSQL only: connections in the pool. */
  poolSize?: number;
  /** PostgreSQL only: longest a statement may take. */
  statementTimeoutMs?: number;
  /** PostgreSQL only: longest a query may wait for a connection (a burst queues for the pool). */
  connectTimeoutMs?: number;
  now?: () => number;
  reservationTtlMs?: number;
  /**
   * SQLite only: checkpoint the WAL from a thread of its own (sqlite-checkpointer.ts), so no
   * request waits for its fsyncs. The server asks for it; short CLI commands need not.
   */
  backgroundCheckpoints?: boolean;
  /** Told of every repository method's time and error code (metrics); nothing else watches the store. */
  observe?: StoreObserver;
  /**
   * Refuse a database that is not already this service's (a missing SQLite file, a PostgreSQL
   * schema without its tables) instead of creating it: a mistyped location must not look like
   * an empty database. Administration opens with it; the server creates.
   */
  mustExist?: boolean;
}

/** `operation` is "repository.method"; `errorCode` is the StoreError code it threw ("unknown" for anything else). */
export type StoreObserver = (operation: string, seconds: number, errorCode?: string) => void;

/** Opens the database (SQLite or PostgreSQL, by `location`), migrates it, and returns the repositories over it. */
export async function createStore(options: StoreOptions): Promise<Store> {
  const postgres = isPostgresUrl(options.location);
  if (options.mustExist && !postgres && isMissingFile(options.location)) {
    throw new DatabaseMissingError(`no database at ${options.location}: the file does not exist`);
  }
  const database = postgres
    ? await openPostgres({ url: options.location, ...options })
    : openSqlite(options.location, { create: !options.mustExist, backgroundCheckpoints: options.backgroundCheckpoints });
  try {
    if (options.mustExist) await guarded(database, () => requireOurTables(database, options.schema))();
    await guarded(database, () => migrate(database))();
    return storeOver(database, options);
  } catch (error) {
    await database.close();
    throw error;
  }
}

function isMissingFile(path: string): boolean {
  return path !== ":memory:" && path !== "" && !existsSync(path);
}

/** Every database of this service has the migrations table, from its first start on. */
async function requireOurTables(database: Database, schema = "public"): Promise<void> {
  const found =
    database.dialect === "sqlite"
      ? await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`.execute(database.db)
      : await sql<{ name: string }>`SELECT to_regclass('schema_migrations')::text AS name`.execute(database.db);
  if (found.rows[0]?.name) return;
  const where = database.dialect === "sqlite" ? database.location : `schema ${JSON.stringify(schema)} of ${database.location}`;
  throw new DatabaseMissingError(`no database of this service in ${where}: it has none of its tables`);
}

function storeOver(database: Database, options: StoreOptions): Store {
  const now = options.now ?? Date.now;
  const ttl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  const guard = <R extends object>(name: string, repository: R) => guardAll(database, repository, observed(name, options.observe));
  const plans = guard("plans", createPlansRepository(database, now));
  return {
    dialect: database.dialect,
    location: database.location,
    accounts: guard("accounts", createAccountsRepository(database, now, plans)),
    keys: guard("keys", createKeysRepository(database, now)),
    plans,
    billing: guard("billing", createBillingRepository(database, now, ttl)),
    ledger: guard("ledger", createLedgerRepository(database, now)),
    rateWindows: guard("rateWindows", createRateWindowsRepository(database, now)),
    idempotency: guard("idempotency", createIdempotencyRepository(database, now, ttl)),
    audit: guard("audit", createAuditRepository(database)),
    adminTokens: guard("adminTokens", createAdminTokensRepository(database, now)),
    reports: guard("reports", createReportsRepository(database, now)),
    tasks: guard("tasks", createTasksRepository(database, now)),
    ping: () => database.ping(),
    close: () => database.close(),
  };
}

/**
 * Every repository method, with driver errors translated: a database that is down or too slow
 * surfaces as StoreError "database_unavailable" (502 at the edge), whichever method met it.
 */
function guardAll<R extends object>(database: Database, repository: R, observe?: (method: string) => MethodObserver): R {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, value] of Object.entries(repository)) {
    wrapped[name] = typeof value === "function" ? guarded(database, value as (...args: unknown[]) => Promise<unknown>, observe?.(name)) : value;
  }
  return wrapped as R;
}

type MethodObserver = (seconds: number, errorCode?: string) => void;

function observed(repository: string, observe: StoreObserver | undefined) {
  return (
    observe &&
    ((method: string): MethodObserver =>
      (seconds, errorCode) =>
        observe(`${repository}.${method}`, seconds, errorCode))
  );
}

function guarded<A extends unknown[], T>(database: Database, method: (...args: A) => Promise<T>, observe?: MethodObserver): (...args: A) => Promise<T> {
  return async (...args) => {
    const started = performance.now();
    try {
      const result = await method(...args);
      observe?.((performance.now() - started) / 1000);
      return result;
    } catch (error) {
      const translated = database.translate(error);
      observe?.((performance.now() - started) / 1000, isStoreError(translated) ? translated.code : "unknown");
      throw translated;
    }
  };
}
