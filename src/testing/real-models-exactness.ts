import { getLlama, LlamaText, resolveChatWrapper, type Llama, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { choiceLabels, NOUL_LABELS, scoreLabels } from "../judgment/labels.js";
import { buildPrompt } from "../judgment/prompt.js";
import type { Question } from "../judgment/schema.js";
import { choiceQuestion, engineProbabilities, EXACTNESS_STATE, expectClose, NOUL_QUESTIONS, scoreQuestion } from "./exactness.js";
import type { RealModelName } from "./real-models.js";
import { referenceProbabilities } from "./reference.js";
import { createLlamaEngine, type LlamaEngine } from "../engine/llama/engine.js";
import { createChatPromptTemplate } from "../engine/chat-prompt.js";
import { bosTextOf } from "../engine/llama/runtime.js";

/**
 * The exactness suite on real weights, real tokenizers and real chat templates: SmolLM2-135M-
 * Instruct (byte-level BPE, 49,152 tokens, ChatML) and Gemma 3 270M (SentencePiece, 262,144
 * tokens, a template without a system role, sliding-window attention). The reference is the
 * independent full-vocabulary float64 evaluation of src/testing/reference.ts; it costs one fresh
 * evaluation of the whole prompt per question (and a short one per further label prefix), so
 * each question is asked once and the answers are shared by the slot counts and the isolation tests.
 */

/** A fresh evaluation of a 1,000-token prompt per label prefix takes seconds on an idle 2-core machine, minutes on a busy one. */
const SLOW = 600_000;

/**
 * 100 and 255 options without descriptions: the prompt is read whole by the engine and the
 * reference, so a shorter option list keeps CI's cost down; the labels and the readout are the same.
 */
const choiceFor = (n: number): Question =>
  n < 100
    ? choiceQuestion(n)
    : { type: "choice", instructions: `Pick one of ${n}.`, criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, null])) };

/** The suite on each of `models` (a test file per model, so that the two run side by side). */
export function describeExactness(models: Array<{ name: RealModelName; file: string }>): void {
  describe.skipIf(models.length === 0).each(models)("on $name", ({ name, file }) => {
    let llama: Llama;
    let model: LlamaModel;
    const engines = new Map<number, LlamaEngine>();
    const references = new Map<string, Promise<number[][]>>();

    beforeAll(async () => {
      llama = await getLlama({ gpu: false, build: "never" });
      model = await llama.loadModel({ modelPath: file });
      for (const slots of [1, 3]) {
        // One thread: the suite runs beside other files on 2 cores, where two llama.cpp threads spin
        // waiting for each other (see vitest.config.ts); thread counts change no number on CPU.
        const engine = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 4096, maxRequestTokens: 100_000, threads: 1, gpu: "off", slots });
        await engine.ready;
        expect(engine.status(), `engine with ${slots} slot(s)`).toEqual({ state: "ready" });
        engines.set(slots, engine);
      }
    });
    afterAll(async () => {
      for (const engine of engines.values()) await engine.close();
      await model?.dispose();
    });

    /** Each question alone against the reference (cached), so a multi-question request reuses it. */
    const reference = (state: unknown, question: Question): Promise<number[]> => {
      const key = JSON.stringify([state, question]);
      if (!references.has(key)) references.set(key, referenceProbabilities(model, buildPrompt(state, [question])));
      return references.get(key)!.then((answers) => answers[0]);
    };
    const check = async (slots: number, state: unknown, questions: Question[], what: string) => {
      const actual = await engineProbabilities(engines.get(slots)!, state, questions);
      const expected = await Promise.all(questions.map((q) => reference(state, q)));
      expectClose(actual, expected, `${what} (${slots} slot(s))`);
    };

    it("tokenises every label in context as alone: the label's tokens follow the prompt's unchanged", async () => {
      // The template exactly as the engine builds it (BOS handling included).
      const template = createChatPromptTemplate(resolveChatWrapper(model), bosTextOf(model));
      const questions = [choiceFor(255), choiceQuestion(26), scoreQuestion(10), ...NOUL_QUESTIONS];
      const labels = [...choiceLabels(255), ...choiceLabels(26), ...scoreLabels(10), ...NOUL_LABELS, ...NOUL_LABELS, ...NOUL_LABELS];
      const prompts = buildPrompt(EXACTNESS_STATE, questions).questions;
      expect(prompts.flatMap((q) => q.labels)).toEqual(labels);
      for (const question of prompts) {
        const suffix = template.suffix(question.text);
        const before = suffix.tokenize(model.tokenizer);
        for (const label of question.labels) {
          const together = LlamaText([suffix, label]).tokenize(model.tokenizer);
          expect(together, `label ${JSON.stringify(label)} after ${JSON.stringify(suffix.toString().slice(-40))}`).toEqual([
            ...before,
            ...model.tokenize(label),
          ]);
        }
      }
    });

    // Which path a label takes: SmolLM2 spells 87 of the 255 codes with two tokens, Gemma one.
    it("has labels of one and of two tokens among the 255 two-letter codes", () => {
      const lengths = choiceLabels(255).map((label) => model.tokenize(label).length);
      const count = (n: number) => lengths.filter((l) => l === n).length;
      expect([count(1) > 0, count(2) > 0, count(1) + count(2)], `one-token ${count(1)}, two-token ${count(2)}`).toEqual([true, true, 255]);
    });

    for (const slots of [1, 3]) {
      describe(`with ${slots} slot(s), the engine's probabilities equal a fresh full evaluation`, () => {
        for (const n of slots === 1 ? [2, 26, 27, 100, 255] : [2, 27]) {
          it(
            `choice with ${n} options`,
            async () => {
              await check(slots, EXACTNESS_STATE, [choiceFor(n)], `choice ${n}`);
            },
            SLOW,
          );
        }
        it(
          "noul without criteria, two-sided and one-sided (Yes/No)",
          async () => {
            await check(slots, EXACTNESS_STATE, NOUL_QUESTIONS, "noul");
          },
          SLOW,
        );
        (slots > 1 ? it.skip : it)(
          "score with every level count from 2 to 10",
          async () => {
            await check(
              slots,
              EXACTNESS_STATE,
              Array.from({ length: 9 }, (_, i) => scoreQuestion(i + 2)),
              "score",
            );
          },
          SLOW,
        );
        it(
          "after the cached prefix came from another request (prefix reuse)",
          async () => {
            const questions = [choiceQuestion(27), scoreQuestion(5)];
            const engine = engines.get(slots)!;
            await engineProbabilities(engine, { ticket: "I was charged once.", priority: 1 }, questions);
            await engineProbabilities(engine, EXACTNESS_STATE, [choiceQuestion(3)]);
            await check(slots, EXACTNESS_STATE, questions, "reused prefix");
          },
          SLOW,
        );
      });
    }

    // The reference keeps a question's stem between its label prefixes (src/testing/reference.ts):
    // the same bits as starting each from an empty sequence (SmolLM2 spells 4 of the first 40
    // codes with two tokens, two first tokens among them; Gemma none, so it reads once either way).
    // (The prefix's chunks are covered on the Qwen2 fixture, src/testing/reference.test.ts.)
    it(
      "the reference's kept stem gives the bits of a read from an empty sequence (40 options)",
      async () => {
        const prompt = buildPrompt(EXACTNESS_STATE, [choiceFor(40)]);
        const kept = await referenceProbabilities(model, prompt);
        const everyRead = await referenceProbabilities(model, prompt, { fresh: "every-read" });
        expect(kept, JSON.stringify({ kept, everyRead })).toEqual(everyRead);
      },
      SLOW,
    );

    // Strict reuses a cached prefix only in whole 256-token chunks: a long state sharing its first
    // few hundred tokens with the cached one re-reads the rest in its own chunks.
    it(
      "a long state that shares its start with the cached one equals a fresh full evaluation",
      async () => {
        const lines = Array.from({ length: 60 }, (_, i) => `Line ${i}: the customer wrote again about order ${1000 + i}.`);
        const first = { ticket: lines.join(" "), priority: 1 };
        const second = { ticket: [...lines.slice(0, 45), "Then they asked for a refund."].join(" "), priority: 3 };
        const questions = [choiceQuestion(4), NOUL_QUESTIONS[0]];
        for (const slots of [1, 3]) {
          await engineProbabilities(engines.get(slots)!, first, questions);
          await check(slots, second, questions, "state sharing its start with the cached one");
        }
      },
      SLOW,
    );

    // Under concurrent load: the heaviest questions at once on 3 slots, beside requests about other
    // states, each equal to the same fresh full evaluation as the one-at-a-time tests above.
    it(
      "under concurrent load (3 slots): 100 and 255 options and score 2–10 at once, beside other states' requests",
      async () => {
        const engine = engines.get(3)!;
        const scores = Array.from({ length: 9 }, (_, i) => scoreQuestion(i + 2));
        const [hundred, all, levels] = await Promise.all([
          engineProbabilities(engine, EXACTNESS_STATE, [choiceFor(100)]),
          engineProbabilities(engine, EXACTNESS_STATE, [choiceFor(255)]),
          engineProbabilities(engine, EXACTNESS_STATE, scores),
          engineProbabilities(engine, "another state, read at the same time", [choiceQuestion(27), ...NOUL_QUESTIONS]),
          engineProbabilities(engine, { ticket: "a third state", priority: 2 }, [scoreQuestion(5)]),
        ]);
        const expected = {
          hundred: [await reference(EXACTNESS_STATE, choiceFor(100))],
          all: [await reference(EXACTNESS_STATE, choiceFor(255))],
          levels: await Promise.all(scores.map((q) => reference(EXACTNESS_STATE, q))),
        };
        const worst = (rows: number[][], ref: number[][]) => Math.max(...rows.flatMap((row, q) => row.map((p, i) => Math.abs(p - ref[q][i]))));
        console.log(
          `${name} under concurrent load: max |engine − reference| choice 100 ${worst(hundred, expected.hundred)}, choice 255 ${worst(all, expected.all)}, score 2–10 ${worst(levels, expected.levels)}`,
        );
        expectClose(hundred, expected.hundred, "choice 100 under load");
        expectClose(all, expected.all, "choice 255 under load");
        expectClose(levels, expected.levels, "score 2–10 under load");
      },
      SLOW,
    );

    describe("answers depend only on the state and the question itself", () => {
      const a = choiceQuestion(4);
      const b = scoreQuestion(5);
      const c: Question = { type: "noul", instructions: "It is about billing.", criteria: null };
      const renamed: Question = { type: "noul", instructions: "It is about shipping.", criteria: null };

      it(
        "adding, removing, renaming and reordering other questions changes nothing",
        async () => {
          const engine = engines.get(1)!;
          const alone = await engineProbabilities(engine, EXACTNESS_STATE, [a]);
          const withOthers = await engineProbabilities(engine, EXACTNESS_STATE, [b, a, c]);
          const reordered = await engineProbabilities(engine, EXACTNESS_STATE, [c, b, a]);
          const otherRenamed = await engineProbabilities(engine, EXACTNESS_STATE, [renamed, b, a]);
          const removed = await engineProbabilities(engine, EXACTNESS_STATE, [a, c]);
          const context = JSON.stringify({ alone, withOthers, reordered, otherRenamed, removed });
          expect(withOthers[1], `a in [b, a, c] vs alone: ${context}`).toEqual(alone[0]);
          expect(reordered[2], `a in [c, b, a] vs alone: ${context}`).toEqual(alone[0]);
          expect(otherRenamed[2], `a in [c', b, a] vs alone: ${context}`).toEqual(alone[0]);
          expect(removed[0], `a in [a, c] vs alone: ${context}`).toEqual(alone[0]);
          expect(reordered[1], `b in [c, b, a] vs [b, a, c]: ${context}`).toEqual(withOthers[0]);
          expect(removed[1], `c in [a, c] vs [c, b, a]: ${context}`).toEqual(reordered[0]);
        },
        SLOW,
      );

      it(
        "the same request gives the same probabilities, on any slot count, after anything else",
        async () => {
          const first = await engineProbabilities(engines.get(1)!, EXACTNESS_STATE, [a, b, c]);
          await engineProbabilities(engines.get(1)!, "something else entirely", [c]);
          const second = await engineProbabilities(engines.get(1)!, EXACTNESS_STATE, [a, b, c]);
          const [onThree] = await Promise.all([
            engineProbabilities(engines.get(3)!, EXACTNESS_STATE, [a, b, c]),
            engineProbabilities(engines.get(3)!, "a concurrent request on another slot", [b]),
          ]);
          expect(second, "the same request twice").toEqual(first);
          expect(onThree, "1 slot vs 3 slots").toEqual(first);
        },
        SLOW,
      );
    });
  });
}
