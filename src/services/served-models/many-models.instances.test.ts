import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chargeFor } from "../../money/money.js";
import { buildServices, type Services } from "../build.js";
import { judgmentBody } from "../../testing/billing-http.js";
import { deleteRedisKeys, newTestDatabase, REDIS_TEST_URL, type TestDatabase } from "../../testing/databases.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { postWithKey, show, type CapturedResponse } from "../../testing/http-client.js";
import { startInstance, untilHealthy, type Instance } from "../../testing/instances.js";
import { addTestAccount, startTestServer, TEST_ADMIN_TOKEN, testConfig, type TestServer } from "../../testing/server.js";

/**
 * Two `judge serve` processes with the same JUDGE_MODELS (the in-process tiny model "small" and
 * the systemone gateway "big" at ×3 in front of a real third instance), on one PostgreSQL schema
 * and one Redis prefix: per-model charges and allowance units stay exact under concurrency.
 */

let database: TestDatabase;
let services: Services;
let prefix: string;
let upstream: TestServer;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  upstream = await startTestServer();
  database = newTestDatabase("postgres");
  prefix = `test:many-models:${process.pid}:${Date.now()}:`;
  const dir = mkdtempSync(join(tmpdir(), "judge-many-models-instances-"));
  const file = join(dir, "models.json");
  writeFileSync(
    file,
    JSON.stringify({
      models: [
        { id: "small", engine: "llama", model: await tinyFixturePath(), threads: 1, slots: 1 },
        { id: "big", engine: "systemone", url: upstream.url, key_env: "BIG_UPSTREAM_KEY", price_multiplier: 3 },
      ],
    }),
  );
  const settings = {
    JUDGE_DB: database.location,
    JUDGE_DB_SCHEMA: database.schema!,
    JUDGE_REDIS_URL: REDIS_TEST_URL,
    JUDGE_REDIS_PREFIX: prefix,
    JUDGE_MODELS: file,
    BIG_UPSTREAM_KEY: upstream.key,
    JUDGE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    JUDGE_LOG_LEVEL: "warn",
  };
  services = await buildServices(testConfig(database, { redisPrefix: prefix }));
  [a, b] = await Promise.all([startInstance(settings), startInstance(settings)]);
  for (const instance of [a, b]) await untilHealthy(instance);
}, 120_000);

afterAll(async () => {
  for (const instance of [a, b]) await instance?.kill();
  await services?.close();
  await database?.drop();
  await deleteRedisKeys(prefix);
  await upstream?.close();
});

const statuses = (responses: CapturedResponse[]) => {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

describe("many models across two instances on PostgreSQL and Redis", () => {
  it("concurrent requests to both models through both instances: each charged at its model's price, the balance never below zero", async () => {
    const payer = await addTestAccount(services, { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 40_000 });
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        postWithKey({ url: i % 2 === 0 ? a.url : b.url, key: payer.key }, "/v1/systemone", { ...judgmentBody(1), model: i % 4 < 2 ? "small" : "big" }),
      ),
    );
    const answered = responses.filter((r) => r.status === 200);
    const message = JSON.stringify({ statuses: statuses(responses), sample: responses.find((r) => r.status !== 200 && r.status !== 402)?.text });
    expect(answered.length + (statuses(responses)[402] ?? 0), message).toBe(200);
    expect(new Set(answered.map((r) => r.json.model)), message).toEqual(new Set(["small", "big"]));
    const entries = (await services.accounts.entries(payer.accountId, { limit: 500 })).filter((e) => e.kind === "charge");
    expect(entries.length, message).toBe(answered.length);
    for (const entry of entries) {
      expect(entry.amountMicro, JSON.stringify(entry)).toBe(-chargeFor(entry.inputTokens, 1_000_000, entry.model === "big" ? 3000 : 1000));
    }
    const spent = entries.reduce((sum, e) => sum - e.amountMicro, 0);
    const summary = await services.accounts.summary(payer.accountId);
    expect(summary!.usage, message).toMatchObject({ balanceMicro: 40_000 - spent, reservedMicro: 0 });
    expect(summary!.usage.balanceMicro, message).toBeGreaterThanOrEqual(0);
    expect(await services.ledger.check(), message).toMatchObject({ ok: true, mismatches: [] });
  }, 120_000);

  it("an allowance of 30 questions pays exactly 10 one-question requests to the ×3 model across both instances", async () => {
    const payer = await addTestAccount(services, { plan: { name: "thirty", allowanceQuestions: 30, pricePerMillion: 1_000_000 } });
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postWithKey({ url: i % 2 === 0 ? a.url : b.url, key: payer.key }, "/v1/systemone", { ...judgmentBody(1), model: "big" }),
      ),
    );
    const message = JSON.stringify({ statuses: statuses(responses), sample: show(responses.find((r) => r.status !== 200) ?? responses[0]) });
    expect(statuses(responses), message).toEqual({ 200: 10, 402: 30 });
    const entries = (await services.accounts.entries(payer.accountId, { limit: 100 })).filter((e) => e.kind === "plan");
    expect(
      entries.map((e) => [e.model, e.questions]),
      message,
    ).toEqual(Array.from({ length: 10 }, () => ["big", 3]));
    expect(await services.ledger.check(), message).toMatchObject({ ok: true, mismatches: [] });
  }, 120_000);
});
