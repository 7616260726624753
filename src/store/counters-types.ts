import type { StoredResponse } from "./billing-types.js";

/** The rate windows' and the idempotency keys' repositories (rate-windows.ts, idempotency.ts); re-exported by types.ts. */

/** Fixed-window counters in the database, for the rate limiter when there is no Redis. */
export interface RateWindowsRepository {
  /** Counts one more in `key`'s window, unless it already reached `limit`: the new count, or undefined. */
  increment(input: { key: string; windowStart: number; limit: number }): Promise<number | undefined>;
  /** Forgets the windows that started over RATE_WINDOW_RETENTION_MS ago: how many. */
  sweep(): Promise<number>;
}

export type IdempotencyClaim = { kind: "claimed" } | { kind: "replay"; response: StoredResponse } | { kind: "running" } | { kind: "mismatch" };

export interface IdempotencyRepository {
  claim(input: { accountId: string; key: string; requestHash: string; owner: string }): Promise<IdempotencyClaim>;
  /** Forgets a claim whose request failed, so a retry runs again (failures charge nothing). */
  abandon(input: { accountId: string; key: string; owner: string }): Promise<void>;
  /** Forgets the keys past their expiry (a replay's 24 hours, a running claim's hold): how many. */
  sweep(): Promise<number>;
}
