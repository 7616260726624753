import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "../testing/fixture.js";
import { openRawReader, type RawReader } from "./ceiling.js";
import { mulberry32 } from "./random.js";
import { createRequestGenerator, generateText, measureTokensPerWord, wordsFor } from "./requests.js";

interface Body {
  state: string;
  questions: Record<string, { type: string; instructions: string; criteria?: unknown }>;
}

const shape = { stateTokens: 300, questions: 3, options: 4 };
const bodies = (next: () => { body: string }, n: number): Body[] => Array.from({ length: n }, () => JSON.parse(next().body) as Body);

describe("the request generator", () => {
  it("writes exactly the asked number of words", () => {
    const random = mulberry32(7);
    for (const words of [1, 2, 17, 230]) expect(generateText(random, words).split(" ")).toHaveLength(words);
  });

  it("sends the same requests for the same seed and different ones for another seed", () => {
    const a = bodies(createRequestGenerator(shape, { seed: 1, tokensPerWord: 1.3 }), 5);
    const b = bodies(createRequestGenerator(shape, { seed: 1, tokensPerWord: 1.3 }), 5);
    const c = bodies(createRequestGenerator(shape, { seed: 2, tokensPerWord: 1.3 }), 5);
    expect(a).toEqual(b);
    expect(c[0].state).not.toBe(a[0].state);
  });

  it("gives every request a new state that differs from its first words, so no prefix cache can serve it", () => {
    const states = bodies(createRequestGenerator(shape, { seed: 3, tokensPerWord: 1.3 }), 50).map((b) => b.state);
    expect(new Set(states).size).toBe(50);
    expect(new Set(states.map((s) => s.split(" ").slice(0, 3).join(" "))).size).toBeGreaterThan(45);
  });

  it("repeats one state with new questions when asked to", () => {
    const list = bodies(createRequestGenerator(shape, { seed: 4, tokensPerWord: 1.3, sameState: true }), 10);
    expect(new Set(list.map((b) => b.state)).size).toBe(1);
    expect(new Set(list.map((b) => JSON.stringify(b.questions))).size).toBeGreaterThan(1);
  });

  it("takes K states in turn, with new questions every time, when asked for interleaved states", () => {
    const list = bodies(createRequestGenerator(shape, { seed: 6, tokensPerWord: 1.3, states: 3 }), 9);
    const states = list.map((b) => b.state);
    expect(new Set(states).size, JSON.stringify(states)).toBe(3);
    expect(states.slice(3), "the second and third rounds repeat the first in order").toEqual([...states.slice(0, 3), ...states.slice(0, 3)]);
    expect(new Set(list.map((b) => JSON.stringify(b.questions))).size).toBeGreaterThan(1);
  });

  it("mixes choice, noul and score questions with the asked options (levels capped at 10)", () => {
    const [body] = bodies(createRequestGenerator({ stateTokens: 50, questions: 4, options: 12 }, { seed: 5, tokensPerWord: 1.3 }), 1);
    expect(Object.keys(body.questions)).toEqual(["q1", "q2", "q3", "q4"]);
    expect(Object.values(body.questions).map((q) => q.type)).toEqual(["choice", "noul", "score", "choice"]);
    expect(Object.keys(body.questions.q1.criteria as object)).toHaveLength(12);
    expect(body.questions.q3.criteria).toHaveLength(10);
    const [small] = bodies(createRequestGenerator({ stateTokens: 50, questions: 3, options: 2 }, { seed: 5, tokensPerWord: 1.3 }), 1);
    expect(Object.keys(small.questions.q1.criteria as object)).toHaveLength(2);
    expect(small.questions.q3.criteria).toEqual(["none", "extreme"]);
  });

  it("sizes the state from tokens per word", () => {
    expect(wordsFor(300, 1.5)).toBe(200);
    expect(wordsFor(300, 4.8)).toBe(63);
    expect(wordsFor(0, 1.3)).toBe(1);
  });
});

describe("state length in tokens, calibrated with the model's tokenizer", () => {
  let reader: RawReader;
  beforeAll(async () => {
    reader = await openRawReader(await tinyFixturePath(), { threads: 1 });
  });
  afterAll(() => reader?.close());

  // Word lengths vary (order numbers and amounts take many tokens), so short states spread more.
  it("comes within 5% of the target on average, and each state within 40% / 15% / 10% at 100 / 300 / 1000 tokens", () => {
    const count = (text: string) => reader.tokenize(text).length;
    const tokensPerWord = measureTokensPerWord(count, 1);
    for (const [target, spread] of [
      [100, 0.4],
      [300, 0.15],
      [1000, 0.1],
    ]) {
      const next = createRequestGenerator({ ...shape, stateTokens: target }, { seed: 9, tokensPerWord });
      const lengths = bodies(next, 20).map((b) => count(b.state));
      const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
      expect(Math.abs(mean / target - 1), `target ${target}, mean ${mean}`).toBeLessThan(0.05);
      for (const length of lengths) expect(Math.abs(length / target - 1), `target ${target}: ${length}`).toBeLessThan(spread);
    }
  });

  it("reads a prompt from an empty context in measurable time", async () => {
    const tokens = reader.tokenize(generateText(mulberry32(1), 100));
    const seconds = await reader.readSeconds(tokens);
    expect(seconds).toBeGreaterThan(0);
    expect(await reader.readSeconds(tokens)).toBeGreaterThan(0); // the context is cleared between reads
  });
});
