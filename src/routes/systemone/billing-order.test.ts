import { describe, expect, it } from "vitest";
import { addAccount, billingHeadersOf, judgmentBody, moneyTables, useBillingServers, type BillingServer } from "../../testing/billing-http.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";

/**
 * The order of checks on POST /v1/systemone: 401 → 429 (every authenticated attempt counts) →
 * 400/413 → 402 → model. The store's clock stands still, so one rate window spans each test.
 */

const OVERSIZED = JSON.stringify({ state: "x".repeat(256 * 1024), questions: judgmentBody(1).questions });
const INVALID: [string, unknown, string][] = [
  ["malformed JSON", "{not json", "invalid_json"],
  ["a body that breaks the schema", { questions: { q: { type: "choice", instructions: "x", criteria: { only: null } } } }, "invalid_request"],
  ["an unknown model", { ...judgmentBody(1), model: "jev-ultra" }, "unknown_model"],
  ["a malformed Idempotency-Key", judgmentBody(1), "invalid_idempotency_key"],
];
const send = (s: BillingServer, body: unknown, name = "") =>
  postJudgment(s, body, name === "a malformed Idempotency-Key" ? { headers: { "idempotency-key": "has spaces in it" } } : {});

function expectRateHeaders(response: CapturedResponse, limit: number, remaining: number) {
  const headers = billingHeadersOf(response);
  expect([headers["x-ratelimit-limit"], headers["x-ratelimit-remaining"]], show(response)).toEqual([String(limit), String(remaining)]);
  expect(headers["x-ratelimit-reset"], show(response)).toMatch(/^[1-9]\d*$/);
}

function expectLimited(response: CapturedResponse, limit: number) {
  expectErrorResponse(response, 429, "rate_limited");
  expectRateHeaders(response, limit, 0);
  expect(response.headers.get("retry-after"), show(response)).toBe(response.headers.get("x-ratelimit-reset"));
}

describe.each(STORE_ENGINES)("on %s", (engine) => {
  // billing.engine is never stalled: it counts what reaches the model.
  const billing = useBillingServers({ stalling: true, store: engine });
  const { server } = billing;

  describe("order of checks", () => {
    it("429 comes before reading the body: a limited request gets 429 whatever its body, and Retry-After", async () => {
      const s = await server({ plan: { requestsPerMinute: 2 } });
      for (let i = 0; i < 2; i++) expect((await postJudgment(s, judgmentBody(1))).status).toBe(200);
      const evaluations = billing.engine.evaluations;
      for (const [name, body] of INVALID) expectLimited(await send(s, body, name), 2);
      expectLimited(await postJudgment(s, OVERSIZED), 2);
      expectLimited(await postJudgment(s, judgmentBody(1)), 2);
      expect(billing.engine.evaluations).toBe(evaluations);
    });

    for (const [name, body, code] of INVALID) {
      it(`400 comes before 402: ${name} gets ${code} when nothing could pay, and charges nothing`, async () => {
        const s = await server({ plan: { allowanceQuestions: 0, requestsPerMinute: 10 } });
        const before = await moneyTables(s.database);
        const evaluations = billing.engine.evaluations;
        const refused = await send(s, body, name);
        expectErrorResponse(refused, 400, code);
        expectRateHeaders(refused, 10, 9);
        expect(billingHeadersOf(refused), show(refused)).toMatchObject({ "x-billed-to": null, "x-plan-usage": null, "retry-after": null });
        expect(await moneyTables(s.database), show(refused)).toEqual(before);
        const unpaid = await postJudgment(s, judgmentBody(1));
        expectErrorResponse(unpaid, 402, "insufficient_funds");
        expect(billingHeadersOf(unpaid), show(unpaid)).toMatchObject({ "x-plan-usage": "100%", "x-balance-remaining": "0.00", "x-billed-to": null });
        expect(await moneyTables(s.database), show(unpaid)).toEqual(before);
        expect(billing.engine.evaluations, "neither reached the model").toBe(evaluations);
      });
    }

    it("a body over 256 KB gets 413, charges nothing, and counts against the rate limit", async () => {
      const s = await server({ plan: { requestsPerMinute: 3, allowanceQuestions: 0 } });
      const before = await moneyTables(s.database);
      for (let i = 0; i < 3; i++) {
        const refused = await postJudgment(s, OVERSIZED);
        expectErrorResponse(refused, 413, "body_too_large");
        expectRateHeaders(refused, 3, 2 - i);
      }
      expect(await moneyTables(s.database)).toEqual(before);
      expectLimited(await postJudgment(s, judgmentBody(1)), 3);
    });

    it("every authenticated attempt counts: 200, 402, 400 and 413 alike, then 429", async () => {
      const s = await server({ plan: { requestsPerMinute: 4, allowanceQuestions: 1 } });
      const statuses: number[] = [];
      for (const body of [judgmentBody(1), judgmentBody(1), "{not json", OVERSIZED]) {
        const response = await postJudgment(s, body);
        expectRateHeaders(response, 4, 3 - statuses.length);
        statuses.push(response.status);
      }
      expect(statuses).toEqual([200, 402, 400, 413]);
      expectLimited(await postJudgment(s, judgmentBody(1)), 4);
    });

    it("401 comes first and counts against nobody's limit", async () => {
      const s = await server({ plan: { requestsPerMinute: 2 } });
      const other = await addAccount(s);
      const revoked = await s.store.keys.create({ accountId: s.accountId });
      await s.store.keys.revoke(revoked.record.id);
      const unauthenticated = [
        await postJudgment(s, judgmentBody(1), { key: null }),
        await postJudgment(s, judgmentBody(1), { key: "tjs_" + "0".repeat(40) }),
        await postJudgment(s, judgmentBody(1), { authorization: `Basic ${s.key}` }),
        await postJudgment(s, judgmentBody(1), { key: revoked.key }),
        await postJudgment(s, OVERSIZED, { key: revoked.key }),
        await postJudgment(s, "{not json", { key: revoked.key }),
      ];
      for (const response of unauthenticated) {
        expect(response.status, show(response)).toBe(401);
        expect(
          Object.values(billingHeadersOf(response)).filter((v) => v !== null),
          show(response),
        ).toEqual([]);
      }
      for (const caller of [s, other]) {
        const first = await postJudgment(caller, judgmentBody(1));
        expect(first.status, show(first)).toBe(200);
        expectRateHeaders(first, 2, 1);
      }
    });
  });
});
