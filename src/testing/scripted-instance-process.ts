/**
 * The service as `judge serve` runs it (serveUntilSignalled: the same start, signal handling
 * and shutdown), on an engine whose timing the request chooses: a state containing "slow:<ms>"
 * is answered after that many milliseconds, one containing "hang" never. For tests of what a
 * signal does to requests in flight. Configured by the same JUDGE_* environment; `--close-ms N`
 * makes closing the engine take N ms (a model slow to tear down).
 */
import { loadConfig } from "../config/environment.js";
import type { EngineResult, JudgmentEngine, PreparedJudgment } from "../engine/types.js";
import { serveUntilSignalled } from "../main.js";

const closeAt = process.argv.indexOf("--close-ms");
const CLOSE_MS = closeAt < 0 ? 0 : Number(process.argv[closeAt + 1]);

interface ScriptedPrepared extends PreparedJudgment {
  delayMs: number | "never";
  labelCounts: number[];
}

const scriptedEngine: JudgmentEngine = {
  modelId: "scripted-model",
  description: { kind: "llama", backend: "test" },
  status: () => ({ state: "ready" }),
  async prepare(prompt): Promise<ScriptedPrepared> {
    const slow = /slow:(\d+)/.exec(prompt.state);
    return {
      inputTokens: 100,
      inputTokensExact: true,
      delayMs: prompt.state.includes("hang") ? "never" : Number(slow?.[1] ?? 0),
      labelCounts: prompt.questions.map((q) => q.labels.length),
    };
  },
  evaluate(prepared): Promise<EngineResult> {
    const { delayMs, labelCounts } = prepared as ScriptedPrepared;
    // Like a wedged model, the hanging one ignores its signal: only the server can give up on it.
    if (delayMs === "never") return new Promise<EngineResult>(() => undefined);
    const labelLogProbs = labelCounts.map((n) => Array.from({ length: n }, () => Math.log(1 / n)));
    return new Promise((resolve) => setTimeout(() => resolve({ labelLogProbs, inputTokens: 100, timingMs: delayMs }), delayMs));
  },
  close: () => new Promise<void>((resolve) => setTimeout(resolve, CLOSE_MS)),
};

await serveUntilSignalled(loadConfig(), { engine: scriptedEngine });
