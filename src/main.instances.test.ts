import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { windowStart } from "./limits/types.js";
import { buildServices, type Services } from "./services/build.js";
import { adminCall } from "./testing/admin-client.js";
import { judgmentBody } from "./testing/billing-http.js";
import { deleteRedisKeys, newTestDatabase, REDIS_TEST_URL, type TestDatabase } from "./testing/databases.js";
import { tinyFixturePath } from "./testing/fixture.js";
import { postJudgment, show, type CapturedResponse } from "./testing/http-client.js";
import { startInstance, untilHealthy, type Instance } from "./testing/instances.js";
import { addTestAccount, TEST_ADMIN_TOKEN, testConfig } from "./testing/server.js";

/**
 * Several stateless instances behind a load balancer, as real processes: two `judge serve`
 * processes on the tiny model and one that holds every request (an engine that never answers),
 * all on one PostgreSQL schema and one Redis prefix. Money, limits, keys and idempotency must
 * behave as if there were one instance.
 */

let database: TestDatabase;
let services: Services;
let prefix: string;
let a: Instance;
let b: Instance;
let holding: Instance;

beforeAll(async () => {
  database = newTestDatabase("postgres");
  prefix = `test:instances:${process.pid}:${Date.now()}:`;
  const settings = {
    JUDGE_DB: database.location,
    JUDGE_DB_SCHEMA: database.schema!,
    JUDGE_REDIS_URL: REDIS_TEST_URL,
    JUDGE_REDIS_PREFIX: prefix,
    JUDGE_MODEL: await tinyFixturePath(),
    JUDGE_THREADS: "1",
    JUDGE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    JUDGE_SWEEP_INTERVAL_MS: "200",
    JUDGE_RESERVATION_GRACE_MS: "0",
    JUDGE_LOG_LEVEL: "info",
  };
  // The same configuration as the instances, for setting accounts up and reading the results.
  services = await buildServices(testConfig(database, { redisPrefix: prefix }));
  [a, b] = await Promise.all([startInstance(settings), startInstance(settings)]);
  // Its holds expire a second after they are taken, so the others' sweepers can be seen at work.
  holding = await startInstance({ ...settings, JUDGE_REQUEST_TIMEOUT_MS: "1000" }, { hanging: true });
  for (const instance of [a, b]) await untilHealthy(instance);
}, 120_000);

afterAll(async () => {
  for (const instance of [a, b, holding]) await instance?.kill();
  await services?.close();
  await database?.drop();
  await deleteRedisKeys(prefix);
});

const statuses = (responses: CapturedResponse[]) => {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

/** Sleeps into a fresh window of the account's minute if the current one ends within `marginMs`. */
async function freshMinute(createdAt: number, marginMs = 8_000): Promise<void> {
  const end = windowStart(Date.now(), 60_000, createdAt % 60_000) + 60_000;
  if (end - Date.now() < marginMs) await new Promise((resolve) => setTimeout(resolve, end - Date.now() + 50));
}

describe("two instances on one PostgreSQL and one Redis", () => {
  it("1,000 concurrent requests against a balance covering exactly k: exactly k answered, the rest 402, never negative", async () => {
    // One request first, to learn what a request costs: 1 µ€ per input token.
    const probe = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
    const first = await postJudgment({ url: a.url, key: probe.key }, judgmentBody(1));
    expect(first.status, show(first)).toBe(200);
    const cost = (first.json as { usage: { input_tokens: number } }).usage.input_tokens;

    const k = 37;
    const payer = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: k * cost });
    const responses = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => postJudgment({ url: i % 2 === 0 ? a.url : b.url, key: payer.key }, judgmentBody(1))),
    );
    const summary = await services.accounts.summary(payer.accountId);
    const charges = (await services.accounts.entries(payer.accountId, { limit: 500 })).filter((e) => e.kind === "charge");
    const message = JSON.stringify({
      statuses: statuses(responses),
      usage: summary?.usage,
      charges: charges.length,
      sample: responses.find((r) => r.status !== 200 && r.status !== 402)?.text,
    });
    expect(statuses(responses), message).toEqual({ 200: k, 402: 1000 - k });
    expect(summary!.usage, message).toMatchObject({ balanceMicro: 0, reservedMicro: 0 });
    expect(
      charges.map((e) => e.amountMicro),
      message,
    ).toEqual(Array.from({ length: k }, () => -cost));
    // Both instances answered some of them.
    const answeredBy = new Set(responses.map((r, i) => (r.status === 200 ? i % 2 : -1)).filter((x) => x >= 0));
    expect([...answeredBy].sort(), message).toEqual([0, 1]);
    expect(await services.ledger.check(), message).toMatchObject({ ok: true, mismatches: [] });
  }, 120_000);

  it("a per-minute limit L lets exactly L through across both instances, the rest 429 with Retry-After", async () => {
    const limit = 30;
    const limited = await addTestAccount(services, { plan: { requestsPerMinute: limit } });
    const account = (await services.store.accounts.get(limited.accountId))!;
    await freshMinute(account.createdAt);
    const responses = await Promise.all(
      Array.from({ length: 90 }, (_, i) => postJudgment({ url: i % 2 === 0 ? a.url : b.url, key: limited.key }, judgmentBody(1))),
    );
    const message = JSON.stringify(statuses(responses));
    expect(statuses(responses), message).toEqual({ 200: limit, 429: 90 - limit });
    for (const refused of responses.filter((r) => r.status === 429)) {
      expect(Number(refused.headers.get("retry-after")), show(refused)).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get("x-ratelimit-remaining"), show(refused)).toBe("0");
    }
  }, 90_000);

  it("a key revoked, a plan changed or a balance topped up through one instance applies on the other's very next request", async () => {
    const tenant = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 } });
    const broke = await postJudgment({ url: b.url, key: tenant.key }, judgmentBody(1));
    expect(broke.status, show(broke)).toBe(402);

    const topUp = await adminCall(a, "POST", `/admin/v1/accounts/${tenant.accountId}/top-ups`, { body: { amount: "1.00" } });
    expect(topUp.status, show(topUp)).toBe(201);
    const paid = await postJudgment({ url: b.url, key: tenant.key }, judgmentBody(1));
    expect([paid.status, paid.headers.get("x-billed-to")], show(paid)).toEqual([200, "balance"]);

    const plan = await services.plans.create({ name: `generous ${Date.now()}`, requestsPerMinute: 1000, allowanceQuestions: 100, pricePerMillion: 0 });
    const moved = await adminCall(a, "PUT", `/admin/v1/accounts/${tenant.accountId}/plan`, { body: { plan: plan.id } });
    expect(moved.status, show(moved)).toBe(200);
    const onPlan = await postJudgment({ url: b.url, key: tenant.key }, judgmentBody(1));
    expect([onPlan.status, onPlan.headers.get("x-billed-to"), onPlan.headers.get("x-ratelimit-limit")], show(onPlan)).toEqual([200, "plan", "1000"]);

    const [record] = await services.keys.list({ accountId: tenant.accountId });
    const revoked = await adminCall(a, "POST", `/admin/v1/keys/${record.id}/revoke`);
    expect(revoked.status, show(revoked)).toBe(200);
    const refused = await postJudgment({ url: b.url, key: tenant.key }, judgmentBody(1));
    expect([refused.status, (refused.json as { code?: string }).code], show(refused)).toEqual([401, "invalid_api_key"]);
  });

  it("an Idempotency-Key works across instances: 409 while the first runs elsewhere, a replay from another instance once done", async () => {
    const tenant = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
    const running = postJudgment({ url: holding.url, key: tenant.key }, judgmentBody(2), { headers: { "idempotency-key": "held-1" } });
    await until(async () => (await services.store.billing.standing(tenant.accountId, 0))!.heldMicro > 0, "the held request's charge");
    const busy = await postJudgment({ url: a.url, key: tenant.key }, judgmentBody(2), { headers: { "idempotency-key": "held-1" } });
    expect([busy.status, (busy.json as { code?: string }).code], show(busy)).toEqual([409, "idempotency_key_in_use"]);
    expect((await running).status, "the holding instance gives up after its 1 s timeout").toBe(502);

    const done = await postJudgment({ url: a.url, key: tenant.key }, judgmentBody(1), { headers: { "idempotency-key": "done-1" } });
    const replay = await postJudgment({ url: b.url, key: tenant.key }, judgmentBody(1), { headers: { "idempotency-key": "done-1" } });
    expect([done.status, replay.status, replay.headers.get("idempotent-replayed")], show(replay)).toEqual([200, 200, "true"]);
    expect(replay.text, show(replay)).toBe(done.text);
    const charges = (await services.accounts.entries(tenant.accountId)).filter((e) => e.kind === "charge");
    expect(charges.length, JSON.stringify(charges)).toBe(1);
  });

  it("an instance killed while holding: its hold comes back through the others' sweepers, once, and nothing is charged", async () => {
    const tenant = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 });
    const inFlight = postJudgment({ url: holding.url, key: tenant.key }, judgmentBody(1)).catch((error: unknown) => error);
    await until(async () => (await services.store.billing.standing(tenant.accountId, 0))!.heldMicro > 0, "the hold");
    await holding.kill();
    expect(await inFlight, "the client saw the connection die").toBeInstanceOf(Error);
    await until(async () => (await services.store.billing.standing(tenant.accountId, 0))!.heldMicro === 0, "the sweep", 10_000);
    const summary = await services.accounts.summary(tenant.accountId);
    const entries = await services.accounts.entries(tenant.accountId);
    const message = JSON.stringify({ usage: summary?.usage, entries });
    expect(summary!.usage, message).toMatchObject({ balanceMicro: 1_000_000, reservedMicro: 0 });
    expect(
      entries.map((e) => e.kind),
      message,
    ).toEqual(["top_up"]);
    expect(await services.ledger.check(), message).toMatchObject({ ok: true });
    expect(a.stderr() + b.stderr(), "one of the other instances logged the release").toContain("released expired reservations");
  }, 30_000);
});

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
