import { afterEach, describe, expect, it } from "vitest";
import type { EngineResult, JudgmentEngine } from "../../engine/types.js";
import { NEUTRAL_TEMPERATURES } from "../../judgment/answers.js";
import { billingStores, payerOf, type BillingFixture } from "../../testing/billing-store.js";
import { judge, type JudgingDeps } from "./judge.js";
import { createReadCache, readKey } from "./read-cache.js";
import type { JudgmentRequest, ModelChoice } from "./request.js";

/**
 * JUDGE_READ_CACHE_MB at the judging seam: a repeated prompt of one account is answered from
 * the cache on a strict engine, billed as a read; another account, a tolerant engine, debiasing
 * and diagnostics read the model again.
 */

const stores = billingStores("sqlite");
afterEach(() => stores.closeAll());

function countingEngine(mode: "strict" | "tolerant") {
  const calls = { evaluate: 0, features: 0 };
  const engine: JudgmentEngine = {
    modelId: "m1",
    description: { kind: "llama", backend: "test", exactness: { mode, bound: 1e-9 } },
    status: () => ({ state: "ready" }),
    async prepare() {
      return { inputTokens: 100, inputTokensExact: true };
    },
    async evaluate(): Promise<EngineResult> {
      calls.evaluate++;
      return { labelLogProbs: [[Math.log(0.3), Math.log(0.7)]], inputTokens: 100, timingMs: 5 };
    },
    async readFeatures() {
      calls.features++;
      return { features: [Float32Array.from([1, 2, 3])], timingMs: 7 };
    },
    close: async () => undefined,
  };
  return { engine, calls };
}

const choice = (engine: JudgmentEngine): ModelChoice => ({ id: "m1", engine, multiplierMilli: 1000, temperatures: () => NEUTRAL_TEMPERATURES });

async function ask(deps: JudgingDeps, fixture: BillingFixture, engine: JudgmentEngine, extra: Partial<JudgmentRequest> = {}) {
  const request: JudgmentRequest = {
    state: { n: 1 },
    ids: ["angry"],
    questions: [{ type: "noul", instructions: "The customer is angry." }],
    includeLogits: false,
    debias: "none",
    caller: await fixture.payer(),
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    idempotencyKey: undefined,
    bodyDigest: "digest",
    signal: new AbortController().signal,
    models: [choice(engine)],
    ...extra,
  };
  return judge(deps, request, (judged) => JSON.stringify(judged.answers));
}

describe("the read cache", () => {
  it("answers one account's repeated prompt without the model, the same answer, billed as a read", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const cache = createReadCache(1 << 20);
    const deps: JudgingDeps = { billing: fixture.billing, requestTimeoutMs: 10_000, readCache: cache };
    const { engine, calls } = countingEngine("strict");
    const first = await ask(deps, fixture, engine);
    const second = await ask(deps, fixture, engine);
    expect(calls.evaluate).toBe(1);
    expect(second.text).toBe(first.text);
    expect(second.judged).toMatchObject({ inputTokens: 100, timingMs: 0 });
    expect(second.standing.balanceMicro).toBe(1_000_000 - 2 * (1_000_000 - first.standing.balanceMicro));
    expect(cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1 });
    // Another state is another prompt.
    await ask(deps, fixture, engine, { state: { n: 2 } });
    expect(calls.evaluate).toBe(2);
  });

  it("keeps accounts apart: another account's same prompt is read by the model", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const other = await fixture.store.accounts.create({ name: "other", plan: fixture.planId });
    await fixture.store.ledger.topUp(other.id, 1_000_000, "test balance");
    const deps: JudgingDeps = { billing: fixture.billing, requestTimeoutMs: 10_000, readCache: createReadCache(1 << 20) };
    const { engine, calls } = countingEngine("strict");
    await ask(deps, fixture, engine);
    await ask(deps, fixture, engine, { caller: await payerOf(fixture.store, other.id) });
    expect(calls.evaluate).toBe(2);
  });

  it("reads a tolerant engine, a debiased request and diagnostics every time", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const deps: JudgingDeps = { billing: fixture.billing, requestTimeoutMs: 10_000, readCache: createReadCache(1 << 20) };
    const tolerant = countingEngine("tolerant");
    await ask(deps, fixture, tolerant.engine);
    await ask(deps, fixture, tolerant.engine);
    expect(tolerant.calls.evaluate).toBe(2);
    const strict = countingEngine("strict");
    const contextual = { contextual: true } as Partial<JudgmentRequest>;
    await ask(deps, fixture, strict.engine, contextual);
    const before = strict.calls.evaluate;
    await ask(deps, fixture, strict.engine, contextual);
    expect(strict.calls.evaluate).toBe(2 * before);
  });

  it("keeps the hidden states once read: a fit's second read of an example runs nothing", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const deps: JudgingDeps = { billing: fixture.billing, requestTimeoutMs: 10_000, readCache: createReadCache(1 << 20) };
    const { engine, calls } = countingEngine("strict");
    await ask(deps, fixture, engine);
    const reading = { collectReadings: "features" } as Partial<JudgmentRequest>;
    const first = await ask(deps, fixture, engine, reading);
    expect(calls).toEqual({ evaluate: 1, features: 1 });
    const second = await ask(deps, fixture, engine, reading);
    expect(calls).toEqual({ evaluate: 1, features: 1 });
    expect(second.judged?.readings).toEqual(first.judged?.readings);
  });
});

describe("createReadCache", () => {
  const read = (n: number) => ({ result: { labelLogProbs: [new Array(n).fill(0)], inputTokens: 1, timingMs: 1 } });
  it("drops the least recently used entry past its budget, and never keeps one larger than the budget", () => {
    const cache = createReadCache(700);
    cache.set("a", read(20));
    cache.set("b", read(20));
    cache.get("a");
    cache.set("c", read(20));
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBeDefined();
    expect(cache.get("c")).toBeDefined();
    cache.set("huge", read(1000));
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.stats().bytes).toBeLessThanOrEqual(700);
  });
  it("keys by account, model and prompt", () => {
    const prompt = { state: "s", questions: [] };
    expect(readKey("a1", "m", "m", prompt)).toBe(readKey("a1", "m", "m", { ...prompt }));
    expect(readKey("a1", "m", "m", prompt)).not.toBe(readKey("a2", "m", "m", prompt));
    expect(readKey("a1", "m", "m", prompt)).not.toBe(readKey("a1", "m2", "m", prompt));
  });
});
