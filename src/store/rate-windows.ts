import { sql } from "kysely";
import type { Database } from "./database.js";
import type { RateWindowsRepository } from "./types.js";

/** Fixed-window counters shared by every process and instance on the same database. */
export function createRateWindowsRepository(database: Database): RateWindowsRepository {
  return {
    // One conditional statement: the count only grows while it is under the limit.
    async increment({ key, windowStart, limit }) {
      const row = await database.db
        .insertInto("rate_windows")
        .values({ key, window_start: windowStart, count: 1 })
        .onConflict((oc) =>
          oc
            .columns(["key", "window_start"])
            .doUpdateSet({ count: sql`rate_windows.count + 1` })
            .where("rate_windows.count", "<", limit),
        )
        .returning("count")
        .executeTakeFirst();
      return row?.count;
    },
  };
}
