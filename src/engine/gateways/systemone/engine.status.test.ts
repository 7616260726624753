import { afterEach, describe, expect, it } from "vitest";
import { buildPrompt } from "../../../judgment/prompt.js";
import { STAND_IN_MODEL, startSystemOneStandIn, type StandInHandler, type SystemOneStandIn } from "../../../testing/standins/systemone-upstream.js";
import type { RemoteEngineOptions } from "../../remote/options.js";
import { EngineUnavailableError, type JudgmentEngine } from "../../types.js";
import { createSystemOneEngine } from "./engine.js";

/** What the gateway says about its upstream (/health, the model's name) before and after it answers. */

const KEY = "sk-status-secret-42";
const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});

async function standIn(handler: StandInHandler): Promise<SystemOneStandIn> {
  const s = await startSystemOneStandIn(handler);
  started.push(s);
  return s;
}

function engineFor(url: string, options: Partial<RemoteEngineOptions> = {}): JudgmentEngine & { ready: Promise<void> } {
  const engine = createSystemOneEngine({
    server: { url, key: KEY, timeoutMs: 1_000 },
    upstreamLimits: { options: 255, levels: 10, questions: 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
    ...options,
  });
  started.push(engine);
  return engine;
}

const NOUL = [{ type: "noul" as const, instructions: "x" }];

describe("the gateway's status and model name", () => {
  it("is ready once the upstream's /health answers 200, named by the upstream's first model", async () => {
    const s = await standIn(() => undefined);
    const engine = engineFor(s.url);
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "ready" });
    expect(engine.modelId).toBe(STAND_IN_MODEL);
    expect(engine.description).toEqual({ kind: "systemone", backend: s.url });
  });

  it("is named by JUDGE_MODEL_ID, else JUDGE_ENGINE_MODEL, without asking the upstream", async () => {
    const s = await standIn(() => undefined);
    expect(engineFor(s.url, { modelId: "ours", upstreamModel: "theirs" }).modelId).toBe("ours");
    const pinned = engineFor(s.url, { upstreamModel: "theirs" });
    await pinned.ready;
    expect(pinned.modelId).toBe("theirs");
    expect(
      s.requests.filter((r) => r.path === "/v1/models"),
      JSON.stringify(s.requests),
    ).toEqual([]);
  });

  it("says loading while the upstream says so, and becomes ready when it is", async () => {
    let loading = true;
    const s = await standIn((r) => (r.path === "/health" && loading ? { status: 503, body: { error: "Loading model", status: "loading" } } : undefined));
    const engine = engineFor(s.url);
    const status = await engine.status();
    expect(status, JSON.stringify(status)).toEqual({ state: "loading", detail: `${s.url} is loading: Loading model` });
    let ready = false;
    void engine.ready.then(() => (ready = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ready, "ready while the upstream was loading").toBe(false);
    loading = false;
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "ready" });
  });

  it("says failed, naming the URL without credentials or key, when the upstream is broken or unreachable", async () => {
    const s = await standIn((r) => (r.path === "/health" ? { status: 500, body: { error: `broken; your key ${KEY}` } } : undefined));
    const withCredentials = s.url.replace("http://", "http://user:hunter2@");
    const broken = await engineFor(withCredentials).status();
    expect(broken, JSON.stringify(broken)).toEqual({ state: "failed", detail: `${s.url}/health answered 500: broken; your key [key]` });

    // Port 1, where nothing listens (as the other refusal tests use): a port freed by closing a
    // stand-in could be taken by a parallel test's server before the call (reset, not refused).
    const url = "http://127.0.0.1:1";
    const unreachable = await engineFor(url).status();
    expect(unreachable.state, JSON.stringify(unreachable)).toBe("failed");
    expect((unreachable as { detail: string }).detail, JSON.stringify(unreachable)).toMatch(new RegExp(`^cannot reach ${url}/health: .*ECONNREFUSED`));
  });

  it("never answers with a guessed model name: prepare asks for it, and fails while the upstream cannot say", async () => {
    let named = false;
    const s = await standIn((r) => (r.path === "/v1/models" && !named ? { status: 503, body: { error: "starting" } } : undefined));
    const engine = engineFor(s.url);
    await expect(engine.prepare(buildPrompt("s", NOUL))).rejects.toThrow(EngineUnavailableError);
    named = true;
    await engine.prepare(buildPrompt("s", NOUL));
    expect(engine.modelId).toBe(STAND_IN_MODEL);
  });

  it("stops probing once closed (ready settles)", async () => {
    const closed = await standIn(() => undefined);
    const url = closed.url;
    await closed.close();
    const engine = engineFor(url);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await engine.close();
    await engine.ready;
    expect(await engine.status()).toEqual({ state: "failed", detail: "engine closed" });
  });
});
