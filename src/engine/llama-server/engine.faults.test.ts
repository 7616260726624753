// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { moneyTables } from "../../testing/billing-http.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { call, postJudgment, show } from "../../testing/http-client.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { startLlamaServerStandIn, type LlamaServerStandIn, type StandInMode } from "../../testing/llama-server-standin.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { startTcpProxy, type TcpProxy } from "../../testing/tcp-proxy.js";
import { EngineFailedError, EngineUnavailableError, type JudgmentEngine } from "../types.js";
import { createLlamaServerEngine } from "./engine.js";
import { remoteOptions } from "./test-helpers.js";

/** What goes wrong between us and llama-server ends in the right error, a 502, and no charge. */

const KEY = "llama-server-test-key";
const QUESTIONS: Question[] = [
  { type: "choice", instructions: "Pick one.", criteria: { refund: null, wait: "nothing to do", escalate: null } },
  { type: "score", instructions: "How urgent?", criteria: ["low", "medium", "high"] },
];
const PROMPT = buildPrompt({ ticket: "charged twice" }, QUESTIONS);
const BODY = { state: { ticket: "charged twice" }, questions: { action: QUESTIONS[0], urgency: QUESTIONS[1] } };
const FAST_RETRY = { retryMs: { first: 20, max: 100 } };

let upstream: LlamaServerProcess;
const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  upstream = await startLlamaServer({ model: await tinyFixturePath(), slots: 2, extraArgs: ["--api-key", KEY] });
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
afterAll(async () => {
  await upstream?.stop();
});

/** An engine on `url` (closed after the test), with the upstream's key. */
function engineOn(url: string, timeoutMs = 10_000) {
  const engine = createLlamaServerEngine(remoteOptions(url, { server: { url, key: KEY, timeoutMs } }), FAST_RETRY);
  cleanup.push(() => engine.close());
  return engine;
}

async function standIn(mode: StandInMode = "pass"): Promise<LlamaServerStandIn> {
  const stand = await startLlamaServerStandIn(upstream.url, mode);
  cleanup.push(() => stand.close());
  return stand;
}

async function server(engine: JudgmentEngine): Promise<TestServer> {
  const s = await startTestServer({ engine, plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });
  cleanup.push(() => s.close());
  return s;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => new Error(`expected a failure, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

/** A request through HTTP: 502 with `code`, nothing charged or held, the ledger consistent. */
async function expect502Uncharged(s: TestServer, code: string) {
  const before = await moneyTables(s.database);
  const response = await postJudgment(s, BODY);
  expectErrorResponse(response, 502, code);
  expect(await moneyTables(s.database), show(response)).toEqual(before);
  expect(await s.services.ledger.check()).toMatchObject({ ok: true });
  return response;
}

describe("connecting", () => {
  it("names the model and the server (no credentials), with its slots, and answers", async () => {
    const engine = engineOn(upstream.url);
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "ready" });
    expect(engine.modelId).toBe("tiny-seed1");
    expect(engine.description).toEqual({ kind: "llama-server", backend: upstream.url, slots: 2, exactness: { mode: "strict", bound: 1e-9, measured: 0 } });
    const result = await engine.evaluate(await engine.prepare(PROMPT));
    expect(
      result.labelLogProbs.map((row) => row.length),
      JSON.stringify(result),
    ).toEqual([3, 3]);
  });

  it("keeps trying while the server is unreachable, says so, and is ready once it answers", async () => {
    const proxy: TcpProxy = await startTcpProxy({ host: "127.0.0.1", port: upstream.port });
    cleanup.push(() => proxy.close());
    await proxy.stop();
    const url = `http://127.0.0.1:${proxy.port}`;
    const engine = engineOn(url);
    const status = await engine.status();
    expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringContaining(`cannot reach ${url}`) });
    expect(String(await failure(engine.prepare(PROMPT)))).toMatch(/EngineUnavailableError: .*still connecting/);
    await proxy.start();
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "ready" });
  });

  it("says loading while the server loads its model (503), and is ready once it has", async () => {
    const stand = await standIn("loading");
    const engine = engineOn(stand.url);
    const status = await engine.status();
    expect(status, JSON.stringify(status)).toEqual({ state: "loading", detail: `the model server at ${stand.url} is loading the model` });
    const s = await server(engine);
    const health = await call(s.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.json?.status, show(health)).toBe("loading");
    stand.mode = "pass";
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "ready" });
  });

  it("a wrong key: the server's 401 in the status, and no answers", async () => {
    const engine = createLlamaServerEngine(remoteOptions(upstream.url, { server: { url: upstream.url, key: "wrong", timeoutMs: 5_000 } }), FAST_RETRY);
    cleanup.push(() => engine.close());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const status = await engine.status();
    expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringMatching(/\/props answered 401/) });
    expect(await failure(engine.prepare(PROMPT))).toBeInstanceOf(EngineUnavailableError);
  });

  it("close() stops the attempts: ready settles and the status says closed", async () => {
    const engine = createLlamaServerEngine(remoteOptions("http://127.0.0.1:9"), FAST_RETRY);
    await engine.close();
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "failed", detail: "engine closed" });
  });
});

describe("refusing a server that would answer inexactly", () => {
  it("flash attention on (llama-server's default -fa auto on CPU): failed, naming -fa off", async () => {
    const withFlash = await startLlamaServer({ model: await tinyFixturePath(), slots: 1, flashAttention: "auto" });
    cleanup.push(() => withFlash.stop());
    const engine = createLlamaServerEngine(remoteOptions(withFlash.url), FAST_RETRY);
    cleanup.push(() => engine.close());
    await engine.ready;
    const status = await engine.status();
    expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringContaining("-fa off") });
    const s = await server(engine);
    const health = await call(s.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.text, show(health)).toContain("-fa off");
    await expect502Uncharged(s, "model_unavailable");
  });

  for (const [mode, message] of [
    ["post-sampling", /post_sampling_probs/],
    ["processed-as-logprobs", /processed probabilities|post_sampling_probs/],
    ["ignores-bias", /ignores? logit_bias/],
  ] as const) {
    it(`a server that ${mode.replace(/-/g, " ")} from the start: failed at start-up, never answers`, async () => {
      const stand = await standIn(mode);
      const engine = engineOn(stand.url);
      await engine.ready;
      const status = await engine.status();
      expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringMatching(message) });
      expect(await failure(engine.prepare(PROMPT))).toBeInstanceOf(EngineUnavailableError);
    });
  }
});

describe("a server that goes wrong after start-up", () => {
  it("killed: EngineUnavailableError, status failed with the URL and reason, 502 model_unavailable, nothing charged, /health 503", async () => {
    const doomed = await startLlamaServer({ model: await tinyFixturePath(), slots: 1 });
    cleanup.push(() => doomed.stop());
    const engine = createLlamaServerEngine(remoteOptions(doomed.url), FAST_RETRY);
    cleanup.push(() => engine.close());
    await engine.ready;
    const prepared = await engine.prepare(PROMPT);
    await doomed.kill();
    const error = await failure(engine.evaluate(prepared));
    expect(error, String(error)).toBeInstanceOf(EngineUnavailableError);
    expect(String(error)).toContain(`cannot reach ${doomed.url}`);
    const status = await engine.status();
    expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringContaining(`cannot reach ${doomed.url}/props`) });
    const s = await server(engine);
    await expect502Uncharged(s, "model_unavailable");
    const health = await call(s.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.text, show(health)).toContain(doomed.url);
  });

  it("too slow (a network partition): EngineUnavailableError after the call timeout, 502, nothing charged", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: upstream.port });
    cleanup.push(() => proxy.close());
    const engine = engineOn(`http://127.0.0.1:${proxy.port}`, 500);
    await engine.ready;
    const prepared = await engine.prepare(PROMPT);
    proxy.freeze();
    const started = performance.now();
    const error = await failure(engine.evaluate(prepared));
    const waited = performance.now() - started;
    expect(error, String(error)).toBeInstanceOf(EngineUnavailableError);
    expect(String(error)).toMatch(/did not answer within 500 ms/);
    expect(waited, `waited ${waited} ms`).toBeLessThan(3_000);
    expect(await engine.status()).toMatchObject({ state: "failed", detail: expect.stringMatching(/did not answer/) });
    await expect502Uncharged(await server(engine), "model_unavailable");
  });

  for (const [mode, message] of [
    ["post-sampling", /post_sampling_probs/],
    ["missing-ids", /without an id/],
    ["malformed-json", /not JSON/],
    // On random weights every read lifts its labels into the list: without the bias they are
    // never listed, and the engine gives up rather than answer from a guess.
    ["ignores-bias", /ignore logit_bias/],
    ["error-500", /answered 500/],
  ] as const) {
    it(`${mode.replace(/-/g, " ")}: EngineFailedError, 502 model_failed, nothing charged`, async () => {
      const stand = await standIn("pass");
      const engine = engineOn(stand.url);
      await engine.ready;
      const prepared = await engine.prepare(PROMPT);
      stand.mode = mode;
      const error = await failure(engine.evaluate(prepared));
      expect(error, String(error)).toBeInstanceOf(EngineFailedError);
      expect(String(error)).toMatch(message);
      const response = await expect502Uncharged(await server(engine), "model_failed");
      expect(response.json.error, show(response)).toMatch(message);
    });
  }
});
