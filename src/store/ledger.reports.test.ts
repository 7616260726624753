import { afterEach, describe, expect, it } from "vitest";
import { billingStores, JAN_31, type BillingFixture } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";

/** What the console reads from the ledger: pages of entries, an account's days, everyone's activity. */

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  /** Settles one judgment now; the plan (allowance 3, 1 µ€ a token) decides whether the balance pays. */
  async function judge(t: BillingFixture, questions: number, inputTokens: number) {
    await t.billing.settle(await t.billing.reserve(await t.payer(), { questions, inputTokens, requestId: "req_t" }));
  }

  const open = () => stores.open({ plan: { allowanceQuestions: 3, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });

  describe("entryPage()", () => {
    it("pages back through the entries, newest first, and says when a page is the last", async () => {
      const t = await open();
      for (let i = 1; i <= 4; i++) await t.store.ledger.topUp(t.accountId, i, `top-up ${i}`);
      const notes = (page: { entries: { note: string | null }[] }) => page.entries.map((entry) => entry.note);
      const first = await t.store.ledger.entryPage(t.accountId, { limit: 2 });
      expect(notes(first)).toEqual(["top-up 4", "top-up 3"]);
      expect(first.nextBefore).toBe(first.entries[1].id);
      const second = await t.store.ledger.entryPage(t.accountId, { limit: 2, before: first.nextBefore! });
      expect(notes(second)).toEqual(["top-up 2", "top-up 1"]);
      const last = await t.store.ledger.entryPage(t.accountId, { limit: 2, before: second.nextBefore! });
      expect(notes(last)).toEqual(["test balance"]);
      expect(last.nextBefore, "nothing is older than the first entry").toBeNull();
      const exact = await t.store.ledger.entryPage(t.accountId, { limit: 5 });
      expect([exact.entries.length, exact.nextBefore], "a last page exactly full").toEqual([5, null]);
    });
  });

  describe("usageByDay()", () => {
    it("sums each UTC day's judgments of the account: requests, questions, tokens, euros charged", async () => {
      const t = await open(); // the clock: 31 January 10:00 UTC
      await judge(t, 1, 10); // plan
      t.clock.advance(13 * HOUR + 59 * 60_000); // 23:59, still 31 January
      await judge(t, 1, 20); // plan
      t.clock.advance(2 * 60_000); // 1 February 00:01
      await judge(t, 2, 300); // 1 of the allowance left: the balance pays 300 µ€
      t.clock.advance(2 * DAY); // 3 February: 2 February saw nothing
      await judge(t, 1, 40); // plan
      await judge(t, 1, 50); // allowance spent: 50 µ€
      await t.store.ledger.topUp(t.accountId, 7); // not a judgment
      await t.billing.reserve(await t.payer(), { questions: 1, inputTokens: 60, requestId: "req_held" }); // in flight: not yet used

      const days = await t.store.ledger.usageByDay(t.accountId, { start: JAN_31, end: JAN_31 + 31 * DAY });
      expect(days).toEqual([
        { day: Date.UTC(2026, 0, 31), requests: 2, questions: 2, inputTokens: 30, chargedMicro: 0 },
        { day: Date.UTC(2026, 1, 1), requests: 1, questions: 2, inputTokens: 300, chargedMicro: 300 },
        { day: Date.UTC(2026, 1, 3), requests: 2, questions: 2, inputTokens: 90, chargedMicro: 50 },
      ]);
    });

    it("leaves out entries before the start, at or after the end, and of other accounts", async () => {
      const t = await open();
      await judge(t, 1, 10);
      t.clock.advance(HOUR);
      await judge(t, 1, 20);
      t.clock.advance(HOUR);
      await judge(t, 1, 30);
      const other = await t.store.accounts.create({ name: "other", plan: t.planId });
      expect(await t.store.ledger.usageByDay(other.id, { start: JAN_31, end: JAN_31 + DAY })).toEqual([]);
      const middle = await t.store.ledger.usageByDay(t.accountId, { start: JAN_31 + 1, end: JAN_31 + 2 * HOUR });
      expect(middle).toEqual([{ day: Date.UTC(2026, 0, 31), requests: 1, questions: 1, inputTokens: 20, chargedMicro: 0 }]);
    });
  });

  describe("activity()", () => {
    it("sums every account's judgments and top-ups in the range, and zeros for an empty one", async () => {
      const t = await open(); // its top-up of €1 is at JAN_31
      await judge(t, 3, 100); // plan
      const other = await t.store.accounts.create({ name: "other", plan: t.planId });
      const otherT = { ...t, accountId: other.id, payer: async () => ({ ...(await t.payer()), accountId: other.id }) };
      await t.store.ledger.topUp(other.id, 500);
      await judge(otherT, 4, 200); // over its allowance of 3: the balance pays 200 µ€
      t.clock.advance(DAY);
      await judge(t, 1, 1_000); // tomorrow: 1,000 µ€, outside today's range

      const today = await t.store.ledger.activity({ start: JAN_31, end: JAN_31 + DAY });
      expect(today).toEqual({ requests: 2, questions: 7, inputTokens: 300, chargedMicro: 200n, toppedUpMicro: 1_000_500n });
      const all = await t.store.ledger.activity({ start: 0, end: JAN_31 + 2 * DAY });
      expect(all).toMatchObject({ requests: 3, questions: 8, chargedMicro: 1_200n });
      const none = await t.store.ledger.activity({ start: 0, end: JAN_31 });
      expect(none).toEqual({ requests: 0, questions: 0, inputTokens: 0, chargedMicro: 0n, toppedUpMicro: 0n });
    });
  });
});
