import type { Database } from "./db.js";
import type { RateLimitsRepository } from "./types.js";

const WINDOW_MS = 60_000;

/**
 * Fixed one-minute windows per account, counted in the database so every process serving the
 * same file shares them. Each account's windows are offset by its creation time within the
 * minute, so limited clients do not all come back at the same second.
 */
export function createRateLimitsRepository(db: Database, now: () => number): RateLimitsRepository {
  const accountOf = db.prepare<[string], { limit: number; created_at: number }>(
    `SELECT p.requests_per_minute AS "limit", a.created_at
     FROM accounts a JOIN plans p ON p.id = a.plan_id WHERE a.id = ?`,
  );
  // One conditional statement: the count only grows while it is under the limit.
  const count = db
    .prepare<[{ account: string; window: number; limit: number }], number>(
      `INSERT INTO rate_windows (account_id, window_start, count) VALUES (@account, @window, 1)
       ON CONFLICT (account_id, window_start) DO UPDATE SET count = count + 1 WHERE count < @limit
       RETURNING count`,
    )
    .pluck();

  return {
    hit(accountId) {
      const account = accountOf.get(accountId);
      if (!account) return undefined;
      const { limit } = account;
      const at = now();
      const offset = account.created_at % WINDOW_MS;
      const windowStart = Math.floor((at - offset) / WINDOW_MS) * WINDOW_MS + offset;
      const counted = count.get({ account: accountId, window: windowStart, limit });
      const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_MS - at) / 1000));
      if (counted === undefined) return { allowed: false, limit, remaining: 0, resetSeconds };
      return { allowed: true, limit, remaining: limit - counted, resetSeconds };
    },
  };
}
