import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { expectedEuros, JAN_31 } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { call, postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { fakeClock } from "../../store/test-helpers.js";

/**
 * GET /admin/v1/overview and GET /admin/v1/accounts/{id}/usage, on a fake clock that starts on
 * 31 January 2026 10:00 UTC; on SQLite and on PostgreSQL.
 */

const DAY = 86_400_000;

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  const clock = fakeClock(JAN_31);
  /** An account on a plan without allowance, paying 1 µ€ a token: its charges equal its tokens. */
  let payg: { id: string; key: string };
  beforeAll(async () => {
    server = await startTestServer({ store: engine, now: clock.now });
    const plan = { name: "payg", requests_per_minute: 1000, allowance_questions: 0, price_per_million: "1" };
    await adminCall(server, "POST", "/admin/v1/plans", { body: plan });
    const account = await adminCall(server, "POST", "/admin/v1/accounts", { body: { name: "payg", plan: "payg" } });
    await adminCall(server, "POST", `/admin/v1/accounts/${account.json.id}/top-ups`, { body: { amount: "5" } });
    const key = await adminCall(server, "POST", `/admin/v1/accounts/${account.json.id}/keys`, { body: {} });
    payg = { id: account.json.id, key: key.json.key };
  });
  afterAll(async () => {
    await server?.close();
  });

  const judge = async (key: string) => {
    const response = await postJudgment({ url: server.url, key }, TINY_JUDGMENT);
    expect(response.status, show(response)).toBe(200);
    return response.json.usage.input_tokens as number;
  };

  describe("GET /admin/v1/accounts/{id}/usage", () => {
    it("gives every day of the period so far, with its questions and euros, and the totals", async () => {
      const first = await judge(payg.key); // 31 January
      clock.advance(2 * DAY); // 2 February
      const second = await judge(payg.key);
      const third = await judge(payg.key);
      const response = await adminCall(server, "GET", `/admin/v1/accounts/${payg.id}/usage`);
      expect(response.status, show(response)).toBe(200);
      const day = (date: string, questions: number, tokens: number) => ({
        date,
        requests: questions,
        questions,
        input_tokens: tokens,
        charged_micro: tokens,
        charged: expectedEuros(tokens),
      });
      expect(response.json, show(response)).toMatchObject({
        period_start: "2026-01-31T10:00:00.000Z",
        period_end: "2026-02-28T10:00:00.000Z",
        days_in_period: 29,
        days: [day("2026-01-31", 1, first), day("2026-02-01", 0, 0), day("2026-02-02", 2, second + third)],
        totals: { requests: 3, questions: 3, input_tokens: first + second + third, charged_micro: first + second + third },
      });
      expect(response.json.days[2].charged, show(response)).toBe(expectedEuros(second + third));
    });

    it("answers 404 account_not_found for an unknown account", async () => {
      expectErrorResponse(await adminCall(server, "GET", "/admin/v1/accounts/acct_nope/usage"), 404, "account_not_found");
    });
  });

  describe("GET /admin/v1/overview", () => {
    it("sums today and this month across accounts: requests, questions, euros charged and topped up", async () => {
      clock.advance(DAY); // 3 February: nothing yet today
      const before = await adminCall(server, "GET", "/admin/v1/overview");
      expect(before.json.today, show(before)).toMatchObject({ start: "2026-02-03T00:00:00.000Z", requests: 0, questions: 0, charged_micro: 0 });
      const tokens = await judge(payg.key);
      await judge(server.key); // the unlimited plan: no charge
      await adminCall(server, "POST", `/admin/v1/accounts/${server.accountId}/top-ups`, { body: { amount: "2.50" } });
      const after = await adminCall(server, "GET", "/admin/v1/overview");
      expect(after.status, show(after)).toBe(200);
      expect(after.json.today, show(after)).toMatchObject({ requests: 2, questions: 2, charged_micro: tokens, topped_up_micro: 2_500_000, topped_up: "2.50" });
      // This month: 2 and 3 February's judgments; January's judgment and €5 top-up belong to last month.
      expect(after.json.month, show(after)).toMatchObject({ start: "2026-02-01T00:00:00.000Z", end: "2026-03-01T00:00:00.000Z", requests: 4, questions: 4 });
      expect(after.json.accounts, show(after)).toBe(2);
    });

    it("counts this instance's 4xx, but not the admin API's own requests", async () => {
      const before = (await adminCall(server, "GET", "/admin/v1/overview")).json.http;
      const refused = await postJudgment({ url: server.url, key: "tjs_not_a_key" }, TINY_JUDGMENT);
      expect(refused.status, show(refused)).toBe(401);
      await call(server.url, "/no/such/path");
      await adminCall(server, "GET", "/admin/v1/accounts/acct_nope"); // a 404 of the admin API
      const after = await adminCall(server, "GET", "/admin/v1/overview");
      expect(after.json.http, show(after)).toEqual({ ...before, requests: before.requests + 2, status_4xx: before.status_4xx + 2 });
      expect(Date.parse(after.json.http.since), show(after)).toBeLessThanOrEqual(Date.now());
    });

    it("shows no ledger check until one has run, then its outcome", async () => {
      const before = await adminCall(server, "GET", "/admin/v1/overview");
      expect(before.json.ledger_check, show(before)).toBeNull();
      await adminCall(server, "GET", "/admin/v1/ledger/check");
      const after = await adminCall(server, "GET", "/admin/v1/overview");
      expect(after.json.ledger_check, show(after)).toEqual({ checked_at: expect.any(String), ok: true, accounts: 2, mismatches: 0 });
    });
  });
});
