import { createAccountsRepository } from "./accounts.js";
import { createBillingRepository } from "./billing.js";
import type { Database } from "./database.js";
import { createIdempotencyRepository } from "./idempotency.js";
import { createKeysRepository } from "./keys.js";
import { createLedgerRepository } from "./ledger.js";
import { migrate } from "./migrations.js";
import { createPlansRepository } from "./plans.js";
import { isPostgresUrl, openPostgres } from "./postgres.js";
import { createRateWindowsRepository } from "./rate-windows.js";
import { openSqlite } from "./sqlite.js";
import type { Store } from "./types.js";

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
export { StoreError, isStoreError, type StoreErrorCode } from "./errors.js";

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
}

/** Opens the database (SQLite or PostgreSQL, by `location`), migrates it, and returns the repositories over it. */
export async function createStore(options: StoreOptions): Promise<Store> {
  const database = isPostgresUrl(options.location)
    ? await openPostgres({ url: options.location, ...options })
    : openSqlite(options.location);
  try {
    await guarded(database, () => migrate(database))();
    return storeOver(database, options);
  } catch (error) {
    await database.close();
    throw error;
  }
}

function storeOver(database: Database, options: StoreOptions): Store {
  const now = options.now ?? Date.now;
  const ttl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  const plans = guardAll(database, createPlansRepository(database, now));
  return {
    dialect: database.dialect,
    location: database.location,
    accounts: guardAll(database, createAccountsRepository(database, now, plans)),
    keys: guardAll(database, createKeysRepository(database, now)),
    plans,
    billing: guardAll(database, createBillingRepository(database, now, ttl)),
    ledger: guardAll(database, createLedgerRepository(database, now)),
    rateWindows: guardAll(database, createRateWindowsRepository(database)),
    idempotency: guardAll(database, createIdempotencyRepository(database, now, ttl)),
    ping: () => database.ping(),
    close: () => database.close(),
  };
}

/**
 * Every repository method, with driver errors translated: a database that is down or too slow
 * surfaces as StoreError "database_unavailable" (502 at the edge), whichever method met it.
 */
function guardAll<R extends object>(database: Database, repository: R): R {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, value] of Object.entries(repository)) {
    wrapped[name] = typeof value === "function" ? guarded(database, value as (...args: unknown[]) => Promise<unknown>) : value;
  }
  return wrapped as R;
}

function guarded<A extends unknown[], T>(database: Database, method: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  return async (...args) => {
    try {
      return await method(...args);
    } catch (error) {
      throw database.translate(error);
    }
  };
}
