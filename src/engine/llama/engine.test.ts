import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getLlama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAnswer, NEUTRAL_TEMPERATURES, normalise } from "../../judgment/answers.js";
import { buildPrompt, promptStyleFor } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { referenceProbabilities } from "../../testing/reference.js";
import { createLlamaEngine } from "./engine.js";
import { writeFixtureModel } from "../../gguf/fixture-model.js";
import { BudgetError, EngineFailedError, type JudgmentEngine } from "../types.js";

const choice = (n: number): Question => ({
  type: "choice",
  instructions: `Pick one of ${n}.`,
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, i % 3 === 0 ? null : `description ${i}`])),
});
const score = (n: number): Question => ({
  type: "score",
  instructions: "How strong is it?",
  criteria: Array.from({ length: n }, (_, i) => `level ${i}`),
});
const STATE = { ticket: "I was charged twice. 한국어 🎉", priority: 2 };

const WORDS = "word ".repeat(120);

let engine: JudgmentEngine;
let model: LlamaModel;

const tinyEngine = async (slots: number) => {
  // Pinned to the CPU build: exactness is defined there (runtime.ts).
  const created = createLlamaEngine({
    model: await tinyFixturePath(),
    modelsDir: ".",
    contextSize: 8192,
    maxRequestTokens: 100_000,
    threads: 1,
    gpu: "off",
    slots,
  });
  await created.ready;
  return created;
};

beforeAll(async () => {
  engine = await tinyEngine(1);
  const llama = await getLlama({ gpu: false, build: "never" });
  model = await llama.loadModel({ modelPath: await tinyFixturePath() });
});
afterAll(async () => {
  await engine?.close();
  await model?.dispose();
});

async function engineProbabilities(state: unknown, questions: Question[], on = engine): Promise<number[][]> {
  const result = await on.evaluate(await on.prepare(buildPrompt(state, questions)));
  return result.labelLogProbs.map((lps) => normalise(lps, 1));
}

/** The reference is slow (a fresh evaluation per label prefix) and the same for every slot count. */
const references = new Map<string, Promise<number[][]>>();
function reference(state: unknown, questions: Question[]): Promise<number[][]> {
  const key = JSON.stringify([state, questions]);
  if (!references.has(key)) references.set(key, referenceProbabilities(model, buildPrompt(state, questions)));
  return references.get(key)!;
}

/**
 * The engine reads the same logits as the reference (neither evaluates a token alone:
 * llama/batching.test.ts); what remains is the rounding of float64 sums, far below 1e-9.
 */
function expectClose(actual: number[][], expected: number[][], what: string) {
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

describe.each([1, 3])("with %i slot(s), the engine's probabilities equal a fresh full evaluation", (slots) => {
  let subject: JudgmentEngine;
  beforeAll(async () => {
    subject = slots === 1 ? engine : await tinyEngine(slots);
  });
  afterAll(async () => {
    if (subject !== engine) await subject?.close();
  });
  const check = async (state: unknown, questions: Question[], what: string) =>
    expectClose(await engineProbabilities(state, questions, subject), await reference(state, questions), what);

  for (const n of [2, 26, 27, 100, 255]) {
    it(`choice with ${n} options (multi-token labels beyond 26)`, async () => {
      await check(STATE, [choice(n)], `choice ${n}`);
    });
  }

  it("27 options on a state of 'word ' × 120 (two-token labels after a long repetitive state)", async () => {
    await check(WORDS, [choice(27)], "choice 27, word × 120");
  });

  it("noul without criteria, two-sided and one-sided", async () => {
    const questions: Question[] = [
      { type: "noul", instructions: "The customer was charged twice.", criteria: null },
      { type: "noul", instructions: "It is urgent.", criteria: { true: "needs action today", false: "can wait" } },
      { type: "noul", instructions: { claim: "refund due" }, criteria: { true: "a refund is owed" } },
    ];
    await check(STATE, questions, "noul");
  });

  it("score with every level count from 2 to 10", async () => {
    await check(
      STATE,
      Array.from({ length: 9 }, (_, i) => score(i + 2)),
      "score",
    );
  });

  it("after the cached prefix came from another request (prefix reuse)", async () => {
    const questions = [choice(27), score(5)];
    await engineProbabilities({ ticket: "I was charged once.", priority: 1 }, questions, subject);
    await engineProbabilities(STATE, [choice(3)], subject);
    expectClose(await engineProbabilities(STATE, questions, subject), await reference(STATE, questions), "reused prefix");
  });
});

describe("answers depend only on the state and the question itself", () => {
  const a = choice(4);
  const b = score(5);
  const c: Question = { type: "noul", instructions: "It is about billing.", criteria: null };

  it("adding, removing and reordering other questions changes nothing", async () => {
    const alone = await engineProbabilities(STATE, [a]);
    const withOthers = await engineProbabilities(STATE, [b, a, c]);
    const reordered = await engineProbabilities(STATE, [c, b, a]);
    expect(withOthers[1], "a in [b, a, c] vs alone").toEqual(alone[0]);
    expect(reordered[2], "a in [c, b, a] vs alone").toEqual(alone[0]);
    expect(reordered[1], "b in [c, b, a] vs [b, a, c]").toEqual(withOthers[0]);
  });

  it("the same request gives the same probabilities", async () => {
    const first = await engineProbabilities(STATE, [a, b, c]);
    await engineProbabilities("something else entirely", [c]);
    const second = await engineProbabilities(STATE, [a, b, c]);
    expect(second).toEqual(first);
  });

  it("different states give different answers (the model reads the state)", async () => {
    const one = await engineProbabilities("The sky is green.", [a]);
    const other = await engineProbabilities({ numbers: [1, 2, 3] }, [a]);
    expect(one[0], "two different states gave identical probabilities").not.toEqual(other[0]);
  });
});

describe("budgets and counting", () => {
  it("counts the prefix once plus each question's own tokens", async () => {
    const one = (await engine.prepare(buildPrompt(STATE, [choice(3)]))).inputTokens;
    const two = (await engine.prepare(buildPrompt(STATE, [choice(3), choice(3)]))).inputTokens;
    const prefixOnly = one - (two - one);
    expect(prefixOnly, `one question: ${one}, two: ${two}`).toBeGreaterThan(0);
    expect(two - one, `one question: ${one}, two: ${two}`).toBeGreaterThan(0);
  });

  it("reports each question's own tokens: the prefix is the rest, and each is what that question adds alone", async () => {
    const questions = [choice(3), choice(30), score(4), { type: "noul", instructions: "It holds." } as Question];
    const prepared = await engine.prepare(buildPrompt(STATE, questions));
    const perQuestion = prepared.questionTokens!;
    const context = JSON.stringify({ inputTokens: prepared.inputTokens, perQuestion });
    expect(perQuestion, context).toHaveLength(questions.length);
    const prefix = prepared.inputTokens - perQuestion.reduce((a, b) => a + b, 0);
    const empty = (await engine.prepare(buildPrompt(STATE, []))).inputTokens;
    expect(prefix, context).toBe(empty);
    for (const [i, q] of questions.entries()) {
      const alone = (await engine.prepare(buildPrompt(STATE, [q]))).inputTokens;
      expect(perQuestion[i], `question ${i}: ${context}`).toBe(alone - empty);
    }
  });

  it("reads a prompt built with auto cues in its template family's style: the same tokens and answers as that style asked explicitly", async () => {
    const questions = [choice(4), score(5), { type: "noul", instructions: "It is urgent.", criteria: { true: "today" } } as Question];
    expect(engine.templateFamily).toBe("chatml");
    const auto = await engine.prepare(buildPrompt(STATE, questions, "auto"));
    const explicit = await engine.prepare(buildPrompt(STATE, questions, promptStyleFor("chatml")));
    const full = await engine.prepare(buildPrompt(STATE, questions, promptStyleFor(undefined, "full")));
    expect([auto.inputTokens, full.inputTokens === auto.inputTokens]).toEqual([explicit.inputTokens, false]);
    expect((await engine.evaluate(auto)).labelLogProbs).toEqual((await engine.evaluate(explicit)).labelLogProbs);
  });

  it("refuses a state over the context budget before running the model", async () => {
    const huge = "word ".repeat(10_000);
    await expect(engine.prepare(buildPrompt(huge, [choice(2)]))).rejects.toThrow(BudgetError);
  });

  it("builds answers whose probabilities sum to 1", async () => {
    const questions = [choice(5), score(4)];
    const result = await engine.evaluate(await engine.prepare(buildPrompt(STATE, questions)));
    const answers = questions.map((q, i) => buildAnswer(q, result.labelLogProbs[i], NEUTRAL_TEMPERATURES));
    for (const answer of answers) {
      if (answer.type === "noul") continue;
      const sum = Object.values(answer.probabilities).reduce((s, p) => s + p, 0);
      expect(Math.abs(sum - 1), JSON.stringify(answer)).toBeLessThan(1e-12);
    }
  });
});

describe("loading", () => {
  it("finds a model given by a path relative to the working directory, not to the models directory", async () => {
    const relative = path.relative(process.cwd(), await tinyFixturePath());
    const other = createLlamaEngine({ model: relative, modelsDir: "models", contextSize: 512, maxRequestTokens: 1000, threads: 1 });
    await other.ready;
    expect(other.status(), `model ${relative}`).toEqual({ state: "ready" });
    expect(other.modelId).toBe("tiny-seed1");
    await other.close();
  });
});

describe("a broken model", () => {
  it("fails the evaluation (a 502) instead of answering NaN", async () => {
    const file = path.join(os.tmpdir(), `tjs-nan-${process.pid}.gguf`);
    await writeFixtureModel(file, { preset: "tiny", nanLogits: true });
    const broken = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 1024, maxRequestTokens: 10_000, threads: 1 });
    await broken.ready;
    const prompt = buildPrompt(STATE, [choice(3)]);
    const failure = await broken.evaluate(await broken.prepare(prompt)).catch((error: unknown) => error);
    expect(failure, String(failure)).toBeInstanceOf(EngineFailedError);
    expect(String(failure)).toMatch(/non-finite/);
    await broken.close();
    await rm(file, { force: true });
  });
});
