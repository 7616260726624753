import { describe, expect, it } from "vitest";
import { billingHeadersOf, billingState, judgmentBody, moneyTables, useBillingServers } from "../../testing/billing-http.js";
import { JAN_31 } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { createStallingEngine } from "../../testing/stalling-engine.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";

/** The store's injectable clock through HTTP: the minute window and Retry-After, the allowance period. */

function limited(response: CapturedResponse): string {
  expectErrorResponse(response, 429, "rate_limited");
  const retryAfter = response.headers.get("retry-after");
  expect(retryAfter, show(response)).toBe(response.headers.get("x-ratelimit-reset"));
  expect(response.headers.get("x-ratelimit-remaining"), show(response)).toBe("0");
  return retryAfter!;
}

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const servers = useBillingServers({ store: engine });
  const { server } = servers;

  describe("the minute window", () => {
    it("Retry-After counts down with the clock and the window reopens at the account's own minute boundary", async () => {
      // Created 12.345 s past a whole minute: its windows start 12.345 s past each minute.
      const created = JAN_31 + 12_345;
      const s = await server({ start: created, plan: { requestsPerMinute: 3 } });
      const at = (ms: number) => s.setTime(created + ms);
      const remaining = [];
      for (let i = 0; i < 3; i++) {
        const r = await postJudgment(s, judgmentBody(1));
        expect(r.status, show(r)).toBe(200);
        remaining.push(r.headers.get("x-ratelimit-remaining"));
      }
      expect(remaining).toEqual(["2", "1", "0"]);
      const before = await moneyTables(s.database);

      const retryAfter: [number, string][] = [];
      for (const ms of [0, 1_000, 15_000, 30_500, 58_999, 59_000, 59_999]) {
        at(ms);
        retryAfter.push([ms, limited(await postJudgment(s, judgmentBody(1)))]);
      }
      expect(retryAfter).toEqual([
        [0, "60"],
        [1_000, "59"],
        [15_000, "45"],
        [30_500, "30"],
        [58_999, "2"],
        [59_000, "1"],
        [59_999, "1"],
      ]);
      expect(await moneyTables(s.database), "429s charge nothing").toEqual(before);

      at(60_000);
      const reopened = await postJudgment(s, judgmentBody(1));
      expect(reopened.status, show(reopened)).toBe(200);
      expect(billingHeadersOf(reopened), show(reopened)).toMatchObject({ "x-ratelimit-remaining": "2", "x-ratelimit-reset": "60" });
      at(60_000 + 45_000);
      const later = await postJudgment(s, judgmentBody(1));
      expect(billingHeadersOf(later), show(later)).toMatchObject({ "x-ratelimit-remaining": "1", "x-ratelimit-reset": "15" });
      await postJudgment(s, judgmentBody(1));
      expect(limited(await postJudgment(s, judgmentBody(1)))).toBe("15");
    });
  });

  describe("the allowance period", () => {
    // Created 31 January 10:00 UTC: the next period starts 28 February 10:00 (the day clamped).
    const FEB_28 = Date.UTC(2026, 1, 28, 10, 0, 0, 0);

    it("rolls over at the account's monthly boundary, to the millisecond", async () => {
      const s = await server({ start: JAN_31, plan: { allowanceQuestions: 4, pricePerMillion: 1_000_000 } });
      const usage = (r: CapturedResponse) => [r.status, r.headers.get("x-billed-to"), r.headers.get("x-plan-usage")];
      expect(usage(await postJudgment(s, judgmentBody(1)))).toEqual([200, "plan", "25%"]);
      expect(usage(await postJudgment(s, judgmentBody(3)))).toEqual([200, "plan", "100%"]);
      const refused = await postJudgment(s, judgmentBody(1));
      expectErrorResponse(refused, 402, "insufficient_funds");
      expect(usage(refused), show(refused)).toEqual([402, null, "100%"]);

      s.setTime(FEB_28 - 1);
      const justBefore = await postJudgment(s, judgmentBody(1));
      expect(usage(justBefore), `1 ms before the boundary\n${show(justBefore)}`).toEqual([402, null, "100%"]);
      s.setTime(FEB_28);
      const atBoundary = await postJudgment(s, judgmentBody(2));
      expect(usage(atBoundary), `at the boundary\n${show(atBoundary)}`).toEqual([200, "plan", "50%"]);

      const state = await billingState(s, s.accountId);
      expect(
        state.entries.map((e) => [e.questions, e.periodStart]),
        JSON.stringify(state),
      ).toEqual([
        [1, JAN_31],
        [3, JAN_31],
        [2, FEB_28],
      ]);
      expect((await s.services.accounts.summary(s.accountId))!.usage).toMatchObject({ period: { start: FEB_28, end: Date.UTC(2026, 2, 31, 10) }, used: 2 });
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    });

    // This used to report the new period ("0%"), which the request took nothing from.
    it("a request held before the boundary and answered after it reports the usage of the period it was billed to", async () => {
      const stalling = createStallingEngine(servers.inner);
      const s = await server({ start: JAN_31, plan: { allowanceQuestions: 4, pricePerMillion: 1_000_000 }, engine: stalling });
      const usage = (r: CapturedResponse) => [r.status, r.headers.get("x-billed-to"), r.headers.get("x-plan-usage")];
      expect(usage(await postJudgment(s, judgmentBody(1)))).toEqual([200, "plan", "25%"]);

      s.setTime(FEB_28 - 1_000);
      const stall = stalling.stall();
      const pending = postJudgment(s, judgmentBody(2));
      await stall.entered;
      s.setTime(FEB_28 + 1_000);
      stall.release();
      const straddling = await pending;
      expect(usage(straddling), `held in January, answered in February: January's 3 of 4\n${show(straddling)}`).toEqual([200, "plan", "75%"]);

      const february = await postJudgment(s, judgmentBody(1));
      expect(usage(february), show(february)).toEqual([200, "plan", "25%"]);
      const state = await billingState(s, s.accountId);
      expect(
        state.entries.map((e) => [e.questions, e.periodStart]),
        JSON.stringify(state),
      ).toEqual([
        [1, JAN_31],
        [2, JAN_31],
        [1, FEB_28],
      ]);
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    });
  });
});
