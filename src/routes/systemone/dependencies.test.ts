// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JudgmentEngine } from "../../engine/types.js";
import { billingState, judgmentBody, moneyTables, waitFor } from "../../testing/billing-http.js";
import { deleteRedisKeys, newTestDatabase, REDIS_TEST_URL, STORE_ENGINES } from "../../testing/databases.js";
import { call, postJudgment, show, type Caller, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { addTestAccount, readyTinyEngine, startTestServer, type TestServer, type TestServerOptions } from "../../testing/server.js";
import { startTcpProxy, type TcpProxy } from "../../testing/tcp-proxy.js";

/**
 * A part the service depends on goes away: the database or Redis, cut off from one server by a
 * TCP proxy the test stops or freezes. Requests get a documented 502 and are charged nothing, /health says
 * which part is down, and both recover by themselves when it comes back. Redis, when configured,
 * is never replaced by counting per instance; with it, the plan's limit holds across instances.
 */

// Trust authentication: PostgreSQL never asks for it, so it is only there to prove it is never shown.
const PASSWORD = "pg-secret-never-shown";

let tiny: JudgmentEngine;
beforeAll(async () => {
  tiny = await readyTinyEngine();
});
afterAll(async () => {
  await tiny?.close();
});

/** Run after each test, last registered first: servers before the proxies and databases under them. */
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  const failures: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
});

async function server(options: TestServerOptions): Promise<TestServer> {
  const s = await startTestServer({ engine: tiny, ...options });
  cleanups.push(() => s.close());
  return s;
}

async function proxyTo(port: number): Promise<TcpProxy> {
  const proxy = await startTcpProxy({ host: "127.0.0.1", port });
  cleanups.push(() => proxy.close());
  return proxy;
}

let prefixes = 0;
/** A Redis key prefix of this test's own, its keys deleted after the test. */
function redisPrefix(): string {
  const prefix = `judge:test:${process.pid}:${Date.now().toString(36)}:${prefixes++}:`;
  cleanups.push(() => deleteRedisKeys(prefix));
  return prefix;
}

async function redisCount(key: string): Promise<string | null> {
  const redis = new Redis(REDIS_TEST_URL);
  try {
    return await redis.hget(key, "n");
  } finally {
    redis.disconnect();
  }
}

function expectOk(response: CapturedResponse): CapturedResponse {
  expect(response.status, show(response)).toBe(200);
  return response;
}

/** The documented 502: `{ error, code, detail }` only, saying nothing was charged, with no stack and no password. */
function expectDependencyDown(response: CapturedResponse, code: "database_unavailable" | "rate_limiter_unavailable") {
  expectErrorResponse(response, 502, code);
  expect(Object.keys(response.json).sort(), show(response)).toEqual(["code", "detail", "error"]);
  expect(response.json.error, show(response)).toMatch(/nothing was charged/);
  expect(response.text, show(response)).not.toMatch(/\bat .+:\d+:\d+|node_modules|\.ts\b/);
  expect(response.text, show(response)).not.toContain(PASSWORD);
  expect(response.headers.get("x-billed-to"), show(response)).toBeNull();
}

/** /health's 503: status "unavailable", the model fine, and `part` down and named. */
function expectPartDown(response: CapturedResponse, part: "database" | "rate_limiter", name: RegExp) {
  expectErrorResponse(response, 503, "service_unavailable");
  const { parts } = response.json;
  expect(response.json, show(response)).toMatchObject({ status: "unavailable", model: tiny.modelId, parts: { model: { ok: true } } });
  expect(parts[part], show(response)).toMatchObject({ ok: false, name: expect.stringMatching(name), detail: expect.any(String) });
  expect(response.json.error, show(response)).toContain(`${parts[part].name} is unavailable`);
  expect(response.text, show(response)).not.toContain(PASSWORD);
}

const health = (s: { url: string }) => call(s.url, "/health");

describe("the database goes away (PostgreSQL)", () => {
  const STATEMENT_TIMEOUT_MS = 1_000;

  /** A server on a fresh schema that it reaches only through a proxy; the test's own dumps go direct. */
  async function serverThroughProxy() {
    const database = newTestDatabase("postgres");
    cleanups.push(() => database.drop());
    const proxy = await proxyTo(5432);
    const location = `postgres://root:${PASSWORD}@127.0.0.1:${proxy.port}/test`;
    const s = await server({ database: { ...database, location }, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    expectOk(await postJudgment(s, judgmentBody(1)));
    expect((await health(s)).status).toBe(200);
    expect(proxy.open, "the server's pool is connected through the proxy").toBeGreaterThan(0);
    return { s, database, proxy, before: await moneyTables(database) };
  }

  /** While it is down: 502s that charge nothing, and /health naming PostgreSQL (without its password). */
  async function expectDown(s: TestServer, proxy: TcpProxy, timed: (ms: number, response: CapturedResponse) => void) {
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const refused = await postJudgment(s, judgmentBody(1));
      expectDependencyDown(refused, "database_unavailable");
      timed(performance.now() - started, refused);
    }
    const unhealthy = await health(s);
    expectPartDown(unhealthy, "database", new RegExp(`^PostgreSQL postgres://root:\\*+@127\\.0\\.0\\.1:${proxy.port}/test`));
    expect(unhealthy.json.parts.rate_limiter, show(unhealthy)).toBeUndefined();
  }

  /** Back: the pool reconnects by itself; the one answer after the outage is the only other entry. */
  async function expectBack(s: TestServer) {
    const back = expectOk(await postJudgment(s, judgmentBody(1)));
    const healthy = await health(s);
    expect(healthy.status, show(healthy)).toBe(200);
    const state = await billingState(s, s.accountId);
    expect(
      state.entries.map((e) => e.kind),
      JSON.stringify(state),
    ).toEqual(["plan", "plan"]);
    expect(state.entries[1].requestId, show(back)).toBe(back.headers.get("x-request-id"));
    expect(await s.services.ledger.check()).toMatchObject({ ok: true });
    const log = s.logLines.join("\n");
    expect(log, "the 502s are logged").toMatch(/database_unavailable/);
    expect(log.includes(PASSWORD), log).toBe(false);
  }

  it("refused (the server gone): POST /v1/systemone is 502 database_unavailable and charges nothing, /health is 503 naming PostgreSQL, and both recover", async () => {
    const { s, database, proxy, before } = await serverThroughProxy();
    await proxy.stop();
    // Loose on purpose: only "it failed at once rather than hanging", not a benchmark.
    await expectDown(s, proxy, (ms, refused) => expect(ms, show(refused)).toBeLessThan(10_000));
    expect(await moneyTables(database), "nothing charged or held during the outage").toEqual(before);
    await proxy.start();
    await expectBack(s);
  });

  it("silent (a partition): each request waits no longer than the statement timeout allows, then the same 502, and nothing is charged", async () => {
    const { s, database, proxy, before } = await serverThroughProxy();
    proxy.freeze();
    // At least the timeout (it waited for an answer), and not much more (the query's own
    // deadline is the statement timeout plus one second); the upper bound is loose for CI.
    await expectDown(s, proxy, (ms, refused) => {
      expect(ms, show(refused)).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS * 0.9);
      expect(ms, show(refused)).toBeLessThan(15_000);
    });
    expect(await moneyTables(database), "nothing charged or held during the outage").toEqual(before);
    // The partition ends: the connections it held survive, their late answers are discarded.
    await proxy.start();
    await expectBack(s);
  });
});

describe.each(STORE_ENGINES)("on %s", (engine) => {
  describe("Redis is configured but unreachable", () => {
    it("POST /v1/systemone is 502 rate_limiter_unavailable, never counted per instance, charges nothing; /health names Redis; both recover", async () => {
      const proxy = await proxyTo(6379);
      const redisUrl = `redis://127.0.0.1:${proxy.port}`;
      const s = await server({ store: engine, redisPrefix: redisPrefix(), redisUrl, plan: { requestsPerMinute: 5 } });
      const first = expectOk(await postJudgment(s, judgmentBody(1)));
      expect(first.headers.get("x-ratelimit-remaining"), show(first)).toBe("4");
      const before = await moneyTables(s.database);

      await proxy.stop();
      // More attempts than the limit has left: a local fallback would let some through.
      for (let i = 0; i < 6; i++) {
        const refused = await postJudgment(s, judgmentBody(1));
        expectDependencyDown(refused, "rate_limiter_unavailable");
        expect(refused.headers.get("x-ratelimit-remaining"), `no decision was made\n${show(refused)}`).toBeNull();
      }
      const unhealthy = await health(s);
      expectPartDown(unhealthy, "rate_limiter", new RegExp(`^Redis redis://127\\.0\\.0\\.1:${proxy.port}`));
      expect(unhealthy.json.parts.database, show(unhealthy)).toMatchObject({ ok: true });
      expect(await moneyTables(s.database), "nothing charged or held during the outage").toEqual(before);
      expect((await s.database.dump()).rate_windows, "nothing counted in the database instead").toEqual([]);

      await proxy.start();
      // The client reconnects in the background (within a second); /health waits for it.
      let last: CapturedResponse | undefined;
      await waitFor(
        async () => (last = await health(s)).status === 200,
        () => (last ? show(last) : "no answer"),
      );
      const back = expectOk(await postJudgment(s, judgmentBody(1)));
      expect(back.headers.get("x-ratelimit-remaining"), `Redis kept the count; the 502s counted nowhere\n${show(back)}`).toBe("3");
      const state = await billingState(s, s.accountId);
      expect(state.entries, JSON.stringify(state)).toHaveLength(2);
    });
  });

  describe("rate limits in Redis", () => {
    const L = 4;
    const limited = (r: CapturedResponse) => {
      expectErrorResponse(r, 429, "rate_limited");
      expect(r.headers.get("x-ratelimit-limit"), show(r)).toBe(String(L));
      expect(r.headers.get("x-ratelimit-remaining"), show(r)).toBe("0");
      expect(r.headers.get("retry-after"), show(r)).toBe(r.headers.get("x-ratelimit-reset"));
    };
    const resetOf = (r: CapturedResponse) => {
      const reset = Number(r.headers.get("x-ratelimit-reset"));
      expect(Number.isInteger(reset) && reset >= 1 && reset <= 60, show(r)).toBe(true);
      return reset;
    };

    it("the plan's per-minute limit exactly: L answers, then 429 with Retry-After, counted in Redis and not in the database", async () => {
      const prefix = redisPrefix();
      const s = await server({ store: engine, redisPrefix: prefix, plan: { requestsPerMinute: L } });
      const responses: CapturedResponse[] = [];
      for (let i = 0; i < L; i++) {
        const r = expectOk(await postJudgment(s, judgmentBody(1)));
        expect([r.headers.get("x-ratelimit-limit"), r.headers.get("x-ratelimit-remaining")], show(r)).toEqual([String(L), String(L - 1 - i)]);
        expect(r.headers.get("retry-after"), show(r)).toBeNull();
        responses.push(r);
      }
      const before = await moneyTables(s.database);
      for (let i = 0; i < 3; i++) {
        const r = await postJudgment(s, judgmentBody(1));
        limited(r);
        responses.push(r);
      }
      expect(await moneyTables(s.database), "429s charge nothing").toEqual(before);
      // One window: the reset only counts down.
      const resets = responses.map(resetOf);
      expect(resets, responses.map((r) => show(r)).join("\n")).toEqual([...resets].sort((a, b) => b - a));
      expect(await redisCount(`${prefix}rpm:${s.accountId}`), "the window's count, in Redis").toBe(String(L));
      expect((await s.database.dump()).rate_windows).toEqual([]);
      const state = await billingState(s, s.accountId);
      expect(state.entries, JSON.stringify(state)).toHaveLength(L);
    });

    it("two instances sharing Redis let exactly L through in total, in turn or all at once", async () => {
      const prefix = redisPrefix();
      const database = newTestDatabase(engine);
      cleanups.push(() => database.drop());
      const a = await server({ database, redisPrefix: prefix, plan: { requestsPerMinute: L } });
      const b = await server({ database, redisPrefix: prefix });
      const callers: Caller[] = [a, { url: b.url, key: a.key }];

      // In turn: each instance sees the count the other left.
      const remaining: (string | null)[] = [];
      for (let i = 0; i < L; i++) remaining.push(expectOk(await postJudgment(callers[i % 2], judgmentBody(1))).headers.get("x-ratelimit-remaining"));
      expect(remaining).toEqual(Array.from({ length: L }, (_, i) => String(L - 1 - i)));
      for (const caller of callers) limited(await postJudgment(caller, judgmentBody(1)));

      // All at once, for another account: 3L requests spread over both instances.
      const other = await addTestAccount(b.services, { plan: { requestsPerMinute: L } });
      const burst = await Promise.all(Array.from({ length: 3 * L }, (_, i) => postJudgment({ url: [a, b][i % 2].url, key: other.key }, judgmentBody(1))));
      const message = burst.map((r) => show(r)).join("\n");
      expect(burst.filter((r) => r.status === 200).length, message).toBe(L);
      for (const r of burst.filter((r) => r.status !== 200)) limited(r);
      const passed = burst.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-ratelimit-remaining")));
      expect(
        passed.sort((x, y) => x - y),
        message,
      ).toEqual(Array.from({ length: L }, (_, i) => i));
      const charged = await Promise.all([a.accountId, other.accountId].map(async (id) => (await billingState(a, id)).entries.length));
      expect(charged, "one ledger entry per answer, on each account").toEqual([L, L]);
      expect((await database.dump()).rate_windows).toEqual([]);
    });
  });
});
