import { describe, expect, it } from "vitest";
import { billingHeadersOf, billingState, judgmentBody, useBillingServers, waitFor, type BillingServer } from "../../testing/billing-http.js";
import { expectedCharge, expectedEuros } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { createStallingEngine } from "../../testing/stalling-engine.js";

/**
 * N identical requests at once against what pays for exactly k of them, through HTTP and the
 * real store (SQLite and PostgreSQL): exactly k answers, the rest refused, the ledger exact.
 */

const N = 24;

const all = (s: BillingServer, body: unknown) => Promise.all(Array.from({ length: N }, () => postJudgment(s, body)));
const byStatus = (responses: CapturedResponse[]) =>
  responses.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});
const showAll = (responses: CapturedResponse[]) => responses.map((r) => show(r)).join("\n");

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const billing = useBillingServers({ store: engine });
  const { server } = billing;

  describe(`${N} concurrent requests`, () => {
    it("a balance that covers exactly k of them: k answers billed to the balance, N − k 402s, the balance exact", async () => {
      const price = 777_777;
      const k = 9;
      const stalling = createStallingEngine(billing.engine);
      const s = await server({ engine: stalling, plan: { allowanceQuestions: 1, pricePerMillion: price } });
      const body = judgmentBody(1, "Refund the second charge, please.");
      const probe = await postJudgment(s, body); // paid by the plan's one question: measures the tokens
      expect(probe.headers.get("x-billed-to"), show(probe)).toBe("plan");
      const charge = expectedCharge(probe.json.usage.input_tokens, price);
      const initial = k * charge + charge - 1; // one micro-euro short of k + 1
      await s.store.ledger.topUp(s.accountId, initial);

      // With the model held, the k paid requests wait at it holding their charges, and the rest are
      // already refused: holds, not completed charges, are what keeps the balance from overdrawing.
      const stall = stalling.stall();
      let finished = 0;
      const pending = Promise.all(Array.from({ length: N }, () => postJudgment(s, body).finally(() => finished++)));
      try {
        await waitFor(
          () => stall.waiting === k && finished === N - k,
          () => `${stall.waiting} at the model, ${finished} answered`,
        );
        expect(await billingState(s, s.accountId), "k charges held").toMatchObject({ balanceMicro: initial, reservedMicro: k * charge });
      } finally {
        stall.release();
      }
      const responses = await pending;
      const message = showAll(responses);
      expect(byStatus(responses), message).toEqual({ 200: k, 402: N - k });
      const answered = responses.filter((r) => r.status === 200);
      for (const r of answered) expect(r.headers.get("x-billed-to"), show(r)).toBe("balance");
      for (const r of responses.filter((r) => r.status === 402)) expectErrorResponse(r, 402, "insufficient_funds");
      // Each answer reports the balance right after its own charge: k distinct steps down.
      const remaining = answered.map((r) => r.headers.get("x-balance-remaining")).sort();
      const steps = Array.from({ length: k }, (_, i) => expectedEuros(initial - (i + 1) * charge)).sort();
      expect(remaining, message).toEqual(steps);

      const state = await billingState(s, s.accountId);
      expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: charge - 1, reservedMicro: 0, reserved: 0, used: 1 });
      const charges = state.entries.filter((e) => e.kind === "charge").map((e) => e.amountMicro);
      expect(charges, JSON.stringify(state)).toEqual(Array(k).fill(-charge));
      const check = await s.services.ledger.check();
      expect(check, JSON.stringify(check)).toMatchObject({ ok: true });
    });

    it("an allowance of exactly k × Q questions: k answers billed to the plan, N − k 402s, nothing from the balance", async () => {
      const [k, q] = [7, 3];
      const s = await server({ plan: { allowanceQuestions: k * q + q - 1, pricePerMillion: 1_000_000 } });
      const responses = await all(s, judgmentBody(q));
      const message = showAll(responses);
      expect(byStatus(responses), message).toEqual({ 200: k, 402: N - k });
      for (const r of responses.filter((r) => r.status === 200)) {
        expect(billingHeadersOf(r), show(r)).toMatchObject({ "x-billed-to": "plan", "x-balance-remaining": "0.00" });
      }
      const state = await billingState(s, s.accountId);
      expect(state, JSON.stringify(state)).toMatchObject({ used: k * q, reserved: 0, balanceMicro: 0, reservedMicro: 0 });
      expect(
        state.entries.map((e) => [e.kind, e.questions]),
        JSON.stringify(state),
      ).toEqual(Array(k).fill(["plan", q]));
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    });

    it("a rate limit of L per minute: exactly L get through, the rest 429 with Retry-After, none charged", async () => {
      const limit = 7;
      const s = await server({ plan: { requestsPerMinute: limit, allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
      const responses = await all(s, judgmentBody(1));
      const message = showAll(responses);
      expect(byStatus(responses), message).toEqual({ 200: limit, 429: N - limit });
      const passed = responses.filter((r) => r.status !== 429).map((r) => Number(r.headers.get("x-ratelimit-remaining")));
      expect(
        passed.sort((a, b) => a - b),
        message,
      ).toEqual(Array.from({ length: limit }, (_, i) => i));
      for (const r of responses.filter((r) => r.status === 429)) {
        expectErrorResponse(r, 429, "rate_limited");
        expect(billingHeadersOf(r), show(r)).toMatchObject({ "x-ratelimit-remaining": "0", "retry-after": "60", "x-ratelimit-reset": "60" });
      }
      const state = await billingState(s, s.accountId);
      expect(
        state.entries.filter((e) => e.kind === "charge"),
        JSON.stringify(state),
      ).toHaveLength(limit);
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    });
  });
});
