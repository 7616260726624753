import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { loadedCpuLibraries } from "../../testing/cpu-library.js";
import { availableRealModels } from "../../testing/real-models.js";
import { PreparedTokens } from "../prepared-tokens.js";
import { createLlamaEngine, type LlamaEngine } from "./engine.js";
import { centred, dot, dotQ8, tensorRows } from "./features-test-helpers.js";

const models = availableRealModels();

const QUESTIONS: Question[] = [
  {
    type: "choice",
    instructions: "What is the review sentence about?",
    criteria: { phone: "a mobile phone or a phone accessory", movie: "a film", restaurant: "a restaurant, its food or its service" },
  },
  { type: "noul", instructions: "The sentence expresses a positive opinion." },
  { type: "score", instructions: "How strongly does it recommend?", criteria: ["not at all", "a little", "somewhat", "strongly", "very strongly"] },
];
const STATES = [
  "It's still wild stuff though and is highly recommended to fans of giallo cinema.",
  "I can take a little bad service but the food sucks.",
  "The battery lasts two days and the case feels solid, but the screen scratches easily.",
];

/**
 * That readFeatures returns the answer position's final hidden state h (after the output norm,
 * before the LM head), on real weights: both models tie the LM head to the token embeddings
 * (Q8_0 in these files) and apply nothing after it (Gemma 3 has no final softcapping), so the
 * rows of token_embd times h must give the readout's logits for one-token labels. They agree
 * to the rounding that batch shapes cause (the readout reads in strict-shapes.ts's shapes, the
 * embedding context in one batch): SmolLM2's Q4_1 kernels give the same bits to 1e-5, while Gemma
 * 3 270M's Q4_K_M ones are not batch invariant (0.002–0.04 in p between two splits of the same
 * tokens, strict-shapes.ts), so some of its questions agree exactly and others by 0.1 in a logit.
 * On every question the state one position earlier misses by several times more.
 */
/** Measured worst gaps, with room: SmolLM2 4.7e-6 in a logit; Gemma 3 0.097 in a logit, 0.025 in p (2026-12-02). */
const BOUNDS: Record<string, { logit: number; probability: number }> = {
  "smollm2-135m-instruct": { logit: 0.05, probability: 0.01 },
  "gemma3-270m": { logit: 0.2, probability: 0.05 },
};
describe.skipIf(models.length === 0).each(models)("on $name, readFeatures", ({ name, file }) => {
  let engine: LlamaEngine;
  beforeAll(async () => {
    engine = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 4096, maxRequestTokens: 100_000, threads: 1, gpu: "off" });
    await engine.ready;
  });
  afterAll(async () => {
    await engine?.close();
  });

  it("is the final hidden state at the answer position: token_embd · h gives the readout's label logits", async () => {
    const head = await tensorRows(file, "token_embd.weight");
    expect(head.type).toBe("Q8_0");
    let worstLogit = 0;
    let worstProbability = 0;
    let worstPlainLogit = 0;
    let nearestEarlier = Infinity;
    let exact = 0;
    let leastSeparation = Infinity;
    for (const state of STATES) {
      const prepared = (await engine.prepare(buildPrompt(state, QUESTIONS))) as PreparedTokens;
      const { labelLogProbs } = await engine.evaluate(prepared);
      const { features } = await engine.readFeatures!(prepared);
      expect(features.map((f) => f.length)).toEqual(QUESTIONS.map(() => head.width));
      // The same tokens less the question's last: the state one position before the answer.
      const earlier = new PreparedTokens(
        prepared.prefixTokens,
        prepared.questions.map((q) => ({ ...q, tokens: q.tokens.slice(0, -1) })),
        prepared.inputTokens,
        prepared.questionTokens,
      );
      const before = (await engine.readFeatures!(earlier)).features;
      for (const [q, question] of prepared.questions.entries()) {
        const labels = [...question.trie.children].filter(([, child]) => child.labelIndex !== undefined);
        expect(labels, `${name}: question ${q} has one-token labels`).toHaveLength(labelLogProbs[q].length);
        const rows = await Promise.all(labels.map(([token]) => head.row(token)));
        const readout = centred(labels.map(([, child]) => labelLogProbs[q][child.labelIndex!]));
        const projected = centred(rows.map((row) => dotQ8(row.q8!, features[q])));
        const plain = centred(rows.map((row) => dot(row.values, features[q])));
        const fromEarlier = centred(rows.map((row) => dotQ8(row.q8!, before[q])));
        const gap = (a: number[]) => Math.max(...a.map((value, i) => Math.abs(value - readout[i])));
        worstLogit = Math.max(worstLogit, gap(projected));
        if (gap(projected) < 1e-4) exact++;
        leastSeparation = Math.min(leastSeparation, gap(fromEarlier) / Math.max(gap(projected), 1e-6));
        worstPlainLogit = Math.max(worstPlainLogit, gap(plain));
        nearestEarlier = Math.min(nearestEarlier, gap(fromEarlier));
        const p = softmax(projected);
        const expected = softmax(readout);
        worstProbability = Math.max(worstProbability, ...p.map((value, i) => Math.abs(value - expected[i])));
      }
    }
    console.log(
      `${name} (${loadedCpuLibraries().join(", ") || "no libggml-cpu seen"}, 1 thread): max |token_embd·h − readout logit| ${worstLogit.toExponential(2)} ` +
        `(h quantised to Q8_0 as ggml does; ${worstPlainLogit.toExponential(2)} in plain float64), max |Δp| over the labels ${worstProbability.toExponential(2)}; ` +
        `the state one position earlier misses by at least ${nearestEarlier.toFixed(3)}, ${leastSeparation.toFixed(1)}× the answer position's gap at least; ` +
        `${exact} of ${STATES.length * QUESTIONS.length} questions agree to 1e-4`,
    );
    // Bounds with room over what was measured, on whatever CPU library ran.
    const bound = BOUNDS[name] ?? BOUNDS["gemma3-270m"];
    expect(worstLogit).toBeLessThan(bound.logit);
    expect(worstProbability).toBeLessThan(bound.probability);
    // The answer position, not a neighbour: exact where the kernels agree, and far nearer than the earlier state everywhere.
    expect(exact).toBeGreaterThan(0);
    expect(leastSeparation).toBeGreaterThan(3);
  }, 600_000);

  it("costs one fresh evaluation per question: its time beside evaluate's for 3 questions, median of 20, 1 thread", async () => {
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const evaluate: number[] = [];
    const features: number[] = [];
    let tokens = 0;
    for (let run = 0; run < 20; run++) {
      // A state of its own each time, as requests come: nothing cached helps either read.
      const prepared = (await engine.prepare(buildPrompt(`${STATES[run % 3]} (${run})`, QUESTIONS))) as PreparedTokens;
      tokens = prepared.prefixTokens.length + prepared.questions.reduce((sum, q) => sum + q.tokens.length, 0);
      evaluate.push((await engine.evaluate(prepared)).timingMs);
      features.push((await engine.readFeatures!(prepared)).timingMs);
    }
    const [e, f] = [median(evaluate), median(features)];
    console.log(
      `${name}: 3 questions, ${tokens} prompt tokens: evaluate ${e.toFixed(0)} ms, readFeatures ${f.toFixed(0)} ms (median of 20, 1 thread): ratio ${(f / e).toFixed(2)}`,
    );
    expect(f).toBeGreaterThan(0);
  }, 600_000);
});

function softmax(values: number[]): number[] {
  const max = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - max));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((v) => v / total);
}
