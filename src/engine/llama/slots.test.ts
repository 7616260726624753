import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { createLlamaEngine, type LlamaEngine } from "./engine.js";
import { EngineUnavailableError } from "../types.js";

const tinyEngine = async (slots: number, gpu: "off" | "metal" | "cuda" = "off") => {
  const engine = createLlamaEngine({ model: await tinyFixturePath(), modelsDir: ".", contextSize: 4096, maxRequestTokens: 100_000, threads: 1, gpu, slots });
  await engine.ready;
  return engine;
};

// Labels of one token each (≤ 26 options, digits, Yes/No): a request then evaluates exactly its
// prompt's tokens, so the counts below are exact.
const QUESTIONS: Question[][] = [
  [{ type: "choice", instructions: "What is it about?", criteria: { billing: null, technical: "bugs", account: "login" } }],
  [{ type: "score", instructions: "How urgent is it?", criteria: ["low", "medium", "high", "critical"] }],
  [{ type: "noul", instructions: "The customer is angry.", criteria: null }],
];
const STATES = [
  { ticket: "I was charged twice this month.", words: "word ".repeat(60) },
  { ticket: "The app crashes when I log in.", words: "crash ".repeat(60) },
  { ticket: "Please change the address of my parcel.", words: "parcel ".repeat(60) },
];

/** Round r asks about every state in turn, each time a new question: tenants interleaving their states. */
const schedule = (rounds: number) =>
  Array.from({ length: rounds }, (_, round) => STATES.map((state, s) => ({ round, state, questions: QUESTIONS[(round + s) % QUESTIONS.length] }))).flat();

async function run(engine: LlamaEngine, state: unknown, questions: Question[]) {
  const before = engine.evaluatedTokens();
  const prepared = await engine.prepare(buildPrompt(state, questions));
  const result = await engine.evaluate(prepared);
  return { logProbs: result.labelLogProbs, inputTokens: prepared.inputTokens, evaluated: engine.evaluatedTokens() - before };
}

describe("slots: tenants interleaving different states", () => {
  let slotted: LlamaEngine;
  let single: LlamaEngine;
  beforeAll(async () => {
    slotted = await tinyEngine(STATES.length);
    single = await tinyEngine(1);
  });
  afterAll(async () => {
    await slotted?.close();
    await single?.close();
  });

  it("counts the prefix tokens it reused and evaluated (for /metrics)", async () => {
    const engine = await tinyEngine(2);
    try {
      const prepared = await engine.prepare(buildPrompt(STATES[0], QUESTIONS[0]));
      // With no questions, what a request reads is its prefix alone.
      const prefix = (await engine.prepare(buildPrompt(STATES[0], []))).inputTokens;
      await engine.evaluate(prepared);
      expect(engine.stats()).toEqual({ prefixTokensReused: 0, prefixTokensEvaluated: prefix });
      await engine.evaluate(await engine.prepare(buildPrompt(STATES[0], QUESTIONS[1])));
      expect(engine.stats()).toEqual({ prefixTokensReused: prefix, prefixTokensEvaluated: prefix });
    } finally {
      await engine.close();
    }
  });

  it("describes the CPU backend and its slots", () => {
    expect(slotted.description).toEqual({ kind: "llama", backend: "cpu", slots: STATES.length, exactness: { mode: "strict", bound: 1e-9 } });
    expect(single.description).toEqual({ kind: "llama", backend: "cpu", slots: 1, exactness: { mode: "strict", bound: 1e-9 } });
  });

  it("give every state its own slot: identical numbers to one slot, without re-reading any state", async () => {
    // The state-only part of a prefix: what a request re-reads when its state was evicted.
    const prefixLength = async (state: unknown) => {
      const one = (await slotted.prepare(buildPrompt(state, QUESTIONS[0]))).inputTokens;
      const two = (await slotted.prepare(buildPrompt(state, [...QUESTIONS[0], ...QUESTIONS[0]]))).inputTokens;
      return one - (two - one);
    };
    for (const { round, state, questions } of schedule(3)) {
      const what = `round ${round}, state "${state.ticket}"`;
      const many = await run(slotted, state, questions);
      const one = await run(single, state, questions);
      expect(many.logProbs, `${what}: ${STATES.length} slots vs 1 slot`).toEqual(one.logProbs);
      const prefix = await prefixLength(state);
      // One slot re-reads every state (it last held another one); each slot kept its own, and
      // evaluates only its questions (plus, in strict mode, the spare token after each stem).
      expect(one.evaluated, `${what}: 1 slot evaluated ${one.evaluated} of ${one.inputTokens}`).toBeGreaterThan(one.inputTokens - prefix);
      if (round > 0) expect(many.evaluated, `${what}: ${STATES.length} slots`).toBe(many.inputTokens - prefix + questions.length);
    }
  });

  it("still answer exactly once there are more states than slots (the least recently used is evicted)", async () => {
    const two = await tinyEngine(2);
    try {
      for (const { round, state, questions } of schedule(2)) {
        const fewer = await run(two, state, questions);
        expect(fewer.logProbs, `round ${round}, state "${state.ticket}": 2 slots vs 1 slot`).toEqual((await run(single, state, questions)).logProbs);
      }
    } finally {
      await two.close();
    }
  });

  it("answer concurrent requests (two per state, three states) with the same numbers as one at a time", async () => {
    const requests = schedule(2);
    const concurrent = await Promise.all(requests.map(({ state, questions }) => run(slotted, state, questions)));
    for (const [i, { state, questions }] of requests.entries()) {
      expect(concurrent[i].logProbs, `request ${i}, state "${state.ticket}"`).toEqual((await run(single, state, questions)).logProbs);
    }
  });
});

describe("the GPU choice", () => {
  it("fails loading, saying why, when the asked GPU has no usable build here (never a silent CPU fallback)", async () => {
    // Metal exists only on macOS; elsewhere CUDA is asked of a Mac.
    const gpu = process.platform === "darwin" ? "cuda" : "metal";
    const engine = await tinyEngine(1, gpu);
    const status = await engine.status();
    expect(status.state, JSON.stringify(status)).toBe("failed");
    expect(JSON.stringify(status)).toContain(`gpu ${gpu}`);
    await expect(engine.prepare(buildPrompt("x", QUESTIONS[0]))).rejects.toThrow(EngineUnavailableError);
    await engine.close();
  });
});
