import { getLlama, type Llama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { choiceLabels } from "../../judgment/labels.js";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { choiceQuestion, engineProbabilities, EXACTNESS_STATE, expectClose, NOUL_QUESTIONS, scoreQuestion } from "../../testing/exactness.js";
import { tinyQwen2FixturePath } from "../../testing/fixture.js";
import { referenceProbabilities } from "../../testing/reference.js";
import { createLlamaEngine, type LlamaEngine } from "./engine.js";

/**
 * The exactness suite of engine.test.ts on a fixture with Qwen2's real tokenizer
 * (byte-level BPE, 151,936 tokens) instead of the made-up SentencePiece one: two-letter codes
 * are then mostly single tokens, with a few of two, so one question mixes label lengths.
 */

let llama: Llama;
let model: LlamaModel;
let engine: LlamaEngine;

beforeAll(async () => {
  const file = await tinyQwen2FixturePath();
  llama = await getLlama({ gpu: false, build: "never" });
  // One thread (the suite runs beside other files on 2 cores, see vitest.config.ts); flash
  // attention stays off (the engine's default on the CPU build).
  engine = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1, gpu: "off" });
  await engine.ready;
  model = await llama.loadModel({ modelPath: file });
});
afterAll(async () => {
  await engine?.close();
  await model?.dispose();
});

const check = async (state: unknown, questions: Question[], what: string) =>
  expectClose(await engineProbabilities(engine, state, questions), await referenceProbabilities(model, buildPrompt(state, questions)), what);

describe("on the Qwen2-tokenizer fixture, the engine's probabilities equal a fresh full evaluation", () => {
  it("has labels of one and of two tokens among the 255 two-letter codes (both paths are exercised)", () => {
    const lengths = choiceLabels(255).map((label) => model.tokenize(label).length);
    const count = (n: number) => lengths.filter((l) => l === n).length;
    expect([count(1) > 0, count(2) > 0, count(1) + count(2)], `one-token ${count(1)}, two-token ${count(2)}`).toEqual([true, true, 255]);
  });

  for (const n of [2, 26, 27, 100, 255]) {
    it(`choice with ${n} options`, async () => {
      await check(EXACTNESS_STATE, [choiceQuestion(n)], `choice ${n}`);
    });
  }

  it("27 options on a state of 'word ' × 120 (a long repetitive state)", async () => {
    await check("word ".repeat(120), [choiceQuestion(27)], "choice 27, word × 120");
  });

  it("noul without criteria, two-sided and one-sided", async () => {
    await check(EXACTNESS_STATE, NOUL_QUESTIONS, "noul");
  });

  it("score with every level count from 2 to 10", async () => {
    await check(
      EXACTNESS_STATE,
      Array.from({ length: 9 }, (_, i) => scoreQuestion(i + 2)),
      "score",
    );
  });

  it("after the cached prefix came from another request (prefix reuse)", async () => {
    const questions = [choiceQuestion(27), scoreQuestion(5)];
    await engineProbabilities(engine, { ticket: "I was charged once.", priority: 1 }, questions);
    await engineProbabilities(engine, EXACTNESS_STATE, [choiceQuestion(3)]);
    await check(EXACTNESS_STATE, questions, "reused prefix");
  });
});
