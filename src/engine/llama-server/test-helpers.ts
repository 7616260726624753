import { normalise } from "../../judgment/answers.js";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import type { RemoteEngineOptions } from "../remote/options.js";
import type { JudgmentEngine } from "../types.js";

/** Engine options for tests: the server at `url`, budgets that stay out of the way. */
export function remoteOptions(url: string, overrides: Partial<RemoteEngineOptions> = {}): RemoteEngineOptions {
  return {
    server: { url, timeoutMs: 10_000 },
    upstreamLimits: { options: 255, levels: 10, questions: 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
    ...overrides,
  };
}

/**
 * The engine's status once it says ready, or after 15 s. Once, in a full suite on the loaded 2-core
 * machine, status() said "failed" right after start-up (it gives /props 2 s): a test's setup
 * check waits that out; engine.faults.test.ts tests status() itself.
 */
export async function settledStatus(engine: JudgmentEngine) {
  let status = await engine.status();
  for (const until = Date.now() + 15_000; status.state !== "ready" && Date.now() < until; status = await engine.status()) {
    // Printed, so the cause of a status waited out (timeout or changed /props) is on record.
    console.warn(`llama-server status before ready: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return status;
}

/** What `engine` prepares and answers for the questions: the prepared request and each question's probabilities. */
export async function probabilities(engine: JudgmentEngine, state: unknown, questions: Question[]) {
  const prepared = await engine.prepare(buildPrompt(state, questions));
  const result = await engine.evaluate(prepared);
  return { prepared, probabilities: result.labelLogProbs.map((lps) => normalise(lps, 1)) };
}

/** The largest |Δp| between two answers to the same questions; throws if their shapes differ. */
export function maxDifference(ours: number[][], reference: number[][]): number {
  let worst = 0;
  ours.forEach((row, q) => {
    if (row.length !== reference[q]?.length) throw new Error(`question ${q}: ${row.length} probabilities against ${reference[q]?.length}`);
    row.forEach((p, i) => (worst = Math.max(worst, Math.abs(p - reference[q][i]))));
  });
  return worst;
}
