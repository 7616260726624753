import { windowStart, type RateLimiter } from "./types.js";

/** The store's window counters (RateWindowsRepository), by shape: limits does not import the store. */
export interface WindowCounters {
  increment(input: { key: string; windowStart: number; limit: number }): Promise<number | undefined>;
}

/**
 * Windows counted in the store's database (SQLite, or PostgreSQL when it is the store): exact
 * across every process and instance sharing it. Window boundaries come from this instance's
 * clock, so instances on PostgreSQL should keep their clocks in sync (NTP); with Redis, the
 * Redis server's clock decides instead.
 */
export function createDatabaseLimiter(counters: WindowCounters, options: { now?: () => number; ping: () => Promise<void> }): RateLimiter {
  const now = options.now ?? Date.now;
  return {
    kind: "database",
    async hit({ key, limit, windowMs, offsetMs }) {
      const at = now();
      const start = windowStart(at, windowMs, offsetMs);
      const count = await counters.increment({ key, windowStart: start, limit });
      const resetMs = Math.max(1, start + windowMs - at);
      if (count === undefined) return { allowed: false, limit, remaining: 0, resetMs };
      return { allowed: true, limit, remaining: limit - count, resetMs };
    },
    ping: options.ping,
    // The store owns the connection and closes it.
    close: async () => undefined,
  };
}
