import { readGgufFileInfo } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { RequestAbortedError, type PreparedJudgment } from "../types.js";
import { createLlamaEngine, type LlamaEngine } from "./engine.js";
import { centred, dot, tensorRows } from "./features-test-helpers.js";

const choice = (instructions: string, n = 3): Question => ({
  type: "choice",
  instructions,
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, null])),
});
const QUESTIONS = [choice("Pick one."), choice("Which fits the ticket best?", 5), choice("Pick one.")];
const STATE = { ticket: "I was charged twice.", priority: 2 };

const engines: LlamaEngine[] = [];
const tinyEngine = async (exactness: "strict" | "tolerant" = "strict", slots = 1) => {
  const engine = createLlamaEngine({
    model: await tinyFixturePath(),
    modelsDir: ".",
    contextSize: 8192,
    maxRequestTokens: 100_000,
    threads: 1,
    gpu: "off",
    slots,
    exactness,
  });
  engines.push(engine);
  await engine.ready;
  return engine;
};

let engine: LlamaEngine;
let embeddingLength: number;
beforeAll(async () => {
  engine = await tinyEngine();
  const info = await readGgufFileInfo(await tinyFixturePath());
  embeddingLength = (info.metadata as unknown as { llama: { embedding_length: number } }).llama.embedding_length;
});
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
});

const prepare = (state: unknown, questions: Question[], on: LlamaEngine = engine) => on.prepare(buildPrompt(state, questions));
const bits = (features: Float32Array[]) => features.map((f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString("hex"));

describe("readFeatures on the in-process engine", () => {
  it("gives one vector of the model's embedding length per question, in prompt order, and its own time", async () => {
    const { features, timingMs } = await engine.readFeatures!(await prepare(STATE, QUESTIONS));
    expect(features).toHaveLength(3);
    for (const feature of features) {
      expect(feature).toBeInstanceOf(Float32Array);
      expect(feature.length).toBe(embeddingLength);
      expect(feature.every(Number.isFinite)).toBe(true);
    }
    expect(timingMs).toBeGreaterThan(0);
    // The same question after the same prefix is the same sequence: the same vector.
    expect(bits([features[2]])).toEqual(bits([features[0]]));
    expect(bits([features[1]])).not.toEqual(bits([features[0]]));
  });

  it("a question's vector depends only on the state and that question: others added, removed or reordered change no bit", async () => {
    const [alone] = (await engine.readFeatures!(await prepare(STATE, [QUESTIONS[1]]))).features;
    const { features } = await engine.readFeatures!(await prepare(STATE, [QUESTIONS[0], QUESTIONS[1]]));
    expect(bits([features[1]])).toEqual(bits([alone]));
    const other = (await engine.readFeatures!(await prepare({ ticket: "The parcel never came." }, [QUESTIONS[1]]))).features[0];
    expect(bits([other])).not.toEqual(bits([alone]));
  });

  it.each(["strict", "tolerant"] as const)("%s: bit-identical on repeat, alone and beside other requests on every slot", async (mode) => {
    const on = mode === "strict" ? engine : await tinyEngine("tolerant", 2);
    const prepared = await prepare(STATE, QUESTIONS, on);
    const alone = bits((await on.readFeatures!(prepared)).features);
    expect(bits((await on.readFeatures!(prepared)).features)).toEqual(alone);
    const others = await Promise.all([prepare({ ticket: "x".repeat(300) }, QUESTIONS, on), prepare({ other: [1, 2, 3] }, [QUESTIONS[1]], on)]);
    const [beside] = await Promise.all([
      on.readFeatures!(prepared),
      ...others.map((p) => on.evaluate(p)),
      ...others.map((p) => on.readFeatures!(p)),
      on.readFeatures!(prepared),
    ]);
    expect(bits(beside.features)).toEqual(alone);
  });

  it("leaves the readout as it was: the same probabilities before and after reading features", async () => {
    const prepared = await prepare(STATE, QUESTIONS);
    const before = await engine.evaluate(prepared);
    await engine.readFeatures!(prepared);
    expect((await engine.evaluate(prepared)).labelLogProbs).toEqual(before.labelLogProbs);
  });

  it("is the final hidden state at the answer position: the LM head's rows times it give the readout's label logits", async () => {
    // The fixture is F32 with an untied LM head (output.weight), so the product is plain float.
    const head = await tensorRows(await tinyFixturePath(), "output.weight");
    const prepared = await prepare(STATE, QUESTIONS);
    const { features } = await engine.readFeatures!(prepared);
    const { labelLogProbs } = await engine.evaluate(prepared);
    const tokens = prepared as unknown as { questions: Array<{ trie: { children: Map<number, { labelIndex?: number }> } }> };
    let worst = 0;
    for (const [q, question] of tokens.questions.entries()) {
      const labels = [...question.trie.children].filter(([, child]) => child.labelIndex !== undefined);
      expect(labels, "one-token labels only").toHaveLength(labelLogProbs[q].length);
      const projected = await Promise.all(labels.map(async ([token]) => dot((await head.row(token)).values, features[q])));
      const readout = labels.map(([, child]) => labelLogProbs[q][child.labelIndex!]);
      const [a, b] = [centred(projected), centred(readout)];
      worst = Math.max(worst, ...a.map((value, i) => Math.abs(value - b[i])));
    }
    // Float32 sums in another order than float64's: measured 1.3e-6 on logits of size ~1.
    expect(worst).toBeLessThan(1e-5);
  });
});

describe("readFeatures refuses", () => {
  it("a request whose client left, before and while it waits for the model, and between questions", async () => {
    const prepared = await prepare(STATE, QUESTIONS);
    const left = new AbortController();
    left.abort();
    await expect(engine.readFeatures!(prepared, left.signal)).rejects.toBeInstanceOf(RequestAbortedError);
    // Queued behind a long read, then abandoned: it never runs.
    const waiting = new AbortController();
    const long = engine.evaluate(await prepare({ ticket: "word ".repeat(200) }, QUESTIONS));
    const queued = engine.readFeatures!(prepared, waiting.signal);
    waiting.abort();
    await expect(queued).rejects.toBeInstanceOf(RequestAbortedError);
    await long;
    // Abandoned after its first question: the remaining ones are not read.
    let checks = 0;
    const midway = {
      get aborted() {
        return ++checks > 3;
      },
    } as AbortSignal;
    await expect(engine.readFeatures!(prepared, midway)).rejects.toBeInstanceOf(RequestAbortedError);
    // And the engine still answers, with the same bits.
    expect((await engine.readFeatures!(prepared)).features).toHaveLength(3);
  });

  it("what another engine prepared, and after close", async () => {
    const other = await tinyEngine();
    const prepared = await prepare(STATE, QUESTIONS, other);
    await expect(engine.readFeatures!({ inputTokens: 1, inputTokensExact: true } as PreparedJudgment)).rejects.toThrow(TypeError);
    await other.readFeatures!(prepared);
    await other.close();
    await expect(other.readFeatures!(prepared)).rejects.toThrow(/not available/);
  });
});
