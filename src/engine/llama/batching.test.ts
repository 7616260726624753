import { getLlama, type ControlledEvaluateInputItem, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureWeightType } from "../../gguf/fixture-model.js";
import { normalise } from "../../judgment/answers.js";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { referenceProbabilities } from "../../testing/reference.js";
import { createLlamaEngine } from "./engine.js";
import { batchSizes, createSequenceBrancher, logProbsOf } from "./sequence-brancher.js";

/**
 * The engine's exactness rests on one property of llama.cpp's CPU kernels, checked here on the
 * machine that runs the tests: batches of two or more tokens give bit-identical logits however
 * a sequence is split into them. A batch of one does not (other matrix kernels), which is why
 * the engine never evaluates one (sequence-brancher.ts).
 */
let q4File: string;
const text = "word ".repeat(120) + "The customer was charged twice and wants the money back today. ".repeat(12);

const models: Partial<Record<FixtureWeightType, LlamaModel>> = {};
const contexts: LlamaContext[] = [];

beforeAll(async () => {
  const llama = await getLlama({ gpu: false, build: "never" });
  // Q4_0 weights go through llama.cpp's repacked kernels (groups of 4 tokens, leftovers apart).
  q4File = await tinyFixturePath(1, "Q4_0");
  models.F32 = await llama.loadModel({ modelPath: await tinyFixturePath() });
  models.Q4_0 = await llama.loadModel({ modelPath: q4File });
});
afterAll(async () => {
  for (const context of contexts) await context.dispose();
  for (const model of Object.values(models)) await model?.dispose();
});

/** Evaluates `tokens` from an emptied sequence, one decode per batch of the given sizes; the last token's logits. */
async function logitsAfter(sequence: LlamaContextSequence, tokens: Token[], sizes: number[]): Promise<Float32Array> {
  await sequence.eraseContextTokenRanges([{ start: 0, end: sequence.nextTokenIndex }]);
  let start = 0;
  let logits: Map<Token, number> | undefined;
  for (const size of sizes) {
    const batch: ControlledEvaluateInputItem[] = tokens.slice(start, start + size);
    start += size;
    if (start === tokens.length) batch[size - 1] = [tokens[start - 1], { generateNext: { logits: true } }];
    logits = (await sequence.controlledEvaluate(batch))[size - 1]?.next.logits ?? logits;
  }
  expect(start, `sizes ${JSON.stringify(sizes)} cover ${tokens.length} tokens`).toBe(tokens.length);
  const out = new Float32Array(logits!.size);
  for (const [token, value] of logits!) out[token] = value;
  return out;
}

const maxDifference = (a: Float32Array, b: Float32Array) => a.reduce((worst, x, i) => Math.max(worst, Math.abs(x - b[i])), 0);

for (const weights of ["F32", "Q4_0"] as const) {
  describe(`llama.cpp CPU logits on ${weights} weights`, () => {
    let sequence: LlamaContextSequence;
    let tokens: Token[];
    beforeAll(async () => {
      // A batch size above the text's length, so "one batch" is one decode.
      const context = await models[weights]!.createContext({ contextSize: 2048, batchSize: 2048, sequences: 1, threads: 1, flashAttention: false });
      contexts.push(context);
      sequence = context.getSequence();
      tokens = models[weights]!.tokenize(text);
    });

    it("are bit-identical however the tokens are split into batches of two or more", async () => {
      const n = tokens.length;
      expect(n, "the text should span more than one default batch of 512").toBeGreaterThan(600);
      const whole = await logitsAfter(sequence, tokens, [n]);
      const splits = [
        [512, n - 512],
        [2, n - 2],
        [n - 2, 2],
        [n - 3, 3],
        [n - 5, 5],
        [101, 3, 4, 5, 6, 7, n - 126],
        [n - 6, 2, 2, 2],
      ];
      for (const sizes of splits) {
        const split = await logitsAfter(sequence, tokens, sizes);
        expect(maxDifference(split, whole), `batches ${JSON.stringify(sizes)} vs one batch of ${n}`).toBe(0);
      }
    });

    it("move by at most a rounding error when a token is evaluated alone (the engine never does)", async () => {
      const n = tokens.length;
      const whole = await logitsAfter(sequence, tokens, [n]);
      const alone = await logitsAfter(sequence, tokens, [n - 1, 1]);
      const difference = maxDifference(alone, whole);
      console.info(`${weights}: a last token alone moves the logits by up to ${difference.toExponential(2)}`);
      // A kernel's rounding, not a different computation: small against logits of size ~4.
      expect(difference, `max |Δ logit| for a batch of one`).toBeLessThan(1e-3);
    });
  });
}

describe("the engine's sequence never evaluates a token alone", () => {
  let main: LlamaContextSequence;
  let tokens: Token[];
  let expected: number[];
  let all: Token[];
  beforeAll(async () => {
    // The engine's batch size (512); a second sequence evaluates everything as one batch.
    const context = await models.F32!.createContext({ contextSize: 2048, sequences: 2, threads: 1, flashAttention: false });
    contexts.push(context);
    main = context.getSequence();
    tokens = models.F32!.tokenize(text);
    const whole = await logitsAfter(context.getSequence(), tokens, [tokens.length]);
    all = Array.from(whole.keys()) as Token[];
    expected = [...logProbsOf(new Map(all.map((token) => [token, whole[token]])), all).values()];
  });

  it("a label token is read together with the token before it, giving one batch's numbers", async () => {
    const brancher = createSequenceBrancher(main);
    await brancher.rollbackTo(0);
    await brancher.reuseOrEvaluatePrefix(tokens.slice(0, -1));
    const read = await brancher.extend(tokens.slice(-1), all, true);
    expect([...read.values()], "extend by one token vs one batch of all tokens").toEqual(expected);
  });

  it("a prefix one token longer than the cached one re-reads the cached last token", async () => {
    const brancher = createSequenceBrancher(main);
    await brancher.rollbackTo(0);
    await brancher.reuseOrEvaluatePrefix(tokens.slice(0, -3));
    await brancher.reuseOrEvaluatePrefix(tokens.slice(0, -2));
    const read = await brancher.extend(tokens.slice(-2), all, true);
    expect(main.nextTokenIndex).toBe(tokens.length);
    expect([...read.values()], "prefix grown by one token, then two more, vs one batch").toEqual(expected);
  });
});

describe("the engine's batch plan", () => {
  it("covers every token in batches of at most the batch size and never leaves a token alone", () => {
    for (const max of [3, 4, 7, 512]) {
      for (let count = 1; count <= 3 * max + 2; count++) {
        const sizes = batchSizes(count, max);
        const what = `${count} tokens, batches of up to ${max}: ${JSON.stringify(sizes)}`;
        expect(
          sizes.reduce((a, b) => a + b, 0),
          what,
        ).toBe(count);
        expect(Math.max(...sizes), what).toBeLessThanOrEqual(max);
        if (count > 1) expect(Math.min(...sizes), what).toBeGreaterThan(1);
      }
    }
  });
});

describe("the engine on Q4_0 weights (repacked kernels) equals the reference", () => {
  const choice27: Question = {
    type: "choice",
    instructions: "Pick one of 27.",
    criteria: Object.fromEntries(Array.from({ length: 27 }, (_, i) => [`option ${i}`, `description ${i}`])),
  };

  it("27 options (two-token labels) on a state of 'word ' × 120", async () => {
    const engine = createLlamaEngine({ model: q4File, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1, gpu: "off", slots: 2 });
    await engine.ready;
    const state = "word ".repeat(120);
    const prompt = buildPrompt(state, [choice27]);
    const result = await engine.evaluate(await engine.prepare(prompt));
    await engine.close();
    const actual = normalise(result.labelLogProbs[0], 1);
    const expected = (await referenceProbabilities(models.Q4_0!, prompt))[0];
    const worst = Math.max(...actual.map((p, i) => Math.abs(p - expected[i])));
    expect(worst, `max |engine − reference| = ${worst}\nengine ${JSON.stringify(actual)}\nreference ${JSON.stringify(expected)}`).toBeLessThan(1e-9);
  });
});
