import { getLlama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildPrompt } from "../judgment/prompt.js";
import { choiceQuestion, NOUL_QUESTIONS } from "./exactness.js";
import { tinyQwen2FixturePath } from "./fixture.js";
import { referenceProbabilities } from "./reference.js";

/**
 * The reference's default reads a question's later label prefixes after the stem its first read
 * left (erasing only the last batch); this proves that gives the very bits of starting every read
 * from an empty sequence, on the Qwen2-tokenizer fixture, where 6 of the first 100 two-letter
 * codes are two tokens, with three distinct first tokens, after a state long enough for two prefix
 * chunks. src/testing/real-models-exactness.ts checks the same on real weights.
 */
let model: LlamaModel;
beforeAll(async () => {
  const llama = await getLlama({ gpu: false, build: "never" });
  model = await llama.loadModel({ modelPath: await tinyQwen2FixturePath() });
});
afterAll(async () => {
  await model?.dispose();
});

it("reads after a kept stem exactly as from an empty sequence (100 options, a two-chunk state)", async () => {
  const state = { ticket: "The parcel arrived late and damaged. ".repeat(30), priority: 2 };
  const prompt = buildPrompt(state, [choiceQuestion(100), NOUL_QUESTIONS[0]]);
  const kept = await referenceProbabilities(model, prompt);
  const everyRead = await referenceProbabilities(model, prompt, { fresh: "every-read" });
  expect(kept, JSON.stringify({ kept, everyRead })).toEqual(everyRead);
});
