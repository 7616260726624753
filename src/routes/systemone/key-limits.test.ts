import { describe, expect, it } from "vitest";
import { billingState, judgmentBody, useBillingServers, waitFor } from "../../testing/billing-http.js";
import { expectedCharge } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { adminCall } from "../../testing/admin-client.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { createStallingEngine } from "../../testing/stalling-engine.js";

/**
 * A key's own limits through HTTP and the real store (SQLite and PostgreSQL): its per-minute
 * limit on top of the plan's, its lifetime budget held like the balance (exact under concurrent
 * requests), its expiry, all created and changed through the admin API.
 */

const N = 24;
const byStatus = (responses: CapturedResponse[]) =>
  responses.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});

interface KeyJson {
  id: string;
  key: string;
  spent_micro: number;
  held_micro: number;
  budget_micro: number | null;
  requests_per_minute: number | null;
  expires_at: string | null;
}

describe.each(STORE_ENGINES)("on %s", (engine) => {
  const billing = useBillingServers({ store: engine });

  async function createKey(s: { url: string; accountId: string }, body: Record<string, unknown>): Promise<KeyJson> {
    const created = await adminCall(s, "POST", `/admin/v1/accounts/${s.accountId}/keys`, { body });
    expect(created.status, show(created)).toBe(201);
    return created.json as KeyJson;
  }

  it(`${N} concurrent requests on a key whose budget covers exactly k: k answers, N − k 402 key_budget_exhausted, spend exact`, async () => {
    const price = 777_777;
    const k = 5;
    const stalling = createStallingEngine(billing.engine);
    const s = await billing.server({ engine: stalling, plan: { allowanceQuestions: 0, pricePerMillion: price }, balanceMicro: 1_000_000_000 });
    const body = judgmentBody(1, "Refund the second charge, please.");
    const probe = await postJudgment(s, body);
    expect(probe.status, show(probe)).toBe(200);
    const charge = expectedCharge(probe.json.usage.input_tokens, price);
    const key = await createKey(s, { name: "capped", budget: (((k + 1) * charge - 1) / 1e6).toFixed(6) });
    expect(key.budget_micro, JSON.stringify(key)).toBe((k + 1) * charge - 1);
    const client = { url: s.url, key: key.key };

    // The k paid requests wait at the model holding their charges: holds, not settled charges,
    // keep the key within its budget, so the rest are refused while they wait.
    const stall = stalling.stall();
    let finished = 0;
    const pending = Promise.all(Array.from({ length: N }, () => postJudgment(client, body).finally(() => finished++)));
    try {
      await waitFor(
        () => stall.waiting === k && finished === N - k,
        () => `${stall.waiting} at the model, ${finished} answered`,
      );
      const [held] = await s.services.keys.list({ accountId: s.accountId }).then((keys) => keys.filter((r) => r.id === key.id));
      expect([held.heldMicro, held.spentMicro], JSON.stringify(held)).toEqual([k * charge, 0]);
    } finally {
      stall.release();
    }
    const responses = await pending;
    const message = responses.map((r) => show(r)).join("\n");
    expect(byStatus(responses), message).toEqual({ 200: k, 402: N - k });
    for (const r of responses.filter((r) => r.status === 402)) {
      expectErrorResponse(r, 402, "key_budget_exhausted");
      expect(r.json.error, show(r)).toMatch(/this key's budget of €\d+\.\d+ cannot pay/);
    }
    const [after] = (await s.services.keys.list({ accountId: s.accountId })).filter((r) => r.id === key.id);
    expect([after.spentMicro, after.heldMicro], JSON.stringify(after)).toEqual([k * charge, 0]);
    const state = await billingState(s, s.accountId);
    expect(state.entries.filter((e) => e.kind === "charge").length, JSON.stringify(state)).toBe(k + 1);
    expect(await s.services.ledger.check(), JSON.stringify(state)).toMatchObject({ ok: true });

    // The account's other keys are not capped; raising the budget lets this one pay again at once.
    expect((await postJudgment(s, body)).status).toBe(200);
    const raised = await adminCall(s, "PATCH", `/admin/v1/keys/${key.id}`, { body: { budget: "1000" } });
    expect([raised.status, raised.json.spent_micro, raised.json.budget], show(raised)).toEqual([200, k * charge, "1000.00"]);
    expect((await postJudgment(client, body)).status).toBe(200);
    const cleared = await adminCall(s, "PATCH", `/admin/v1/keys/${key.id}`, { body: { budget: null } });
    expect([cleared.status, cleared.json.budget_micro], show(cleared)).toEqual([200, null]);
  });

  it("what the plan's allowance pays costs the key nothing: a budget of 0 is an allowance-only key", async () => {
    const s = await billing.server({ plan: { allowanceQuestions: 1, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
    const key = await createKey(s, { budget: "0" });
    const client = { url: s.url, key: key.key };
    const onPlan = await postJudgment(client, judgmentBody(1));
    expect([onPlan.status, onPlan.headers.get("x-billed-to")], show(onPlan)).toEqual([200, "plan"]);
    const refused = await postJudgment(client, judgmentBody(1));
    expectErrorResponse(refused, 402, "key_budget_exhausted");
    expect(refused.headers.get("x-balance-remaining"), show(refused)).toBe("1.00");
    const state = await billingState(s, s.accountId);
    expect(state.balanceMicro, JSON.stringify(state)).toBe(1_000_000);
  });

  it("a key's own per-minute limit applies on top of the plan's, and the 429 says which limit was hit", async () => {
    const s = await billing.server({ plan: { requestsPerMinute: 5 } });
    const key = await createKey(s, { requests_per_minute: 2 });
    const client = { url: s.url, key: key.key };
    const responses: CapturedResponse[] = [];
    for (let i = 0; i < 3; i++) responses.push(await postJudgment(client, judgmentBody(1)));
    const message = responses.map((r) => show(r)).join("\n");
    expect(
      responses.map((r) => r.status),
      message,
    ).toEqual([200, 200, 429]);
    expect(responses[0].headers.get("x-ratelimit-limit"), message).toBe("2");
    expectErrorResponse(responses[2], 429, "rate_limited");
    expect(responses[2].json.error, message).toMatch(/^this key's own rate limit of 2 requests per minute reached; retry in \d+ s$/);
    expect(responses[2].headers.get("retry-after"), message).toMatch(/^\d+$/);
    expect(responses[2].headers.get("x-ratelimit-remaining"), message).toBe("0");

    // The plan's limit still holds for every key of the account: 5 in all, counted across keys.
    const others = [];
    for (let i = 0; i < 3; i++) others.push(await postJudgment(s, judgmentBody(1)));
    const more = others.map((r) => show(r)).join("\n");
    expect(
      others.map((r) => r.status),
      more,
    ).toEqual([200, 200, 429]);
    expect(others[2].json.error, more).toMatch(/^the plan's rate limit of 5 requests per minute reached/);

    // Cleared, the key is back to the plan's limit alone (which is spent for this minute).
    const cleared = await adminCall(s, "PATCH", `/admin/v1/keys/${key.id}`, { body: { requests_per_minute: null } });
    expect([cleared.status, cleared.json.requests_per_minute], show(cleared)).toEqual([200, null]);
    s.setTime(s.clock.now() + 60_000);
    const fresh = await postJudgment(client, judgmentBody(1));
    expect([fresh.status, fresh.headers.get("x-ratelimit-limit")], show(fresh)).toEqual([200, "5"]);
  });

  it("an expired key gets 401 key_expired, and nothing is charged; a later expiry revives it", async () => {
    const s = await billing.server({ plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
    const expiry = new Date(s.clock.now() + 60_000).toISOString();
    const key = await createKey(s, { name: "temporary", expires_at: expiry });
    expect(key.expires_at, JSON.stringify(key)).toBe(expiry);
    const client = { url: s.url, key: key.key };
    expect((await postJudgment(client, judgmentBody(1))).status).toBe(200);
    const before = await billingState(s, s.accountId);
    s.setTime(s.clock.now() + 60_000);
    const refused = await postJudgment(client, judgmentBody(1));
    expectErrorResponse(refused, 401, "key_expired");
    expect(refused.json.error, show(refused)).toBe(`this API key expired at ${expiry}; ask for a new one`);
    expect(await billingState(s, s.accountId), "nothing charged").toEqual(before);

    const later = await adminCall(s, "PATCH", `/admin/v1/keys/${key.id}`, { body: { expires_at: "2099-01-01", name: "renewed" } });
    expect([later.status, later.json.expires_at, later.json.name], show(later)).toEqual([200, "2099-01-01T00:00:00.000Z", "renewed"]);
    expect((await postJudgment(client, judgmentBody(1))).status).toBe(200);
  });

  it("a new key whose expiry has passed is a 400 invalid_request and nothing is created; an existing key may be given one", async () => {
    const s = await billing.server();
    const before = await s.services.keys.list();
    const now = s.clock.now();
    for (const expires_at of ["2020-01-01", new Date(now - 1).toISOString(), new Date(now).toISOString()]) {
      const created = await adminCall(s, "POST", `/admin/v1/accounts/${s.accountId}/keys`, { body: { name: "born expired", expires_at } });
      expectErrorResponse(created, 400, "invalid_request");
      expect(created.json.error, show(created)).toBe(`a new key's expiry must be in the future; ${new Date(expires_at).toISOString()} has passed`);
    }
    expect(await s.services.keys.list(), "nothing created").toEqual(before);
    // Ending an existing key at once stays possible (revocation's gentler cousin: a later expiry revives it).
    const ended = await adminCall(s, "PATCH", `/admin/v1/keys/${before[0].id}`, { body: { expires_at: "2020-01-01" } });
    expect([ended.status, ended.json.expires_at], show(ended)).toEqual([200, "2020-01-01T00:00:00.000Z"]);
  });

  it("bad limits are 400s that change nothing; an unknown key is 404", async () => {
    const s = await billing.server();
    const bad: [string, Record<string, unknown>][] = [
      ["requests_per_minute", { requests_per_minute: 0 }],
      ["requests_per_minute", { requests_per_minute: 1.5 }],
      ["budget", { budget: "-1" }],
      ["budget", { budget: 5 }],
      ["expires_at", { expires_at: "tomorrow" }],
      ["expires_at", { expires_at: "2026-02-30" }],
      ["expires_at", { expires_at: "2026-12-31T10:00:00" }],
      ["unknown", { unknown: 1 }],
    ];
    const before = await s.services.keys.list();
    for (const [field, body] of bad) {
      const created = await adminCall(s, "POST", `/admin/v1/accounts/${s.accountId}/keys`, { body });
      expectErrorResponse(created, 400, "invalid_request");
      expect(created.json.error, show(created)).toContain(field);
      const changed = await adminCall(s, "PATCH", `/admin/v1/keys/${before[0].id}`, { body });
      expectErrorResponse(changed, 400, "invalid_request");
    }
    expect(await s.services.keys.list(), "nothing changed").toEqual(before);
    const missing = await adminCall(s, "PATCH", "/admin/v1/keys/key_missing", { body: { name: "x" } });
    expectErrorResponse(missing, 404, "key_not_found");
  });
});
