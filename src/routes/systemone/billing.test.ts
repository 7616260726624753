import { describe, expect, it } from "vitest";
import { billingHeadersOf, billingState, judgmentBody, moneyTables, useBillingServers } from "../../testing/billing-http.js";
import { expectedCharge, expectedEuros } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse, expectRequestId } from "../../testing/route-assertions.js";

/** POST /v1/systemone on the real tiny model: who paid, the billing headers, 402, keys. */

function ok(response: CapturedResponse) {
  expect(response.status, show(response)).toBe(200);
  expectRequestId(response);
  return response;
}

const tokensOf = (response: CapturedResponse): number => response.json.usage.input_tokens;

describe.each(STORE_ENGINES)("on %s", (engine) => {
  // billing.engine is never stalled here: it counts the evaluations that reach the model.
  const billing = useBillingServers({ stalling: true, store: engine });
  const { server } = billing;

  describe("billing headers on 200", () => {
    it("the plan pays while the request's questions fit the allowance, the balance once they do not, then 402", async () => {
      const price = 333_333;
      const s = await server({ plan: { allowanceQuestions: 3, pricePerMillion: price, requestsPerMinute: 100 } });
      const two = judgmentBody(2);
      const one = judgmentBody(1);

      const r1 = ok(await postJudgment(s, two));
      const tokens = tokensOf(r1);
      const charge = expectedCharge(tokens, price);
      expect(charge, `${tokens} tokens`).toBeGreaterThan(0);
      await s.store.ledger.topUp(s.accountId, 2 * charge + 7, "for two balance requests and 7 µ€");

      const r2 = ok(await postJudgment(s, two)); // 1 question left, 2 asked: the balance
      const r3 = ok(await postJudgment(s, one)); // the last question: the plan
      const r4 = ok(await postJudgment(s, two));
      const headers = [r1, r2, r3, r4].map(billingHeadersOf);
      const reply = (billedTo: string, usage: string, micros: number, remaining: number) => ({
        "x-billed-to": billedTo,
        "x-plan-usage": usage,
        "x-balance-remaining": expectedEuros(micros),
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": String(remaining),
        "x-ratelimit-reset": "60",
        "retry-after": null,
      });
      expect(headers, [r1, r2, r3, r4].map((r) => show(r)).join("\n")).toEqual([
        reply("plan", "66%", 0, 99),
        reply("balance", "66%", charge + 7, 98),
        reply("plan", "100%", charge + 7, 97),
        reply("balance", "100%", 7, 96),
      ]);
      expect(headers[3]["x-balance-remaining"]).toBe("0.000007");
      expect(tokensOf(r2), show(r2)).toBe(tokens);

      const before = await moneyTables(s.database);
      const evaluations = billing.engine.evaluations;
      const refused = await postJudgment(s, two);
      expectErrorResponse(refused, 402, "insufficient_funds");
      expect(billingHeadersOf(refused), show(refused)).toEqual({
        ...reply("", "100%", 7, 95),
        "x-billed-to": null,
      });
      expect(refused.json.error, show(refused)).toContain(`€${expectedEuros(charge)}`);
      expect(await moneyTables(s.database), `a 402 changed the money tables\n${show(refused)}`).toEqual(before);
      expect(billing.engine.evaluations, "a 402 never reaches the model").toBe(evaluations);

      const state = await billingState(s, s.accountId);
      const ledger = state.entries.map((e) => [e.kind, e.amountMicro, e.questions, e.inputTokens]);
      expect(ledger, JSON.stringify(state)).toEqual([
        ["plan", 0, 2, tokens],
        ["top_up", 2 * charge + 7, 0, 0],
        ["charge", -charge, 2, tokens],
        ["plan", 0, 1, tokensOf(r3)],
        ["charge", -charge, 2, tokens],
      ]);
      expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: 7, reservedMicro: 0, used: 3, reserved: 0 });
      expect(await s.services.ledger.check()).toMatchObject({ ok: true });
      const ids = [r1, r2, r3, r4, refused].map((r) => r.headers.get("x-request-id"));
      expect(new Set(ids).size, ids.join()).toBe(5);
      expect(
        state.entries.filter((e) => e.kind !== "top_up").map((e) => e.requestId),
        "ledger entries name their request",
      ).toEqual(ids.slice(0, 4));
    });

    it("x-plan-usage is the whole percent used after the request, rounded down", async () => {
      const s = await server({ plan: { allowanceQuestions: 7 } });
      const seen: string[] = [];
      for (const questions of [1, 1, 2, 2, 1]) seen.push(ok(await postJudgment(s, judgmentBody(questions))).headers.get("x-plan-usage")!);
      // 1/7 = 14.28…%, 2/7, 4/7, 6/7, 7/7
      expect(seen).toEqual(["14%", "28%", "57%", "85%", "100%"]);
    });

    it("x-balance-remaining is the exact decimal balance in euros after the charge", async () => {
      const price = 1_000_003;
      const s = await server({ plan: { allowanceQuestions: 1, pricePerMillion: price } });
      const body = judgmentBody(1, "How much is left?");
      const probe = ok(await postJudgment(s, body)); // the plan pays: this only measures the tokens
      expect(billingHeadersOf(probe), show(probe)).toMatchObject({ "x-billed-to": "plan", "x-balance-remaining": "0.00" });
      const charge = expectedCharge(tokensOf(probe), price);
      let balance = 0;
      const seen: string[] = [];
      // Each top-up leaves exactly `target` after the next charge.
      for (const target of [0, 100_000, 4_990_000, 12_000_000, 12_345_678, 1_000_000_001]) {
        await s.store.ledger.topUp(s.accountId, target + charge - balance);
        const r = ok(await postJudgment(s, body));
        expect(r.headers.get("x-billed-to"), show(r)).toBe("balance");
        seen.push(r.headers.get("x-balance-remaining")!);
        balance = target;
      }
      expect(seen).toEqual(["0.00", "0.10", "4.99", "12.00", "12.345678", "1000.000001"]);
      expect((await billingState(s, s.accountId)).balanceMicro).toBe(1_000_000_001);
    });
  });

  describe("keys", () => {
    it("a revoked key is refused with 401 on the very next request, which carries no billing headers and counts nowhere", async () => {
      const s = await server({ plan: { allowanceQuestions: 10, requestsPerMinute: 5 } });
      const second = await s.store.keys.create({ accountId: s.accountId, name: "second" });
      ok(await postJudgment(s, judgmentBody(1), { key: second.key }));
      await s.store.keys.revoke(second.record.id);
      const before = await moneyTables(s.database);
      for (let i = 0; i < 6; i++) {
        const refused = await postJudgment(s, judgmentBody(1), { key: second.key });
        expectErrorResponse(refused, 401, "invalid_api_key");
        expect(billingHeadersOf(refused), show(refused)).toEqual(Object.fromEntries(Object.keys(billingHeadersOf(refused)).map((name) => [name, null])));
      }
      expect(await moneyTables(s.database)).toEqual(before);
      const still = ok(await postJudgment(s, judgmentBody(1)));
      expect(still.headers.get("x-ratelimit-remaining"), `six 401s did not count:\n${show(still)}`).toBe("3");
    });

    it("the plaintext key appears in no log line, for any outcome", async () => {
      const s = await server({ plan: { allowanceQuestions: 1, requestsPerMinute: 4 } });
      const statuses = [];
      statuses.push((await postJudgment(s, judgmentBody(1))).status);
      statuses.push((await postJudgment(s, judgmentBody(1))).status); // 402
      statuses.push((await postJudgment(s, "{not json")).status);
      statuses.push((await postJudgment(s, judgmentBody(1), { headers: { "idempotency-key": s.key } })).status);
      statuses.push((await postJudgment(s, judgmentBody(1))).status); // 429
      await s.store.keys.revoke(s.key.slice(0, 12));
      statuses.push((await postJudgment(s, judgmentBody(1))).status); // 401
      expect(statuses).toEqual([200, 402, 400, 402, 429, 401]);
      const log = s.logLines.join("");
      expect(s.logLines.length, log).toBeGreaterThanOrEqual(6);
      expect(log.includes(s.key), log).toBe(false);
      expect(log.includes(s.key.slice(4)), "nor its secret part").toBe(false);
    });
  });
});
