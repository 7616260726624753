import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, postJudgment, show } from "../../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import { openAIError, startDecisionsStandIn, STAND_IN_KEY, type DecisionsStandIn } from "../../../testing/standins/decisions-upstream.js";
import { parseConfig } from "../../../config/environment.js";
import { createEngine } from "../../factory.js";
import type { RemoteEngineOptions } from "../../remote/options.js";
import { createDecisionsEngine } from "./engine.js";

/**
 * What the decisions gateway says of its upstream. A refused key (JUDGE_ENGINE_KEY wrong or
 * revoked) is the operator's to see: /health is 503 naming the upstream's refusal and the
 * setting, never the key; API clients get a plain 502 that says nothing of the settings. When
 * the key works again, so does /health. A wrong URL or model, and a loading server, are named too.
 */

const WRONG_KEY = "sk-wrong-key-0123456789";
let upstream: TestServer;
let standIn: DecisionsStandIn;
const started: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  upstream = await startTestServer();
  standIn = await startDecisionsStandIn(upstream);
});
beforeEach(() => {
  standIn.fault = { kind: "none" };
});
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});
afterAll(async () => {
  await standIn?.close();
  await upstream?.close();
});

const BODY = { state: "s", questions: { q: { type: "noul", instructions: "Is it?" } } };

function engineFor(options: Partial<RemoteEngineOptions> & { key?: string } = {}) {
  const engine = createDecisionsEngine({
    server: { url: standIn.url, key: options.key ?? STAND_IN_KEY, timeoutMs: 2_000 },
    upstreamLimits: { options: 255, levels: 10, questions: 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
    ...options,
  });
  started.push(engine);
  return engine;
}

async function gatewayWith(key: string): Promise<TestServer> {
  const engine = engineFor({ key });
  await engine.ready;
  const gateway = await startTestServer({ engine, balanceMicro: 1_000_000 });
  started.push(gateway);
  return gateway;
}

describe("an upstream that refuses the gateway's key", () => {
  it("from the start: /health is 503 naming the refusal and the setting, a request gets a plain 502", async () => {
    const gateway = await gatewayWith(WRONG_KEY);
    const health = await call(gateway.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.json.error, show(health)).toContain(`${standIn.url}/v1/decisions answered 401: it refused this gateway's key (check JUDGE_ENGINE_KEY)`);
    expect(health.text, show(health)).not.toContain(WRONG_KEY);

    const response = await postJudgment(gateway, BODY);
    expect(response.status, show(response)).toBe(502);
    expect(response.json.code, show(response)).toBe("model_unavailable");
    expect(response.text, show(response)).not.toMatch(/JUDGE_|key|401|127\.0\.0\.1/i);
    expect(gateway.logLines.join("\n"), "a log line carries the key").not.toContain(WRONG_KEY);
  });

  it("revoked later: /health turns 503 with it, and 200 again when the key works again", async () => {
    const gateway = await gatewayWith(STAND_IN_KEY);
    expect((await postJudgment(gateway, BODY)).status).toBe(200);
    expect((await call(gateway.url, "/health")).status).toBe(200);
    standIn.fault = { kind: "refuse-key" };
    const refused = await postJudgment(gateway, BODY);
    expect(refused.status, show(refused)).toBe(502);
    expect(refused.text, show(refused)).not.toMatch(/JUDGE_|key/i);
    const health = await call(gateway.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.json.error, show(health)).toMatch(/refused this gateway's key/);
    expect(health.text, show(health)).not.toContain(STAND_IN_KEY);
    standIn.fault = { kind: "none" };
    const again = await call(gateway.url, "/health");
    expect(again.status, show(again)).toBe(200);
  });
});

describe("the gateway's status, name and model", () => {
  it("is ready when the upstream refuses the key probe as invalid, which bills nothing", async () => {
    const engine = engineFor();
    await engine.ready;
    const before = standIn.requests.length;
    const upstreamLedger = (await upstream.services.accounts.entries(upstream.accountId, { limit: 500 })).length;
    expect(await engine.status()).toEqual({ state: "ready" });
    const probe = standIn.requests.slice(before);
    expect(
      probe.map((r) => [r.method, r.path, r.body]),
      JSON.stringify(probe),
    ).toEqual([["POST", "/v1/decisions", '{"model":"gpt-6-luna"}']]);
    expect((await upstream.services.accounts.entries(upstream.accountId, { limit: 500 })).length).toBe(upstreamLedger);
    expect(engine.description).toEqual({ kind: "decisions", backend: standIn.url });
  });

  it("is what JUDGE_ENGINE=decisions builds, from JUDGE_ENGINE_URL, JUDGE_ENGINE_KEY and JUDGE_ENGINE_MODEL", async () => {
    const config = parseConfig({
      JUDGE_ENGINE: "decisions",
      JUDGE_ENGINE_URL: `${standIn.url}/v1/`,
      JUDGE_ENGINE_KEY: STAND_IN_KEY,
      JUDGE_ENGINE_MODEL: "gpt-6-luna",
    });
    const engine = createEngine(config);
    started.push(engine);
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "ready" });
    expect(engine.description).toEqual({ kind: "decisions", backend: `${standIn.url}/v1` });
    expect(engine.modelId).toBe("gpt-6-luna");
    expect(() => parseConfig({ JUDGE_ENGINE: "decisions" })).toThrow(/JUDGE_ENGINE_URL: required when JUDGE_ENGINE is decisions/);
  });

  it("is named gpt-6-luna, JUDGE_ENGINE_MODEL (also sent upstream) or JUDGE_MODEL_ID", async () => {
    expect(engineFor().modelId).toBe("gpt-6-luna");
    expect(engineFor({ upstreamModel: "theirs" }).modelId).toBe("theirs");
    expect(engineFor({ upstreamModel: "theirs", modelId: "ours" }).modelId).toBe("ours");
  });

  it("names a wrong URL, a model the upstream does not serve, a loading or failing server", async () => {
    const engine = engineFor();
    standIn.fault = { kind: "status", status: 404, body: openAIError("Unknown request URL: POST /v1/decisions", "unknown_url") };
    expect(await engine.status()).toEqual({
      state: "failed",
      detail: expect.stringMatching(/answered 404: no Decisions endpoint or model there \(check JUDGE_ENGINE_URL/),
    });
    standIn.fault = { kind: "status", status: 400, body: openAIError("unknown model", "unknown_model", "model") };
    expect(await engine.status()).toEqual({
      state: "failed",
      detail: expect.stringMatching(/does not serve the model this gateway names \(check JUDGE_ENGINE_MODEL\)/),
    });
    standIn.fault = { kind: "status", status: 503, body: { error: "Loading model" } };
    expect(await engine.status()).toEqual({ state: "loading", detail: `${standIn.url}/v1/decisions is loading: Loading model` });
    standIn.fault = { kind: "status", status: 500, body: { error: "CUDA error" } };
    expect(await engine.status()).toEqual({ state: "failed", detail: `${standIn.url}/v1/decisions answered 500: CUDA error` });
    standIn.fault = { kind: "none" };
    expect(await engine.status()).toEqual({ state: "ready" });
  });
});
