import { describe, expect, it } from "vitest";
import type { LabelledQuestion } from "./dataset.js";
import { answerLogits, answerProbabilities, LOG_PROBABILITY_FLOOR } from "./read-answer.js";

const choice: LabelledQuestion = { id: "c", type: "choice", labels: ["x", "y", "z"], gold: [1, 0, 0], soft: false };
const noul: LabelledQuestion = { id: "n", type: "noul", labels: ["true", "false"], gold: [1, 0], soft: false };
const score: LabelledQuestion = { id: "s", type: "score", labels: ["0", "1"], gold: [0, 1], soft: false };

describe("answerProbabilities", () => {
  it("reads probabilities in the question's label order, whatever order the server used", () => {
    expect(answerProbabilities(choice, { type: "choice", choice: "y", probabilities: { z: 0.1, y: 0.7, x: 0.2 } })).toEqual([0.2, 0.7, 0.1]);
    expect(answerProbabilities(score, { type: "score", score: 0.4, probabilities: { "0": 0.6, "1": 0.4 } })).toEqual([0.6, 0.4]);
  });

  it("reads noul as [P(true), P(false)]", () => {
    const p = answerProbabilities(noul, { type: "noul", noul: 0.25 });
    expect(p).toEqual([0.25, 0.75]);
  });

  it("refuses a missing answer, a wrong type, a missing label and an out-of-range value, naming the question", () => {
    expect(() => answerProbabilities(choice, undefined)).toThrow('question "c": the server sent no answer');
    expect(() => answerProbabilities(choice, { type: "noul", noul: 0.5 })).toThrow('question "c": answer type "noul", expected "choice"');
    expect(() => answerProbabilities(choice, { type: "choice", probabilities: { x: 0.5, y: 0.5 } })).toThrow('probabilities["z"] is missing');
    expect(() => answerProbabilities(noul, { type: "noul", noul: 1.5 })).toThrow("noul must be a number in [0, 1], got 1.5");
    expect(() => answerProbabilities(score, { type: "score", probabilities: { "0": "0.5", "1": 0.5 } })).toThrow('probabilities["0"] is "0.5"');
  });
});

describe("answerLogits", () => {
  it("uses the server's logits when present, with null standing for −Infinity", () => {
    const read = answerLogits(choice, { type: "choice", probabilities: { x: 1, y: 0, z: 0 }, logits: { x: -0.1, y: null, z: -5 } });
    expect(read).toEqual({ logits: [-0.1, -Infinity, -5], fromLogits: true });
    expect(answerLogits(noul, { type: "noul", noul: 0.5, logits: { true: -1, false: -2 } }).logits).toEqual([-1, -2]);
  });

  it("falls back to log(probabilities), a zero clamped at the floor", () => {
    const read = answerLogits(score, { type: "score", probabilities: { "0": 1, "1": 0 } });
    expect(read).toEqual({ logits: [0, Math.log(LOG_PROBABILITY_FLOOR)], fromLogits: false });
  });
});
