import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../config/environment.js";
import { start } from "../../composition.js";
import { adminCall, TINY_JUDGMENT } from "../../testing/admin-client.js";
import { hangingEngine } from "../../testing/hanging-engine.js";
import { freePort } from "../../testing/instances.js";
import { call, postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { parseExposition, sampleValue, type Sample } from "../../testing/prometheus.js";
import { addTestAccount, readyTinyEngine, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../../testing/server.js";
import { createStallingEngine, type StallingEngine } from "../../testing/stalling-engine.js";

/** GET /metrics: scraped after real requests, parsed, and every counter checked to have moved by exactly what they did. */

let server: TestServer;
let engine: StallingEngine;
beforeAll(async () => {
  engine = createStallingEngine(await readyTinyEngine());
  server = await startTestServer({ engine });
});
afterAll(async () => {
  engine?.releaseAll();
  await server?.close();
  await engine?.close();
});

async function scrape(target: { url: string } = server): Promise<Sample[]> {
  const response = await adminCall(target, "GET", "/metrics");
  expect(response.status, show(response)).toBe(200);
  expect(response.headers.get("content-type"), show(response)).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(response.text);
}

/** How much each sample moved between two scrapes. */
function mover(before: Sample[], after: Sample[]) {
  return (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
}

const judgments = (labels: Record<string, string>) => ({ name: "judge_http_requests_total", labels: { method: "POST", route: "/v1/systemone", ...labels } });

describe("GET /metrics with the admin token", () => {
  it("counts requests by route and status, billing outcomes, 429s, engine work and store calls by exactly what was sent", async () => {
    // A: allowance of one question, no balance, 5 requests a minute. B: no allowance, a balance.
    const a = { url: server.url, ...(await addTestAccount(server.services, { plan: { name: "metrics A", requestsPerMinute: 5, allowanceQuestions: 1 } })) };
    const b = { url: server.url, ...(await addTestAccount(server.services, { plan: { name: "metrics B", allowanceQuestions: 0 }, balanceMicro: 1_000_000 })) };
    const before = await scrape();

    const responses: CapturedResponse[] = [];
    const send = async (caller: { url: string; key: string }, body: unknown, options = {}) => {
      const response = await postJudgment(caller, body, options);
      responses.push(response);
      return response;
    };
    const planPaid = await send(a, TINY_JUDGMENT); // 200, plan
    await send(a, TINY_JUDGMENT); // 402: allowance used, no balance
    await send(a, { questions: {} }); // 400
    await send(a, "{not json"); // 400
    await send(a, { state: "x" }); // 400
    await send(a, TINY_JUDGMENT); // 429: the sixth attempt this minute
    await send(a, TINY_JUDGMENT, { key: null }); // 401, not counted by the rate limit
    const idempotent = { headers: { "idempotency-key": "metrics-replay-1" } };
    const balancePaid = await send(b, TINY_JUDGMENT, idempotent); // 200, balance
    const replay = await send(b, TINY_JUDGMENT, idempotent); // 200, replayed: billed once
    const everything = responses.map((r) => show(r)).join("\n");
    expect(
      responses.map((r) => r.status),
      everything,
    ).toEqual([200, 402, 400, 400, 400, 429, 401, 200, 200]);
    expect(replay.headers.get("idempotent-replayed"), show(replay)).toBe("true");
    const duplicate = await adminCall(server, "POST", "/admin/v1/plans", {
      body: { name: "metrics A", requests_per_minute: 1, allowance_questions: 1, price_per_million: "1" },
    });
    expect(duplicate.status, show(duplicate)).toBe(409);

    const after = await scrape();
    const moved = mover(before, after);
    const report = `${everything}\n${show(duplicate)}`;
    for (const [status, count] of [
      ["200", 3],
      ["402", 1],
      ["400", 3],
      ["429", 1],
      ["401", 1],
    ] as const) {
      const { name, labels } = judgments({ status });
      expect(moved(name, labels), `${status}\n${report}`).toBe(count);
    }
    expect(moved("judge_http_request_duration_seconds_count", { method: "POST", route: "/v1/systemone" }), report).toBe(9);
    expect(moved("judge_http_requests_total", { method: "POST", route: "/admin/v1/plans", status: "409" }), report).toBe(1);

    expect(moved("judge_billing_outcomes_total", { outcome: "plan" }), report).toBe(1);
    expect(moved("judge_billing_outcomes_total", { outcome: "balance" }), report).toBe(1);
    expect(moved("judge_billing_outcomes_total", { outcome: "insufficient_funds" }), report).toBe(1);
    expect(moved("judge_rate_limit_rejections_total"), report).toBe(1);

    // Prepared: the two answers and the 402 (refused after counting its tokens); evaluated: the two answers.
    expect(moved("judge_engine_call_duration_seconds_count", { phase: "prepare", outcome: "ok" }), report).toBe(3);
    expect(moved("judge_engine_call_duration_seconds_count", { phase: "evaluate", outcome: "ok" }), report).toBe(2);
    const answered = [planPaid, balancePaid];
    const tokens = answered.reduce((sum, r) => sum + r.json.usage.input_tokens, 0);
    expect(moved("judge_engine_input_tokens_total"), report).toBe(tokens);
    const busy = answered.reduce((sum, r) => sum + r.json.timing_ms / 1000, 0);
    // timing_ms is rounded to a microsecond in each response.
    expect(Math.abs(moved("judge_engine_busy_seconds_total") - busy), report).toBeLessThan(2e-6);
    expect(sampleValue(after, "judge_engine_queue_depth", { phase: "evaluate" }), report).toBe(0);

    expect(moved("judge_store_operation_duration_seconds_count", { operation: "billing.reserve" }), report).toBe(3);
    expect(moved("judge_store_operation_duration_seconds_count", { operation: "billing.settle" }), report).toBe(2);
    expect(moved("judge_store_errors_total", { operation: "plans.create", code: "plan_exists" }), report).toBe(1);
    expect(moved("judge_store_errors_total", { operation: "billing.reserve", code: "database_unavailable" }), report).toBe(0);

    expect(sampleValue(after, "process_resident_memory_bytes"), "RSS").toBeGreaterThan(10_000_000);
    expect(sampleValue(after, "nodejs_heap_size_used_bytes"), "heap").toBeGreaterThan(1_000_000);
  });

  it("shows a request in the engine's queue depth while the model runs, and not after", async () => {
    const stall = engine.stall();
    let reply: Promise<CapturedResponse> | undefined;
    try {
      reply = postJudgment(server, TINY_JUDGMENT);
      await stall.entered;
      const during = await scrape();
      expect(sampleValue(during, "judge_engine_queue_depth", { phase: "evaluate" }), "one request in the engine").toBe(1);
    } finally {
      stall.release();
    }
    const answered = await reply!;
    expect(answered.status, show(answered)).toBe(200);
    expect(sampleValue(await scrape(), "judge_engine_queue_depth", { phase: "evaluate" }), "after the answer").toBe(0);
  });
});

describe("GET /metrics without the admin token", () => {
  const refusals: [who: string, authorization: () => string | null][] = [
    ["no Authorization header", () => null],
    ["an API key", () => `Bearer ${server.key}`],
    ["a wrong token", () => "Bearer not-the-admin-token-0123456789abcdef"],
  ];
  it.each(refusals)("is a 404 like an unknown path, with no metric in it: %s", async (_who, authorization) => {
    const header = authorization();
    const response = await adminCall(server, "GET", "/metrics", header === null ? { token: null } : { authorization: header });
    expect(response.status, show(response)).toBe(404);
    expect(response.json?.code, show(response)).toBe("not_found");
    expect(response.text, show(response)).not.toMatch(/judge_|process_|nodejs_/);
  });

  it("does not exist on a server without an admin token, whatever is sent", async () => {
    const adminOff = await startTestServer({ adminToken: null, engine: hangingEngine() });
    try {
      const response = await adminCall(adminOff, "GET", "/metrics");
      expect(response.status, show(response)).toBe(404);
      expect(response.text, show(response)).not.toMatch(/judge_/);
    } finally {
      await adminOff.close();
    }
  });
});

describe("JUDGE_METRICS_PORT", () => {
  let dir: string;
  beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), "judge-metrics-"))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves /metrics on 127.0.0.1 without a token (and nothing else), while the main port still wants it", async () => {
    const metricsPort = await freePort();
    const config = parseConfig({
      JUDGE_DB: join(dir, "judge.db"),
      JUDGE_PORT: "0",
      JUDGE_METRICS_PORT: String(metricsPort),
      JUDGE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      JUDGE_LOG_LEVEL: "silent",
    });
    const running = await start(config, { engine: hangingEngine() });
    try {
      const main = `http://127.0.0.1:${running.port}`;
      await call(main, "/health");
      const open = await call(`http://127.0.0.1:${metricsPort}`, "/metrics");
      expect(open.status, show(open)).toBe(200);
      const samples = parseExposition(open.text);
      expect(sampleValue(samples, "judge_http_requests_total", { method: "GET", route: "/health", status: "200" }), open.text).toBe(1);
      const other = await call(`http://127.0.0.1:${metricsPort}`, "/health");
      expect(other.status, show(other)).toBe(404);
      const guarded = await call(main, "/metrics");
      expect(guarded.status, show(guarded)).toBe(404);
    } finally {
      await running.close();
    }
  });
});
