import { createAccountsRepository } from "./accounts.js";
import { createBillingRepository } from "./billing.js";
import { openDatabase } from "./db.js";
import { createIdempotencyRepository } from "./idempotency.js";
import { createKeysRepository } from "./keys.js";
import { createLedgerRepository } from "./ledger.js";
import { createPlansRepository } from "./plans.js";
import { createRateLimitsRepository } from "./rate-limits.js";
import type { Store } from "./types.js";

/**
 * How long a reservation holds its charge before the sweeper gives it back. It must outlast
 * any request that is still running, so the server sets it from its request timeout.
 */
export const DEFAULT_RESERVATION_TTL_MS = 120_000;

export type {
  Account,
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

/**
 * Opens the database at `path` (`:memory:` for a throwaway store), migrates it, and returns
 * the repositories over it. New areas (plans, balances, ledger…) get their own migration and
 * their own `createXRepository(db, now)` file, wired in here.
 */
export function createStore(options: { path: string; now?: () => number; reservationTtlMs?: number }): Store {
  const db = openDatabase(options.path);
  const now = options.now ?? Date.now;
  const ttl = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  try {
    const plans = createPlansRepository(db, now);
    return {
      accounts: createAccountsRepository(db, now, plans),
      keys: createKeysRepository(db, now),
      plans,
      billing: createBillingRepository(db, now, ttl),
      ledger: createLedgerRepository(db, now),
      rateLimits: createRateLimitsRepository(db, now),
      idempotency: createIdempotencyRepository(db, now, ttl),
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
