import { describe, expect, it } from "vitest";
import { EngineUnavailableError, type JudgmentEngine } from "../../engine/types.js";
import { createKeepAlive, loadBudget, type LoadBudget } from "./keep-alive.js";

/**
 * When in-process models load and unload: the scheduling only, on engines that record what is
 * done to them (the real llama.cpp loading and unloading is in many-models.test.ts).
 */

const PROMPT = { system: "s", state: "x", questions: [{ text: "q", labels: ["yes", "no"] }] };

interface Behaviour {
  evaluate?: Promise<void>;
  fail?: string;
  /** How long loading takes: a load still under way when others start. */
  loadMs?: number;
}

function recordingEngine(log: string[], name: string, options: Behaviour = {}): JudgmentEngine {
  log.push(`create ${name}`);
  return {
    modelId: name,
    description: { kind: "llama", backend: "cpu" },
    ready: new Promise<void>((resolve) => setTimeout(resolve, options.loadMs ?? 0)),
    status: () => (options.fail ? { state: "failed", detail: options.fail } : { state: "ready" }),
    prepare: async () => ({ inputTokens: 3, inputTokensExact: true }),
    evaluate: async () => {
      await options.evaluate;
      return { labelLogProbs: [[-0.1, -2]], inputTokens: 3, timingMs: 1 };
    },
    close: async () => void log.push(`close ${name}`),
  };
}

function model(log: string[], id: string, budget: LoadBudget, extra: Behaviour & { memoryMb?: number; keepAliveMs?: number | null; pinned?: boolean } = {}) {
  return createKeepAlive({
    id,
    kind: "llama",
    create: () => recordingEngine(log, id, extra),
    keepAliveMs: extra.keepAliveMs === undefined ? null : extra.keepAliveMs,
    memoryMb: extra.memoryMb ?? 100,
    budget,
    pinned: extra.pinned ?? false,
  });
}

const answer = async (engine: JudgmentEngine) => engine.evaluate(await engine.prepare(PROMPT));

describe("keep-alive loading", () => {
  it("loads on first use only, and once for requests arriving together", async () => {
    const log: string[] = [];
    const a = model(log, "a", loadBudget(null));
    expect(a.state()).toBe("unloaded");
    expect(log).toEqual([]);
    await Promise.all([answer(a.engine), answer(a.engine), answer(a.engine)]);
    expect(log).toEqual(["create a"]);
    expect(a.state()).toBe("loaded");
  });

  it("unloads after keep-alive idle, and loads again on the next request", async () => {
    const log: string[] = [];
    const a = model(log, "a", loadBudget(null), { keepAliveMs: 50 });
    await answer(a.engine);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(a.state()).toBe("unloaded");
    await answer(a.engine);
    expect(log).toEqual(["create a", "close a", "create a"]);
  });

  it("unloads the least recently used idle model when loading another would pass the memory bound", async () => {
    const log: string[] = [];
    const budget = loadBudget(250);
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
    const budget = loadBudget(150);
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
    const a = model(log, "a", loadBudget(null), { fail: "bad magic" });
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
      budget: loadBudget(null),
      pinned: false,
    });
    await expect(answer(a.engine)).rejects.toThrow(/failed to load: no such backend/);
    expect(await a.engine.status()).toEqual({ state: "failed", detail: "no such backend" });
  });
});

describe("the memory bound under loads that start together", () => {
  const settle = (engines: JudgmentEngine[]) => Promise.allSettled(engines.map((engine) => answer(engine)));

  it("two models that do not fit together, asked in the same tick: one loads, the other is refused as unavailable", async () => {
    for (let round = 0; round < 3; round++) {
      const log: string[] = [];
      const budget = loadBudget(600);
      const [a, b] = ["a", "b"].map((id) => model(log, id, budget, { memoryMb: 361, loadMs: 20 }));
      const outcomes = await settle([a.engine, b.engine]);
      expect(outcomes.map((o) => o.status).sort(), `round ${round}`).toEqual(["fulfilled", "rejected"]);
      const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected")!;
      expect(refused.reason).toBeInstanceOf(EngineUnavailableError);
      expect(refused.reason.message).toMatch(/does not fit max_loaded_mb=600 beside the models loading or answering now/);
      expect(log, `round ${round}`).toHaveLength(1);
      expect([...budget.loaded].reduce((sum, l) => sum + l.memoryMb, 0)).toBeLessThanOrEqual(600);
    }
  });

  it("models that fit together, asked in the same tick, all load", async () => {
    const log: string[] = [];
    const budget = loadBudget(600);
    const models = ["a", "b", "c"].map((id) => model(log, id, budget, { memoryMb: 200, loadMs: 20 }));
    const outcomes = await settle(models.map((m) => m.engine));
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
    expect(log.sort()).toEqual(["create a", "create b", "create c"]);
  });

  it("loads arriving together make room one at a time: each idle model is unloaded for one of them only", async () => {
    const log: string[] = [];
    const budget = loadBudget(400);
    const [a, b, c] = ["a", "b", "c"].map((id) => model(log, id, budget, { memoryMb: 200 }));
    await answer(a.engine);
    await answer(b.engine);
    const d = model(log, "d", budget, { memoryMb: 200 });
    // c and d each need one model's room: a and b are unloaded, one for each, and both then answer.
    const outcomes = await settle([c.engine, d.engine]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled"]);
    expect([a.state(), b.state(), c.state(), d.state()]).toEqual(["unloaded", "unloaded", "loaded", "loaded"]);
    expect([...budget.loaded].reduce((sum, l) => sum + l.memoryMb, 0)).toBe(400);
  });

  it("a load that failed, or was refused, gives its room back", async () => {
    const log: string[] = [];
    const budget = loadBudget(600);
    const broken = model(log, "broken", budget, { memoryMb: 361, loadMs: 20, fail: "bad magic" });
    const b = model(log, "b", budget, { memoryMb: 361 });
    const c = model(log, "c", budget, { memoryMb: 200 });
    const [first, second] = await settle([broken.engine, b.engine]);
    expect(first.status === "rejected" && first.reason.message).toMatch(/failed to load: bad magic/);
    expect(second.status === "rejected" && second.reason.message).toMatch(/does not fit/);
    expect(budget.loaded.size).toBe(0);
    // b then loads, and c fits beside it: neither the failure nor the refusal still counts.
    await answer(b.engine);
    await answer(c.engine);
    expect([b.state(), c.state()]).toEqual(["loaded", "loaded"]);
  });
});

describe("the default model (pinned)", () => {
  it("loads at start and stays loaded past keep-alive", async () => {
    const log: string[] = [];
    const main = model(log, "main", loadBudget(null), { keepAliveMs: 30, pinned: true });
    await main.engine.ready;
    expect(main.state()).toBe("loaded");
    await answer(main.engine);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(main.state()).toBe("loaded");
    expect(await main.engine.status()).toEqual({ state: "ready" });
    expect(log).toEqual(["create main"]);
  });

  it("is never unloaded for another model: an idle other one is, and one that can never fit beside it is refused saying so", async () => {
    const log: string[] = [];
    const budget = loadBudget(500);
    const main = model(log, "main", budget, { memoryMb: 300, pinned: true });
    const [a, b] = ["a", "b"].map((id) => model(log, id, budget, { memoryMb: 200 }));
    const big = model(log, "big", budget, { memoryMb: 250 });
    await main.engine.ready;
    await answer(a.engine);
    await answer(b.engine); // a is idle and the least recently used other than main
    expect([main.state(), a.state(), b.state()]).toEqual(["loaded", "unloaded", "loaded"]);
    await expect(answer(big.engine)).rejects.toThrow(/can never fit max_loaded_mb=500 beside the default model "main" \(300 MB\), which stays loaded/);
    expect([main.state(), b.state(), big.state()]).toEqual(["loaded", "loaded", "failed"]);
    expect(log).toEqual(["create main", "create a", "close a", "create b"]);
  });

  it("that does not fit the bound even alone fails to load, saying so", async () => {
    const main = model([], "main", loadBudget(100), { memoryMb: 300, pinned: true });
    await main.engine.ready;
    await expect(answer(main.engine)).rejects.toThrow(/^model "main" \(300 MB\) can never fit max_loaded_mb=100; raise max_loaded_mb$/);
    expect(main.state()).toBe("failed");
    expect(await main.engine.status()).toEqual({ state: "failed", detail: 'model "main" (300 MB) can never fit max_loaded_mb=100; raise max_loaded_mb' });
  });
});
