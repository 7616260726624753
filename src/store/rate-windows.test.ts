import { afterEach, describe, expect, it } from "vitest";
import { createDatabaseLimiter } from "../limits/database-limiter.js";
import { createLimitsService } from "../services/limits.js";
import { billingStores, JAN_31, payerOf, type BillingFixture } from "../testing/billing-store.js";
import { STORE_ENGINES, type TestDatabase } from "../testing/databases.js";

/**
 * The database's rate windows (store.rateWindows, what the database limiter counts in), and the
 * per-minute policy of services/limits.ts over them: one-minute windows per account, offset by
 * its creation time, Retry-After, reset, forgetting. The limiter mechanism on every backend is
 * tested in src/limits/limiter.test.ts.
 */

/** How long the sweeper keeps a window after it starts (RATE_WINDOW_RETENTION_MS in rate-windows.ts). */
const RETENTION_MS = 10 * 60_000;

async function windows(database: TestDatabase) {
  const raw = await database.raw();
  try {
    return await raw.db.selectFrom("rate_windows").selectAll().orderBy("window_start").orderBy("key").execute();
  } finally {
    await raw.close();
  }
}

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  describe("rate windows", () => {
    it("count up to the limit, then refuse without counting", async () => {
      const t = await stores.open();
      const counts = [];
      for (let i = 0; i < 5; i++) counts.push(await t.store.rateWindows.increment({ key: "k", windowStart: 60_000, limit: 3 }));
      expect(counts, JSON.stringify(counts)).toEqual([1, 2, 3, undefined, undefined]);
      expect(await windows(t.database)).toEqual([{ key: "k", window_start: 60_000, count: 3 }]);
    });

    it("count each key and each window on its own", async () => {
      const t = await stores.open();
      const increment = (key: string, windowStart: number) => t.store.rateWindows.increment({ key, windowStart, limit: 2 });
      const seen = [];
      for (const [key, start] of [
        ["a", 0],
        ["a", 0],
        ["a", 0],
        ["b", 0],
        ["a", 60_000],
        ["b", 0],
        ["b", 0],
      ] as const) {
        seen.push([key, start, await increment(key, start)]);
      }
      expect(seen, JSON.stringify(seen)).toEqual([
        ["a", 0, 1],
        ["a", 0, 2],
        ["a", 0, undefined],
        ["b", 0, 1],
        ["a", 60_000, 1],
        ["b", 0, 2],
        ["b", 0, undefined],
      ]);
      expect(await windows(t.database)).toEqual([
        { key: "a", window_start: 0, count: 2 },
        { key: "b", window_start: 0, count: 2 },
        { key: "a", window_start: 60_000, count: 1 },
      ]);
    });

    it("a lowered limit refuses at once; a raised one counts on from where the window was", async () => {
      const t = await stores.open();
      const increment = (limit: number) => t.store.rateWindows.increment({ key: "k", windowStart: 0, limit });
      const seen = [await increment(5), await increment(5), await increment(5), await increment(2), await increment(4), await increment(4)];
      expect(seen, JSON.stringify(seen)).toEqual([1, 2, 3, undefined, 4, undefined]);
    });

    it("concurrent increments from two instances never count past the limit, and each count is given once", async () => {
      const t = await stores.open();
      const second = await t.database.store();
      const counts = await Promise.all(
        Array.from({ length: 30 }, (_, i) => [t.store, second][i % 2]!.rateWindows.increment({ key: "k", windowStart: 0, limit: 10 })),
      );
      const given = counts.filter((count) => count !== undefined).sort((x, y) => x! - y!);
      expect(given, JSON.stringify(counts)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await windows(t.database)).toEqual([{ key: "k", window_start: 0, count: 10 }]);
    });
  });

  describe("requests per minute (services/limits.ts over the database limiter)", () => {
    async function setup(requestsPerMinute: number) {
      // JAN_31 is a whole minute, so this account's windows start on whole minutes.
      const t = await stores.open({ start: JAN_31, plan: { requestsPerMinute } });
      const limits = createLimitsService(createDatabaseLimiter(t.store.rateWindows, { now: t.clock.now, ping: () => t.store.ping() }));
      // The payer is read at every hit, as authentication reads the terms at every request.
      const hit = async (accountId = t.accountId) => limits.perMinute(await payerOf(t.store, accountId));
      const at = (msAfterStart: number) => t.clock.advance(JAN_31 + msAfterStart - t.clock.now());
      return { ...t, hit, at };
    }
    const windowsOf = (t: BillingFixture) => windows(t.database);

    it("let exactly `limit` attempts through in a window, counting down, and count no further", async () => {
      const t = await setup(3);
      const decisions = [];
      for (let i = 0; i < 6; i++) decisions.push(await t.hit());
      expect(decisions, JSON.stringify(decisions)).toEqual([
        { allowed: true, scope: "plan", limit: 3, remaining: 2, resetSeconds: 60 },
        { allowed: true, scope: "plan", limit: 3, remaining: 1, resetSeconds: 60 },
        { allowed: true, scope: "plan", limit: 3, remaining: 0, resetSeconds: 60 },
        { allowed: false, scope: "plan", limit: 3, remaining: 0, resetSeconds: 60 },
        { allowed: false, scope: "plan", limit: 3, remaining: 0, resetSeconds: 60 },
        { allowed: false, scope: "plan", limit: 3, remaining: 0, resetSeconds: 60 },
      ]);
      expect(await windowsOf(t)).toEqual([{ key: `rpm:${t.accountId}`, window_start: JAN_31, count: 3 }]);
    });

    it("Retry-After shrinks with the clock, is never 0, and the window resets at its end to the millisecond", async () => {
      const t = await setup(2);
      await t.hit();
      await t.hit();
      const seen = [];
      for (const ms of [0, 1, 500, 15_000, 44_999, 58_000, 59_000, 59_001, 59_999]) {
        t.at(ms);
        const decision = await t.hit();
        expect(decision.allowed, `at +${ms} ms: ${JSON.stringify(decision)}`).toBe(false);
        seen.push([ms, decision.resetSeconds]);
      }
      expect(seen).toEqual([
        [0, 60],
        [1, 60],
        [500, 60],
        [15_000, 45],
        [44_999, 16],
        [58_000, 2],
        [59_000, 1],
        [59_001, 1],
        [59_999, 1],
      ]);
      t.at(60_000);
      expect(await t.hit(), "a new window").toEqual({ allowed: true, scope: "plan", limit: 2, remaining: 1, resetSeconds: 60 });
      t.at(60_000 + 30_000);
      expect(await t.hit()).toEqual({ allowed: true, scope: "plan", limit: 2, remaining: 0, resetSeconds: 30 });
      expect(await t.hit()).toEqual({ allowed: false, scope: "plan", limit: 2, remaining: 0, resetSeconds: 30 });
    });

    it("offset each account's windows by its creation time within the minute", async () => {
      const t = await setup(1);
      t.at(25_250);
      const other = await t.store.accounts.create({ name: "created 25.25 s later", plan: t.planId });
      t.at(30_000);
      expect([await t.hit(), await t.hit(other.id)]).toMatchObject([{ allowed: true }, { allowed: true }]);
      expect([await t.hit(), await t.hit(other.id)]).toMatchObject([
        { allowed: false, resetSeconds: 30 },
        { allowed: false, resetSeconds: 56 }, // its window ends at +85.25 s
      ]);
      t.at(60_000);
      expect([await t.hit(), await t.hit(other.id)]).toMatchObject([
        { allowed: true, remaining: 0 },
        { allowed: false, resetSeconds: 26 },
      ]);
      t.at(85_249);
      expect(await t.hit(other.id)).toMatchObject({ allowed: false, resetSeconds: 1 });
      t.at(85_250);
      expect(await t.hit(other.id)).toMatchObject({ allowed: true, resetSeconds: 60 });
      expect((await windowsOf(t)).map((w) => [w.key, w.window_start])).toEqual([
        [`rpm:${t.accountId}`, JAN_31],
        [`rpm:${other.id}`, JAN_31 + 25_250],
        [`rpm:${t.accountId}`, JAN_31 + 60_000],
        [`rpm:${other.id}`, JAN_31 + 85_250],
      ]);
    });

    it("count each account on its own", async () => {
      const t = await setup(1);
      const other = await t.store.accounts.create({ name: "other", plan: t.planId });
      expect(await t.hit()).toMatchObject({ allowed: true });
      expect(await t.hit()).toMatchObject({ allowed: false });
      expect(await t.hit(other.id), "another account of the same plan").toMatchObject({ allowed: true, remaining: 0 });
    });

    it("a plan's new limit applies to the current window at once", async () => {
      const t = await setup(5);
      await t.hit();
      await t.hit();
      await t.hit();
      await t.store.plans.update(t.planId, { requestsPerMinute: 2 });
      expect(await t.hit(), "already past the lowered limit").toMatchObject({ allowed: false, scope: "plan", limit: 2, remaining: 0 });
      await t.store.plans.update(t.planId, { requestsPerMinute: 4 });
      expect(await t.hit()).toMatchObject({ allowed: true, scope: "plan", limit: 4, remaining: 0 });
      expect(await t.hit()).toMatchObject({ allowed: false, limit: 4 });
    });

    it("the sweeper forgets windows that started more than ten minutes ago, and only those", async () => {
      const t = await setup(10);
      await t.hit(); // window at +0
      t.at(60_000);
      await t.hit(); // window at +60 s
      t.at(120_000);
      await t.hit(); // window at +120 s
      t.at(RETENTION_MS);
      expect(await t.store.rateWindows.sweep(), "exactly ten minutes after the first window started").toBe(0);
      t.at(RETENTION_MS + 1);
      expect(await t.store.rateWindows.sweep(), "the window that started over ten minutes ago").toBe(1);
      expect((await windowsOf(t)).map((w) => w.window_start)).toEqual([JAN_31 + 60_000, JAN_31 + 120_000]);
      t.at(RETENTION_MS + 60_001);
      expect(await t.store.rateWindows.sweep()).toBe(1);
      expect(await windowsOf(t)).toEqual([{ key: `rpm:${t.accountId}`, window_start: JAN_31 + 120_000, count: 1 }]);
    });
  });
});
