import { describe, expect, it } from "vitest";
import { normalise } from "../../../judgment/answers.js";
import { EngineFailedError } from "../../types.js";
import type { ExpectedAnswer } from "./upstream-request.js";
import { readUpstreamAnswers, SUM_TOLERANCE } from "./validation.js";

const CHOICE: ExpectedAnswer = { id: "q1", type: "choice", keys: ["red", "__proto__", "blue 🎉"] };
const NOUL: ExpectedAnswer = { id: "q2", type: "noul", keys: ["true", "false"] };
const SCORE: ExpectedAnswer = { id: "q3", type: "score", keys: ["0", "1", "2"] };
const EXPECTED = [CHOICE, NOUL, SCORE];

/** JSON text parsed, as an answer comes off the wire: "__proto__" is then an own key like any other. */
const wire = (text: string) => JSON.parse(text);

type Change = unknown | ((answer: any) => unknown);

/** A valid answer to EXPECTED, with some answers or the usage replaced. */
function reply(overrides: { choice?: Change; noul?: Change; score?: Change; usage?: unknown } = {}): any {
  const body = {
    model: "up",
    answers: {
      q1: { type: "choice", choice: "__proto__", probabilities: wire('{"red":0.2,"__proto__":0.7,"blue 🎉":0.1}'), confidence: 0.55 },
      q2: { type: "noul", noul: 0.25 },
      q3: { type: "score", score: 1.3, probabilities: { 0: 0.1, 1: 0.5, 2: 0.4 }, legend: { 0: "a", 1: "b", 2: "c" }, confidence: 0.3 },
    } as Record<string, any>,
    usage: { input_tokens: 42, output_tokens: 0 } as unknown,
    timing_ms: 3.5,
    x_extra: "dropped",
  };
  for (const [id, change] of Object.entries({ q1: overrides.choice, q2: overrides.noul, q3: overrides.score })) {
    if (change !== undefined) body.answers[id] = typeof change === "function" ? change(body.answers[id]) : change;
  }
  if (overrides.usage !== undefined) body.usage = overrides.usage;
  return body;
}

const rejects = (body: unknown, pattern: RegExp) => {
  let error: unknown;
  try {
    readUpstreamAnswers(body, EXPECTED);
  } catch (e) {
    error = e;
  }
  expect(error, `accepted ${JSON.stringify(body)}`).toBeInstanceOf(EngineFailedError);
  expect((error as Error).message).toMatch(pattern);
};

const probabilitiesOf = (logProbs: number[]) => normalise(logProbs, 1);

describe("readUpstreamAnswers", () => {
  it("reads a valid answer as log-probabilities in our label order, with usage and timing", () => {
    const read = readUpstreamAnswers(reply(), EXPECTED);
    const [choice, noul, score] = read.labelLogProbs.map(probabilitiesOf);
    expect(choice, JSON.stringify(read)).toEqual([0.2, 0.7, 0.1].map((p) => expect.closeTo(p, 14)));
    expect(noul, JSON.stringify(read)).toEqual([expect.closeTo(0.25, 14), expect.closeTo(0.75, 14)]);
    expect(score, JSON.stringify(read)).toEqual([0.1, 0.5, 0.4].map((p) => expect.closeTo(p, 14)));
    expect(read.inputTokens).toBe(42);
    expect(read.timingMs).toBe(3.5);
  });

  it("renormalises a drift within the tolerance and refuses a larger one", () => {
    const drift = SUM_TOLERANCE / 2;
    const read = readUpstreamAnswers(reply({ score: (a: any) => ({ ...a, probabilities: { 0: 0.1, 1: 0.5 + drift, 2: 0.4 }, score: 1.3 + drift }) }), EXPECTED);
    const p = probabilitiesOf(read.labelLogProbs[2]);
    expect(p, JSON.stringify(p)).toEqual([0.1, 0.5 + drift, 0.4].map((x) => expect.closeTo(x / (1 + drift), 14)));
    rejects(reply({ score: (a: any) => ({ ...a, probabilities: { 0: 0.1, 1: 0.52, 2: 0.4 }, score: 1.32 }) }), /sum to 1\.02/);
  });

  it("accepts a choice tied with the top and refuses one below it", () => {
    const tied = wire('{"red":0.45,"__proto__":0.45,"blue 🎉":0.1}');
    expect(() => readUpstreamAnswers(reply({ choice: (a: any) => ({ ...a, choice: "red", probabilities: tied }) }), EXPECTED)).not.toThrow();
    rejects(reply({ choice: (a: any) => ({ ...a, choice: "red" }) }), /choice "red" has probability 0.2, below the top 0.7/);
    rejects(reply({ choice: (a: any) => ({ ...a, choice: "green" }) }), /not one of the options/);
  });

  it("refuses wrong question ids, and extra or missing option keys, naming them", () => {
    const body = reply();
    body.answers.q4 = body.answers.q3;
    delete body.answers.q3;
    rejects(body, /answers do not match the request: missing \["q3"\], unexpected \["q4"\]/);
    rejects(reply({ choice: (a: any) => ({ ...a, probabilities: wire('{"red":0.3,"blue 🎉":0.7}'), choice: "blue 🎉" }) }), /missing \["__proto__"\]/);
    rejects(reply({ score: (a: any) => ({ ...a, probabilities: { 1: 0.1, 2: 0.5, 3: 0.4 }, score: 2.3 }) }), /missing \["0"\], unexpected \["3"\]/);
  });

  it("refuses probabilities that are not numbers in [0, 1]", () => {
    for (const bad of [null, "0.5", -0.1, 1.5, 1e400]) {
      rejects(reply({ noul: { type: "noul", noul: bad } }), /q2: noul is .*not a probability/);
    }
    rejects(reply({ score: (a: any) => ({ ...a, probabilities: { 0: -0.1, 1: 0.7, 2: 0.4 } }) }), /probabilities\["0"\] is -0.1, not a probability/);
  });

  it("refuses a score that is not the expectation of its probabilities (levels numbered from 1, say)", () => {
    rejects(reply({ score: (a: any) => ({ ...a, score: 2.3 }) }), /score 2.3 is not the expectation 1.3/);
    rejects(reply({ score: (a: any) => ({ ...a, score: undefined }) }), /score missing/);
  });

  it("refuses a wrong answer type, a missing answer object and a bad usage", () => {
    rejects(reply({ noul: { type: "choice", noul: 0.5 } }), /q2 has type "choice", not noul/);
    rejects(reply({ noul: null }), /answer to q2 is null, not an object/);
    for (const usage of [{ input_tokens: -1 }, { input_tokens: 1.5 }, { input_tokens: "7" }, {}, null]) {
      rejects(reply({ usage }), /usage/);
    }
    rejects([], /not an object/);
  });

  it("prefers the upstream's logits (uncalibrated) over its probabilities, keyed like them", () => {
    const withLogits = reply({
      choice: (a: any) => ({ ...a, logits: wire('{"red":-3,"__proto__":-0.5,"blue 🎉":-4}') }),
      noul: (a: any) => ({ ...a, logits: { true: -2, false: -0.2 } }),
    });
    const read = readUpstreamAnswers(withLogits, EXPECTED);
    expect(read.labelLogProbs[0]).toEqual([-3, -0.5, -4]);
    expect(read.labelLogProbs[1]).toEqual([-2, -0.2]);
  });

  it("reads a null logit as −∞ only where the probability is 0, and refuses logits that contradict the probabilities", () => {
    const zero = reply({ noul: { type: "noul", noul: 0, logits: { true: null, false: 0 } } });
    expect(readUpstreamAnswers(zero, EXPECTED).labelLogProbs[1]).toEqual([-Infinity, 0]);
    rejects(reply({ noul: { type: "noul", noul: 0.5, logits: { true: null, false: 0 } } }), /logits\["true"\] is null/);
    rejects(reply({ noul: { type: "noul", noul: 0.9, logits: { true: -2, false: -0.2 } } }), /logits disagree with probabilities/);
    rejects(reply({ noul: { type: "noul", noul: 0.9, logits: { true: -0.1, yes: -2 } } }), /logits do not match the request/);
  });
});
