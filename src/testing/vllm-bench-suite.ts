import { describe, expect, it } from "vitest";
import type { BenchReport } from "../bench/report.js";
import { runBench } from "../bench/run.js";
import type { TestServer } from "./server.js";
import type { RealVllm } from "./vllm.js";

/**
 * `judge bench` sizes its states from the server's own token counts. vLLM's native /v1/systemone
 * reads and bills a prompt per question, so it counts the state once per question; our service
 * counts it once. Both must still get states of the same length, or their latencies do not
 * compare (docs/benchmarks.md). Registered by real-vllm.test.ts while its vLLM is up.
 */
export interface RealVllmBenchContext {
  real(): RealVllm;
  /** Our service with the vllm engine on that vLLM. */
  server(): TestServer;
}

function bench(url: string, key: string): Promise<BenchReport> {
  return runBench({
    url,
    key,
    shape: { stateTokens: 300, questions: 3, options: 4 },
    concurrency: [1],
    limit: { requests: 2 },
    warmup: 0,
    seed: 1,
    threads: 0,
    ceilingReads: 1,
    reuse: false,
    allowRateLimit: true,
  });
}

export function describeBenchOnRealVllm(context: RealVllmBenchContext): void {
  describe("judge bench against vLLM's native /v1/systemone and against our service on it", () => {
    it("sizes the states alike for both, though vLLM counts the state once per question", async () => {
      // vLLM ignores the key; ours needs it.
      const native = await bench(context.real().url, "unused");
      const ours = await bench(context.server().url, context.server().key);
      const [nativePhase, oursPhase] = [native.phases[0], ours.phases[0]];
      expect(nativePhase.answered, JSON.stringify(native)).toBe(2);
      expect(oursPhase.answered, JSON.stringify(ours)).toBe(2);
      expect(native.state.measuredBy).toBe("server");
      // The same tokenizer under both: the same tokens per word, within the generator's spread.
      expect(Math.abs(native.state.tokensPerWord / ours.state.tokensPerWord - 1), JSON.stringify([native.state, ours.state])).toBeLessThan(0.1);
      // And yet vLLM's usage counts the state in each of its three prompts, ours once (2.3× measured).
      expect(nativePhase.meanInputTokens! / oursPhase.meanInputTokens!, JSON.stringify([nativePhase, oursPhase])).toBeGreaterThan(2);
    });
  });
}
