import type { EngineResult, JudgmentEngine, PreparedJudgment } from "../engine/types.js";

/**
 * Fault injection only: an engine that prepares every prompt as `inputTokens` tokens and then
 * never answers, not even when its signal aborts, as a wedged model would. The server must give
 * up on its own (timeout, client disconnect) and release the reservation.
 */
export interface HangingEngine extends JudgmentEngine {
  /** How many `evaluate` calls started. */
  readonly calls: number;
  /** How many of them saw their signal abort. */
  readonly aborted: number;
}

export function hangingEngine(options: { inputTokens?: number; modelId?: string } = {}): HangingEngine {
  let calls = 0;
  let aborted = 0;
  return {
    modelId: options.modelId ?? "hanging-model",
    description: { kind: "llama", backend: "test" },
    status: () => ({ state: "ready" }),
    prepare: async (): Promise<PreparedJudgment> => ({ inputTokens: options.inputTokens ?? 100, inputTokensExact: true }),
    evaluate(_prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult> {
      calls++;
      signal?.addEventListener("abort", () => aborted++, { once: true });
      return new Promise<EngineResult>(() => undefined);
    },
    close: async () => undefined,
    get calls() {
      return calls;
    },
    get aborted() {
      return aborted;
    },
  };
}
