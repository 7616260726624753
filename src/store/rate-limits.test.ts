import { afterEach, describe, expect, it } from "vitest";
import { JAN_31, openBillingStore, rawDb, type BillingFixture } from "../testing/billing-store.js";
import { useTempDir } from "./test-helpers.js";

/** Per-account one-minute windows: counting, Retry-After, reset, offsets, forgetting. */

const temp = useTempDir();
const open: BillingFixture[] = [];
afterEach(() => {
  for (const fixture of open.splice(0)) fixture.store.close();
  temp.cleanup();
});

function setup(requestsPerMinute: number) {
  // JAN_31 is a whole minute, so this account's windows start on whole minutes.
  const t = openBillingStore(temp.dir(), { start: JAN_31, plan: { requestsPerMinute } });
  open.push(t);
  const hit = (accountId = t.accountId) => t.store.rateLimits.hit(accountId);
  const windows = () => {
    const db = rawDb(t.path);
    try {
      return db.prepare("SELECT account_id, window_start, count FROM rate_windows ORDER BY window_start").all();
    } finally {
      db.close();
    }
  };
  const at = (msAfterStart: number) => t.clock.advance(JAN_31 + msAfterStart - t.clock.now());
  return { ...t, hit, windows, at };
}

describe("rate limits", () => {
  it("let exactly `limit` attempts through in a window, counting down, and count no further", () => {
    const t = setup(3);
    const decisions = Array.from({ length: 6 }, () => t.hit());
    expect(decisions, JSON.stringify(decisions)).toEqual([
      { allowed: true, limit: 3, remaining: 2, resetSeconds: 60 },
      { allowed: true, limit: 3, remaining: 1, resetSeconds: 60 },
      { allowed: true, limit: 3, remaining: 0, resetSeconds: 60 },
      { allowed: false, limit: 3, remaining: 0, resetSeconds: 60 },
      { allowed: false, limit: 3, remaining: 0, resetSeconds: 60 },
      { allowed: false, limit: 3, remaining: 0, resetSeconds: 60 },
    ]);
    expect(t.windows()).toEqual([{ account_id: t.accountId, window_start: JAN_31, count: 3 }]);
  });

  it("Retry-After shrinks with the clock, is never 0, and the window resets at its end to the millisecond", () => {
    const t = setup(2);
    t.hit();
    t.hit();
    const retryAfter = (ms: number) => {
      t.at(ms);
      const decision = t.hit()!;
      expect(decision.allowed, `at +${ms} ms: ${JSON.stringify(decision)}`).toBe(false);
      return decision.resetSeconds;
    };
    const seen = [0, 1, 500, 15_000, 44_999, 58_000, 59_000, 59_001, 59_999].map((ms) => [ms, retryAfter(ms)]);
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
    expect(t.hit(), "a new window").toEqual({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });
    t.at(60_000 + 30_000);
    expect(t.hit()).toEqual({ allowed: true, limit: 2, remaining: 0, resetSeconds: 30 });
    expect(t.hit()).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 30 });
  });

  it("offset each account's windows by its creation time within the minute", () => {
    const t = setup(1);
    t.at(25_250);
    const other = t.store.accounts.create({ name: "created 25.25 s later", plan: t.planId });
    t.at(30_000);
    expect([t.hit(), t.hit(other.id)]).toMatchObject([{ allowed: true }, { allowed: true }]);
    expect([t.hit(), t.hit(other.id)]).toMatchObject([
      { allowed: false, resetSeconds: 30 },
      { allowed: false, resetSeconds: 56 }, // its window ends at +85.25 s
    ]);
    t.at(60_000);
    expect([t.hit(), t.hit(other.id)]).toMatchObject([
      { allowed: true, remaining: 0 },
      { allowed: false, resetSeconds: 26 },
    ]);
    t.at(85_249);
    expect(t.hit(other.id)).toMatchObject({ allowed: false, resetSeconds: 1 });
    t.at(85_250);
    expect(t.hit(other.id)).toMatchObject({ allowed: true, resetSeconds: 60 });
  });

  it("count each account on its own; an unknown account gets no decision", () => {
    const t = setup(1);
    const other = t.store.accounts.create({ name: "other", plan: t.planId });
    expect(t.hit()).toMatchObject({ allowed: true });
    expect(t.hit()).toMatchObject({ allowed: false });
    expect(t.hit(other.id), "another account of the same plan").toMatchObject({ allowed: true, remaining: 0 });
    expect(t.hit("acct_nobody")).toBeUndefined();
  });

  it("a plan's new limit applies to the current window at once", () => {
    const t = setup(5);
    t.hit();
    t.hit();
    t.hit();
    t.store.plans.update(t.planId, { requestsPerMinute: 2 });
    expect(t.hit(), "already past the lowered limit").toMatchObject({ allowed: false, limit: 2, remaining: 0 });
    t.store.plans.update(t.planId, { requestsPerMinute: 4 });
    expect(t.hit()).toMatchObject({ allowed: true, limit: 4, remaining: 0 });
    expect(t.hit()).toMatchObject({ allowed: false, limit: 4 });
  });

  it("the sweeper forgets windows that ended more than a minute ago, and only those", () => {
    const t = setup(10);
    t.hit(); // window at +0
    t.at(60_000);
    t.hit(); // window at +60 s
    t.at(120_000);
    t.hit(); // window at +120 s
    t.at(180_000);
    expect(t.store.billing.sweep().rateWindows, "the window that started 3 minutes ago").toBe(1);
    expect(t.windows().map((w: any) => w.window_start)).toEqual([JAN_31 + 60_000, JAN_31 + 120_000]);
    t.at(180_001);
    expect(t.store.billing.sweep().rateWindows).toBe(1);
    expect(t.windows()).toEqual([{ account_id: t.accountId, window_start: JAN_31 + 120_000, count: 1 }]);
  });
});
