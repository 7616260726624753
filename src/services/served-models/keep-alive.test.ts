import { describe, expect, it } from "vitest";
import { EngineUnavailableError, type JudgmentEngine } from "../../engine/types.js";
import { createKeepAlive, type LoadBudget } from "./keep-alive.js";

/**
 * When in-process models load and unload: the scheduling only, on engines that record what is
 * done to them (the real llama.cpp loading and unloading is in many-models.test.ts).
 */

const PROMPT = { system: "s", state: "x", questions: [{ text: "q", labels: ["yes", "no"] }] };

function recordingEngine(log: string[], name: string, options: { evaluate?: Promise<void>; fail?: string } = {}): JudgmentEngine {
  log.push(`create ${name}`);
  return {
    modelId: name,
    description: { kind: "llama", backend: "cpu" },
    ready: Promise.resolve(),
    status: () => (options.fail ? { state: "failed", detail: options.fail } : { state: "ready" }),
    prepare: async () => ({ inputTokens: 3, inputTokensExact: true }),
    evaluate: async () => {
      await options.evaluate;
      return { labelLogProbs: [[-0.1, -2]], inputTokens: 3, timingMs: 1 };
    },
    close: async () => void log.push(`close ${name}`),
  };
}

function model(log: string[], id: string, budget: LoadBudget, extra: { memoryMb?: number; keepAliveMs?: number | null; evaluate?: Promise<void>; fail?: string } = {}) {
  return createKeepAlive({
    id,
    kind: "llama",
    create: () => recordingEngine(log, id, extra),
    keepAliveMs: extra.keepAliveMs === undefined ? null : extra.keepAliveMs,
    memoryMb: extra.memoryMb ?? 100,
    budget,
    eager: false,
  });
}

const answer = async (engine: JudgmentEngine) => engine.evaluate(await engine.prepare(PROMPT));

describe("keep-alive loading", () => {
  it("loads on first use only, and once for requests arriving together", async () => {
    const log: string[] = [];
    const a = model(log, "a", { maxMb: null, loaded: new Set() });
    expect(a.state()).toBe("unloaded");
    expect(log).toEqual([]);
    await Promise.all([answer(a.engine), answer(a.engine), answer(a.engine)]);
    expect(log).toEqual(["create a"]);
    expect(a.state()).toBe("loaded");
  });

  it("unloads after keep-alive idle, and loads again on the next request", async () => {
    const log: string[] = [];
    const a = model(log, "a", { maxMb: null, loaded: new Set() }, { keepAliveMs: 50 });
    await answer(a.engine);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(a.state()).toBe("unloaded");
    await answer(a.engine);
    expect(log).toEqual(["create a", "close a", "create a"]);
  });

  it("unloads the least recently used idle model when loading another would pass the memory bound", async () => {
    const log: string[] = [];
    const budget: LoadBudget = { maxMb: 250, loaded: new Set() };
    const [a, b, c] = ["a", "b", "c"].map((id) => model(log, id, budget));
    await answer(a.engine);
    await answer(b.engine);
    await answer(a.engine); // b is now the least recently used
    await answer(c.engine);
    expect(log).toEqual(["create a", "create b", "close b", "create c"]);
    expect([a.state(), b.state(), c.state()]).toEqual(["loaded", "unloaded", "loaded"]);
  });

  it("never unloads a model in the middle of a call: a load that does not fit beside busy ones is refused as unavailable", async () => {
    const log: string[] = [];
    const budget: LoadBudget = { maxMb: 150, loaded: new Set() };
    let finish!: () => void;
    const a = model(log, "a", budget, { evaluate: new Promise<void>((resolve) => (finish = resolve)) });
    const b = model(log, "b", budget);
    const running = answer(a.engine);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(answer(b.engine)).rejects.toBeInstanceOf(EngineUnavailableError);
    finish();
    await running;
    await answer(b.engine);
    expect(log).toEqual(["create a", "close a", "create b"]);
  });

  it("reports a model that failed to load as failed, and tries again on the next request", async () => {
    const log: string[] = [];
    const a = model(log, "a", { maxMb: null, loaded: new Set() }, { fail: "bad magic" });
    await expect(answer(a.engine)).rejects.toThrow(/failed to load: bad magic/);
    expect(a.state()).toBe("failed");
    expect(await a.engine.status()).toEqual({ state: "failed", detail: "bad magic" });
    await expect(answer(a.engine)).rejects.toBeInstanceOf(EngineUnavailableError);
    expect(log).toEqual(["create a", "close a", "create a", "close a"]);
  });

  it("reports a model whose engine cannot even be built as failed, not as loading forever", async () => {
    const a = createKeepAlive({
      id: "a",
      kind: "llama",
      create: () => {
        throw new Error("no such backend");
      },
      keepAliveMs: null,
      memoryMb: 1,
      budget: { maxMb: null, loaded: new Set() },
      eager: false,
    });
    await expect(answer(a.engine)).rejects.toThrow(/failed to load: no such backend/);
    expect(await a.engine.status()).toEqual({ state: "failed", detail: "no such backend" });
  });
});
