import { describe, expect, it } from "vitest";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { inputTokensUpperBound } from "../systemone/upstream-request.js";
import { BudgetError, UpstreamLimitError } from "../../types.js";
import { prepareDecisionsRequest } from "./request.js";
import { DeclinedQuestionError, readDecisionsAnswers } from "./validation.js";

/** Our questions as Decisions requests: what is sent, in how many calls, and the bound held. */

const LIMITS = { options: 255, levels: 10, questions: 64 };
const prepare = (state: unknown, questions: Question[], options: Partial<{ limits: typeof LIMITS; maxRequestTokens: number }> = {}) =>
  prepareDecisionsRequest(buildPrompt(state, questions), {
    model: "m",
    limits: options.limits ?? LIMITS,
    maxRequestTokens: options.maxRequestTokens ?? 100_000,
  });
const sent = (prepared: ReturnType<typeof prepare>) => prepared.calls.map((c) => JSON.parse(c.body));

describe("the Decisions request", () => {
  it("renders a JSON state and instructions as this service shows them, and puts noul criteria in the instructions", () => {
    const [body] = sent(
      prepare({ b: 1, a: [true, null] }, [
        { type: "noul", instructions: { ask: "angry?" }, criteria: { true: "rude", false: { calm: true } } },
        { type: "noul", instructions: null },
      ]),
    );
    expect(body.input).toBe('{\n  "a": [\n    true,\n    null\n  ],\n  "b": 1\n}');
    expect(body.questions).toEqual([
      { type: "predicate", name: "q1", instructions: '{\n  "ask": "angry?"\n}\nIt holds when: rude\nIt does not hold when: {\n  "calm": true\n}' },
      { type: "predicate", name: "q2", instructions: "" },
    ]);
  });

  it("sends options as string choices in key order, and levels with their descriptions as labels", () => {
    const [body] = sent(
      prepare("s", [
        { type: "choice", instructions: "Which?", criteria: { b: null, "10": "ten", true: { x: 1 } } },
        { type: "score", instructions: "How much?", criteria: ["none", null, "lots"] },
      ]),
    );
    expect(body.questions[0].choices).toEqual([{ value: "10", description: "ten" }, { value: "b" }, { value: "true", description: '{\n  "x": 1\n}' }]);
    expect(body.questions[1].levels).toEqual([{ label: "none" }, { label: "" }, { label: "lots" }]);
  });

  it("splits questions over calls of at most the upstream's size, holding the bound of each call", () => {
    const questions: Question[] = Array.from({ length: 5 }, (_, i) => ({ type: "noul", instructions: `statement ${i}` }));
    const prepared = prepare("a long state ".repeat(20), questions, { limits: { ...LIMITS, questions: 2 } });
    expect(prepared.calls.map((c) => c.expected.map((e) => e.name))).toEqual([["q1", "q2"], ["q3", "q4"], ["q5"]]);
    const prompt = buildPrompt("a long state ".repeat(20), questions);
    const perCall = [[0, 1], [2, 3], [4]].map((indices) => inputTokensUpperBound({ ...prompt, questions: indices.map((i) => prompt.questions[i]) }));
    expect(prepared.inputTokens).toBe(perCall.reduce((a, b) => a + b, 0));
    expect(prepare("a long state ".repeat(20), questions).inputTokens).toBe(inputTokensUpperBound(prompt));
  });

  it("refuses over the upstream's options or levels, or over the token budget, before anything is sent", () => {
    const criteria = Object.fromEntries("abc".split("").map((k) => [k, null]));
    expect(() => prepare("s", [{ type: "choice", instructions: "x", criteria }], { limits: { ...LIMITS, options: 2 } })).toThrow(UpstreamLimitError);
    expect(() => prepare("s", [{ type: "score", instructions: "x", criteria: ["a", "b", "c"] }], { limits: { ...LIMITS, levels: 2 } })).toThrow(
      UpstreamLimitError,
    );
    expect(() => prepare("s".repeat(1000), [{ type: "noul", instructions: "x" }], { maxRequestTokens: 500 })).toThrow(BudgetError);
  });
});

describe("reading the answers", () => {
  const expected = prepare("s", [
    { type: "noul", instructions: "x" },
    { type: "choice", instructions: "y", criteria: { a: null, b: null } },
  ]).calls[0].expected;
  const answer = (second: unknown) => ({
    model: "m",
    answers: [{ type: "predicate", name: "q1", probability: 0.25 }, second],
    usage: { input_tokens: 42 },
  });

  it("gives log-probabilities in label order and the usage", () => {
    const read = readDecisionsAnswers(
      answer({
        type: "choice",
        name: "q2",
        choice: "b",
        confidence: 0.5,
        probabilities: [
          { value: "a", probability: 0.2 },
          { value: "b", probability: 0.8 },
        ],
      }),
      expected,
    );
    expect(read.inputTokens).toBe(42);
    expect(read.labelLogProbs.map((l) => l.map(Math.exp))).toEqual([
      [0.25, 0.75],
      [expect.closeTo(0.2, 15), expect.closeTo(0.8, 15)],
    ]);
  });

  it("turns the format's refusal into the upstream's refusal of the request (a 400, uncharged)", () => {
    expect(() => readDecisionsAnswers(answer({ type: "refusal", name: "q2" }), expected)).toThrow(DeclinedQuestionError);
  });
});
