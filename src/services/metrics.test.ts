import { describe, expect, it } from "vitest";
import { EngineFailedError, type JudgmentEngine } from "../engine/types.js";
import { evaluateFailsEngine } from "../testing/fault-engines.js";
import { hangingEngine } from "../testing/hanging-engine.js";
import { parseExposition, sampleValue } from "../testing/prometheus.js";
import { createMetrics, meterEngine, type PrefixCacheStats } from "./metrics.js";

const PROMPT = { system: "s", state: "x", questions: [{ text: "q", labels: ["yes", "no"] }] };

async function samples(metrics: ReturnType<typeof createMetrics>) {
  return parseExposition((await metrics.render()).text);
}

describe("meterEngine", () => {
  it("passes everything but prepare and evaluate through to the engine, getters included", () => {
    const inner = hangingEngine({ modelId: "m-1" });
    const metered = meterEngine(inner, createMetrics());
    expect(metered.modelId).toBe("m-1");
    expect(metered.description).toEqual(inner.description);
    expect(metered.status()).toEqual({ state: "ready" });
    void metered.evaluate({ inputTokens: 1, inputTokensExact: true });
    // `calls` is a getter of the hanging engine, not of the seam: it still reads the live value.
    expect((metered as typeof inner).calls).toBe(1);
  });

  it("counts a call that is still in the engine in the queue depth, and a failed one as an error once it has left", async () => {
    const metrics = createMetrics();
    void meterEngine(hangingEngine(), metrics).evaluate({ inputTokens: 1, inputTokensExact: true });
    const failing = meterEngine(evaluateFailsEngine(), metrics);
    const prepared = await failing.prepare(PROMPT);
    await expect(failing.evaluate(prepared)).rejects.toBeInstanceOf(EngineFailedError);
    const now = await samples(metrics);
    expect(sampleValue(now, "judge_engine_queue_depth", { phase: "evaluate" })).toBe(1);
    expect(sampleValue(now, "judge_engine_call_duration_seconds_count", { phase: "evaluate", outcome: "error" })).toBe(1);
    expect(sampleValue(now, "judge_engine_call_duration_seconds_count", { phase: "prepare", outcome: "ok" })).toBe(1);
    expect(sampleValue(now, "judge_engine_input_tokens_total"), "a failed evaluation read nothing that counts").toBe(0);
  });

  it("reads prefix-cache counters from an engine that offers stats(), at each scrape", async () => {
    const stats: PrefixCacheStats = { prefixTokensReused: 0, prefixTokensEvaluated: 0 };
    const inner: JudgmentEngine & { stats(): PrefixCacheStats } = { ...hangingEngine(), stats: () => ({ ...stats }) };
    const metrics = createMetrics();
    meterEngine(inner, metrics);
    stats.prefixTokensEvaluated = 120;
    stats.prefixTokensReused = 80;
    let now = await samples(metrics);
    expect(sampleValue(now, "judge_engine_prefix_tokens_total", { outcome: "reused" })).toBe(80);
    expect(sampleValue(now, "judge_engine_prefix_tokens_total", { outcome: "evaluated" })).toBe(120);
    stats.prefixTokensReused = 200;
    now = await samples(metrics);
    expect(sampleValue(now, "judge_engine_prefix_tokens_total", { outcome: "reused" })).toBe(200);
  });

  it("leaves the prefix-cache counters out for an engine that does not say", async () => {
    const metrics = createMetrics();
    meterEngine(hangingEngine(), metrics);
    const now = await samples(metrics);
    expect(
      now.filter((s) => s.name === "judge_engine_prefix_tokens_total"),
      JSON.stringify(now.slice(0, 3)),
    ).toEqual([]);
  });
});
