import type { Database } from "./database.js";
import type { RateWindowsRepository } from "./types.js";

/** Rate windows are forgotten this long after they start (the limiter's windows are a minute). */
export const RATE_WINDOW_RETENTION_MS = 10 * 60_000;

/** Fixed-window counters shared by every process and instance on the same database. */
export function createRateWindowsRepository(database: Database, now: () => number): RateWindowsRepository {
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
    async sweep() {
      const old = await database.db
        .deleteFrom("rate_windows")
        .where("window_start", "<", now() - RATE_WINDOW_RETENTION_MS)
        .executeTakeFirst();
      return Number(old.numDeletedRows);
    },
  };
}
