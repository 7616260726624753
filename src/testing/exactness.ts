import { expect } from "vitest";
import { normalise } from "../judgment/answers.js";
import { buildPrompt } from "../judgment/prompt.js";
import type { Question } from "../judgment/schema.js";
import type { JudgmentEngine } from "../engine/types.js";

/**
 * Questions, states and the comparison of the exactness suite (engine against
 * src/testing/reference.ts), for running it on more than one fixture.
 */

/** n options, every third without a description; beyond 26 the labels are two-letter codes. */
export const choiceQuestion = (n: number): Question => ({
  type: "choice",
  instructions: `Pick one of ${n}.`,
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, i % 3 === 0 ? null : `description ${i}`])),
});

export const scoreQuestion = (n: number): Question => ({
  type: "score",
  instructions: "How strong is it?",
  criteria: Array.from({ length: n }, (_, i) => `level ${i}`),
});

export const NOUL_QUESTIONS: Question[] = [
  { type: "noul", instructions: "The customer was charged twice.", criteria: null },
  { type: "noul", instructions: "It is urgent.", criteria: { true: "needs action today", false: "can wait" } },
  { type: "noul", instructions: { claim: "refund due" }, criteria: { true: "a refund is owed" } },
];

/** Multi-byte text, so byte-level and byte-fallback tokenisation both take part. */
export const EXACTNESS_STATE = { ticket: "I was charged twice. 한국어 🎉", priority: 2 };

/** The engine's label probabilities (temperature 1, renormalised over each question's labels). */
export async function engineProbabilities(engine: JudgmentEngine, state: unknown, questions: Question[]): Promise<number[][]> {
  const result = await engine.evaluate(await engine.prepare(buildPrompt(state, questions)));
  return result.labelLogProbs.map((lps) => normalise(lps, 1));
}

/**
 * The engine reads the same logits as the reference (neither evaluates a token alone:
 * llama/batching.test.ts); what remains is the rounding of float64 sums, far below 1e-9.
 */
export function expectClose(actual: number[][], expected: number[][], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  actual.forEach((row, q) => {
    const worst = Math.max(...row.map((p, i) => Math.abs(p - expected[q][i])));
    expect(
      worst,
      `${what}, question ${q}: max |engine − reference| = ${worst}\nengine ${JSON.stringify(row)}\nreference ${JSON.stringify(expected[q])}`,
    ).toBeLessThan(1e-9);
    expect(Math.min(...row), `${what}: an option got probability 0`).toBeGreaterThan(0);
  });
}
