import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { evaluateFailsEngine, faultEngine } from "../../testing/fault-engines.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { addTestAccount, startTestServer, type TestServer } from "../../testing/server.js";

/**
 * What the console reports across instances, through the admin API: the last 30 days by UTC
 * day, the busiest accounts, the server errors any instance answered, the ledger filtered by
 * kind with each judgment's request id and key, and the CSV exports.
 */

describe.each(STORE_ENGINES)("on %s", (engine) => {
  let server: TestServer;
  /** A second instance on the same database whose model fails: its 502s are server errors. */
  let failing: TestServer;
  let busy: { accountId: string; key: string };
  let keyPrefix: string;
  const requestIds: string[] = [];
  let failedRequestId: string;

  beforeAll(async () => {
    server = await startTestServer({ store: engine });
    failing = await startTestServer({ database: server.database, engine: evaluateFailsEngine() });
    const payg = { name: `pay as you go ${engine}`, allowanceQuestions: 0, pricePerMillion: 2_000_000 };
    busy = await addTestAccount(server.services, { plan: payg, balanceMicro: 5_000_000 });
    await server.services.accounts.setPlan(busy.accountId, payg.name);
    keyPrefix = (await server.store.keys.list({ accountId: busy.accountId }))[0].prefix;
    for (let i = 0; i < 3; i++) {
      const judged = await postJudgment({ url: server.url, key: busy.key }, TINY_JUDGMENT);
      expect(judged.status, show(judged)).toBe(200);
      requestIds.push(judged.headers.get("x-request-id")!);
    }
    await server.services.accounts.adjust(busy.accountId, -1_000, "=1+1 reverses a top-up, by mistake");
    const failed = await postJudgment({ url: failing.url, key: server.key }, TINY_JUDGMENT);
    expect(failed.status, show(failed)).toBe(502);
    failedRequestId = failed.headers.get("x-request-id")!;
    // The error is written after the response: wait until it is in the database.
    for (let tries = 0; (await server.services.reports.recentServerErrors(5)).length === 0; tries++) {
      if (tries > 100) throw new Error("the 502 was never recorded");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  afterAll(async () => {
    await failing?.close();
    await server?.close();
  });

  it("the overview has the last 30 days, oldest first, today with the judgments, the euros and the other instance's server error", async () => {
    const response = await adminCall(server, "GET", "/admin/v1/overview");
    expect(response.status, show(response)).toBe(200);
    const { days } = response.json;
    expect(days, show(response)).toHaveLength(30);
    const today = days.at(-1);
    expect(today.date).toBe(new Date().toISOString().slice(0, 10));
    expect(today, show(response)).toMatchObject({ requests: 3, questions: 3, server_errors: 1 });
    const charged = -(await server.services.accounts.entries(busy.accountId, { limit: 50 }))
      .filter((e) => e.kind === "charge")
      .reduce((s, e) => s + e.amountMicro, 0);
    expect(charged).toBeGreaterThan(0);
    expect(today.charged_micro, show(response)).toBe(charged);
    expect(
      days.slice(0, 29).every((day: { requests: number; server_errors: number }) => day.requests === 0 && day.server_errors === 0),
      show(response),
    ).toBe(true);
  });

  it("lists recent server errors of every instance: time, route, status, code and request id; probes excepted", async () => {
    // A third instance whose model is still loading: its /health 503 is a state, not a server error.
    const loading = await startTestServer({ database: server.database, engine: faultEngine({ status: { state: "loading", detail: "reading the weights" } }) });
    try {
      const health = await fetch(`${loading.url}/health`);
      expect(health.status).toBe(503);
    } finally {
      await loading.close();
    }
    const response = await adminCall(server, "GET", "/admin/v1/overview");
    expect(response.json.server_errors, show(response)).toEqual([
      {
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        method: "POST",
        route: "/v1/systemone",
        status: 502,
        code: "model_failed",
        request_id: failedRequestId,
      },
    ]);
  });

  it("ranks the busiest accounts by euros charged, or by requests", async () => {
    const byCharge = await adminCall(server, "GET", "/admin/v1/overview");
    expect(byCharge.json.busiest_by).toBe("charged");
    expect(byCharge.json.busiest_accounts[0], show(byCharge)).toMatchObject({ account_id: busy.accountId, requests: 3, questions: 3 });
    expect(byCharge.json.busiest_accounts[0].charged_micro).toBeGreaterThan(0);
    const byRequests = await adminCall(server, "GET", "/admin/v1/overview?busiest_by=requests");
    expect(byRequests.json.busiest_by).toBe("requests");
    expect(byRequests.json.busiest_accounts[0].account_id, show(byRequests)).toBe(busy.accountId);
    const refused = await adminCall(server, "GET", "/admin/v1/overview?busiest_by=euros");
    expect(refused.status, show(refused)).toBe(400);
  });

  it("filters the ledger by kind; each judgment shows its request id and its key", async () => {
    const charges = await adminCall(server, "GET", `/admin/v1/accounts/${busy.accountId}/ledger?kind=charge`);
    expect(charges.status, show(charges)).toBe(200);
    expect(
      charges.json.entries.map((e: { kind: string }) => e.kind),
      show(charges),
    ).toEqual(["charge", "charge", "charge"]);
    expect(charges.json.entries.map((e: { request_id: string }) => e.request_id).sort()).toEqual([...requestIds].sort());
    for (const entry of charges.json.entries) expect(entry.key, show(charges)).toMatchObject({ prefix: keyPrefix });
    const money = await adminCall(server, "GET", `/admin/v1/accounts/${busy.accountId}/ledger?kind=top_up,adjustment`);
    expect(
      money.json.entries.map((e: { kind: string }) => e.kind),
      show(money),
    ).toEqual(["adjustment", "top_up"]);
    expect(
      money.json.entries.map((e: { key: unknown }) => e.key),
      show(money),
    ).toEqual([null, null]);
    const bad = await adminCall(server, "GET", `/admin/v1/accounts/${busy.accountId}/ledger?kind=refund`);
    expect(bad.status, show(bad)).toBe(400);
    expect(bad.json.error, show(bad)).toMatch(/unknown kind "refund"/);
  });

  it("exports the ledger as CSV with the same filter: exact µ€ and euros, quoted text, no formula", async () => {
    const response = await adminCall(server, "GET", `/admin/v1/accounts/${busy.accountId}/ledger.csv?kind=adjustment,charge`);
    expect(response.status, show(response)).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="ledger-acct_[\w-]+-adjustment-charge-\d{4}-\d\d-\d\d\.csv"$/);
    const lines = response.text.split("\r\n");
    expect(lines[0]).toBe("id,at,kind,amount_micro,amount_eur,questions,input_tokens,period_start,request_id,key_id,key_prefix,key_name,note");
    expect(lines).toHaveLength(1 + 4 + 1); // header, 4 rows, the final CRLF
    expect(lines[1], response.text).toMatch(/^\d+,\d{4}-[^,]+,adjustment,-1000,-0\.001,0,0,,,,,,"'=1\+1 reverses a top-up, by mistake"$/);
    for (const line of lines.slice(2, 5)) expect(line, response.text).toMatch(new RegExp(`,charge,-\\d+,-0\\.\\d+,1,\\d+,,[\\w-]+,key_[\\w-]+,${keyPrefix},`));
  });

  it("exports usage per account and day as CSV, for one account or all", async () => {
    const one = await adminCall(server, "GET", `/admin/v1/usage.csv?account=${busy.accountId}&days=7`);
    expect(one.status, show(one)).toBe(200);
    const lines = one.text.trimEnd().split("\r\n");
    expect(lines[0]).toBe("date,account_id,account_name,requests,questions,input_tokens,charged_micro,charged_eur");
    const today = new Date().toISOString().slice(0, 10);
    expect(lines.slice(1), one.text).toEqual([expect.stringMatching(new RegExp(`^${today},${busy.accountId},[^,]+,3,3,\\d+,\\d+,0\\.\\d+$`))]);
    const all = await adminCall(server, "GET", "/admin/v1/usage.csv");
    expect(all.text, show(all)).toContain(busy.accountId);
    const unknown = await adminCall(server, "GET", "/admin/v1/usage.csv?account=acct_nope");
    expect(unknown.status, show(unknown)).toBe(404);
    const tooMany = await adminCall(server, "GET", "/admin/v1/usage.csv?days=400");
    expect(tooMany.status, show(tooMany)).toBe(400);
  });
});
