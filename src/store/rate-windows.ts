import type { Database } from "./database.js";
import type { RateWindowsRepository } from "./types.js";

/** Fixed-window counters shared by every process and instance on the same database. */
export function createRateWindowsRepository(database: Database): RateWindowsRepository {
  // One conditional statement: the count only grows while it is under the limit. Every request
  // runs it, so it is plain SQL (see Statement in database.ts).
  const increment = database.statement<{ count: number }>(
    `INSERT INTO rate_windows ("key", window_start, "count") VALUES (?, ?, 1)
     ON CONFLICT ("key", window_start) DO UPDATE SET "count" = rate_windows."count" + 1 WHERE rate_windows."count" < ?
     RETURNING "count"`,
  );
  return {
    async increment({ key, windowStart, limit }) {
      const [row] = await increment.all(database.db, [key, windowStart, limit]);
      return row?.count;
    },
  };
}
