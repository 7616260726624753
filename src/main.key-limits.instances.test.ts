import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { windowStart } from "./limits/types.js";
import { buildServices, type Services } from "./services/build.js";
import { judgmentBody } from "./testing/billing-http.js";
import { deleteRedisKeys, newTestDatabase, REDIS_TEST_URL, STORE_ENGINES, type TestDatabase } from "./testing/databases.js";
import { tinyFixturePath } from "./testing/fixture.js";
import { postJudgment, show, type CapturedResponse } from "./testing/http-client.js";
import { startInstance, untilHealthy, type Instance } from "./testing/instances.js";
import { addTestAccount, TEST_ADMIN_TOKEN, testConfig } from "./testing/server.js";

/**
 * A key's budget and its own per-minute limit across two `judge serve` processes on one
 * database (SQLite file, or PostgreSQL with Redis for the limits): concurrent requests spread
 * over both never spend past the key's budget nor pass its limit, as if there were one instance.
 */

const statuses = (responses: CapturedResponse[]) => {
  const counts: Record<string, number> = {};
  for (const r of responses) {
    const label = r.status === 200 ? "200" : `${r.status} ${(r.json as { code?: string } | undefined)?.code}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
};

describe.each(STORE_ENGINES)("two instances on one %s database", (engine) => {
  let database: TestDatabase;
  let services: Services;
  let prefix: string;
  let instances: Instance[] = [];

  beforeAll(async () => {
    database = newTestDatabase(engine);
    prefix = `test:key-limits:${process.pid}:${Date.now()}:`;
    const redis: Record<string, string> = engine === "postgres" ? { JUDGE_REDIS_URL: REDIS_TEST_URL, JUDGE_REDIS_PREFIX: prefix } : {};
    const settings: Record<string, string> = {
      JUDGE_DB: database.location,
      ...(database.schema ? { JUDGE_DB_SCHEMA: database.schema } : {}),
      ...redis,
      JUDGE_MODEL: await tinyFixturePath(),
      JUDGE_THREADS: "1",
      JUDGE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    };
    services = await buildServices(testConfig(database, engine === "postgres" ? { redisPrefix: prefix } : {}));
    // The first migrates; the second then finds the schema current.
    instances = [await startInstance(settings)];
    instances.push(await startInstance(settings));
    for (const instance of instances) await untilHealthy(instance);
  }, 120_000);

  afterAll(async () => {
    for (const instance of instances) await instance.kill();
    await services?.close();
    await database?.drop();
    if (engine === "postgres") await deleteRedisKeys(prefix);
  });

  it("300 concurrent requests on a key whose budget covers exactly k: k answered, the rest 402 key_budget_exhausted", async () => {
    const tenant = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000_000 });
    const first = await postJudgment({ url: instances[0].url, key: tenant.key }, judgmentBody(1));
    expect(first.status, show(first)).toBe(200);
    const cost = (first.json as { usage: { input_tokens: number } }).usage.input_tokens;

    const k = 23;
    const { key, record } = await services.keys.create({ accountId: tenant.accountId, name: "capped", budgetMicro: k * cost + cost - 1 });
    const responses = await Promise.all(Array.from({ length: 300 }, (_, i) => postJudgment({ url: instances[i % 2].url, key }, judgmentBody(1))));
    const [after] = (await services.keys.list({ accountId: tenant.accountId })).filter((r) => r.id === record.id);
    const message = JSON.stringify({ statuses: statuses(responses), key: after, sample: responses.find((r) => r.status !== 200 && r.status !== 402)?.text });
    expect(statuses(responses), message).toEqual({ "200": k, "402 key_budget_exhausted": 300 - k });
    expect([after.spentMicro, after.heldMicro], message).toEqual([k * cost, 0]);
    const answeredBy = new Set(responses.map((r, i) => (r.status === 200 ? i % 2 : -1)).filter((x) => x >= 0));
    expect([...answeredBy].sort(), message).toEqual([0, 1]);
    const charges = (await services.accounts.entries(tenant.accountId, { limit: 500 })).filter((e) => e.kind === "charge");
    expect(charges.length, message).toBe(k + 1);
    expect(await services.ledger.check(), message).toMatchObject({ ok: true, mismatches: [] });
  }, 120_000);

  it("a key's own limit L per minute lets exactly L through across both instances, below the plan's", async () => {
    const limit = 12;
    const tenant = await addTestAccount(services, { plan: { requestsPerMinute: 1000 } });
    const { key } = await services.keys.create({ accountId: tenant.accountId, requestsPerMinute: limit });
    const account = (await services.store.accounts.get(tenant.accountId))!;
    // Into a fresh window if the current one ends within 8 s.
    const end = windowStart(Date.now(), 60_000, account.createdAt % 60_000) + 60_000;
    if (end - Date.now() < 8_000) await new Promise((resolve) => setTimeout(resolve, end - Date.now() + 50));
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => postJudgment({ url: instances[i % 2].url, key }, judgmentBody(1))));
    const message = JSON.stringify(statuses(responses));
    expect(statuses(responses), message).toEqual({ "200": limit, "429 rate_limited": 40 - limit });
    for (const refused of responses.filter((r) => r.status === 429)) {
      expect((refused.json as { error: string }).error, show(refused)).toMatch(/^this key's own rate limit of 12 requests per minute/);
    }
    // The account's other key is not limited by this one's.
    expect((await postJudgment({ url: instances[1].url, key: tenant.key }, judgmentBody(1))).status).toBe(200);
  }, 90_000);
});
