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

/** A choice of `n` options, a third of them without a description. */
export const choice = (n: number): Question => ({
  type: "choice",
  instructions: `Pick one of ${n}.`,
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, i % 3 === 0 ? null : `description ${i}`])),
});

export const score = (n: number): Question => ({
  type: "score",
  instructions: "How strong is it?",
  criteria: Array.from({ length: n }, (_, i) => `level ${i}`),
});

/** Without criteria, two-sided and one-sided. */
export const NOULS: Question[] = [
  { type: "noul", instructions: "The customer was charged twice.", criteria: null },
  { type: "noul", instructions: "It is urgent.", criteria: { true: "needs action today", false: "can wait" } },
  { type: "noul", instructions: { claim: "refund due" }, criteria: { true: "a refund is owed" } },
];

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
