import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { longestTokenBytes } from "../budget-bound.js";
import { createLlamaEngine, type LlamaEngine } from "./engine.js";
import { BudgetError } from "../types.js";
import { getLlama, type LlamaModel } from "node-llama-cpp";

/**
 * A request certainly over JUDGE_MAX_REQUEST_TOKENS is refused before it is tokenised (its
 * bytes over the vocabulary's longest token already exceed the limit), and one found over while
 * tokenising stops there instead of tokenising the questions left.
 */

const LIMIT = 2_000;
let engine: LlamaEngine;
let model: LlamaModel;
beforeAll(async () => {
  engine = createLlamaEngine({ model: await tinyFixturePath(), modelsDir: ".", contextSize: 8192, maxRequestTokens: LIMIT, threads: 1, gpu: "off" });
  await engine.ready;
  model = await (await getLlama({ gpu: false, build: "never" })).loadModel({ modelPath: await tinyFixturePath() });
});
afterAll(async () => {
  await engine?.close();
  await model?.dispose();
});

const manyOptions = (n: number, text: string): Question => ({
  type: "choice",
  instructions: "Which one?",
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, text])),
});

describe("the per-request token limit", () => {
  it("the longest token of the vocabulary bounds the bytes per token", () => {
    const longest = longestTokenBytes(model)!;
    expect(longest).toBeGreaterThan(0);
    // Every token's text is at most that many bytes.
    for (let token = 0; token < 200; token++) expect(Buffer.byteLength(model.detokenize([token as never]))).toBeLessThanOrEqual(longest);
  });

  it("a body certainly over it is refused from its bytes, before anything is tokenised", async () => {
    const longest = longestTokenBytes(model)!;
    const questions = Array.from({ length: 64 }, () => manyOptions(255, "x ".repeat(Math.ceil((LIMIT * longest) / (64 * 255)))));
    const error = await engine.prepare(buildPrompt("state", questions)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^the request needs at least \\d+ input tokens \\(no token of this model covers more than ${longest} bytes of its text\\), over the limit of ${LIMIT} per request$`,
      ),
    );
  });

  it("one found over while tokenising stops there: the questions left are not tokenised", async () => {
    // Each question alone is within the limit; a few of them are over it.
    const questions = Array.from({ length: 64 }, () => manyOptions(5, "some words of description"));
    const error = await engine.prepare(buildPrompt("state", questions)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetError);
    expect((error as Error).message).toMatch(
      /^the request needs more than \d+ input tokens \(\d+ counted before its last \d+ questions\), over the limit of 2000 per request$/,
    );
  });

  it("a request within it is prepared as before", async () => {
    const prepared = await engine.prepare(buildPrompt("state", [manyOptions(3, "a"), manyOptions(2, "b")]));
    expect(prepared.inputTokens).toBeLessThanOrEqual(LIMIT);
  });
});
