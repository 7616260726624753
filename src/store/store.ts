import { createAccountsRepository } from "./accounts.js";
import { openDatabase } from "./db.js";
import { createKeysRepository } from "./keys.js";
import type { Store } from "./types.js";

export type {
  Account,
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
export function createStore(options: { path: string; now?: () => number }): Store {
  const db = openDatabase(options.path);
  const now = options.now ?? Date.now;
  try {
    return {
      accounts: createAccountsRepository(db, now),
      keys: createKeysRepository(db, now),
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
