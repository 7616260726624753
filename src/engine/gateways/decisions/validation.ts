import { ARGMAX_TOLERANCE, objectOrFail, own, probability, SCORE_TOLERANCE, shown, SUM_TOLERANCE } from "../systemone/validation.js";
import { EngineFailedError, UpstreamRejectedError } from "../../types.js";
import type { ExpectedDecision } from "./request.js";

/**
 * Every answer of a Decisions upstream is checked before anything of it is used, with the
 * tolerances of the System One gateway (systemone/validation.ts says why each is what it is):
 * as many answers as questions, in order (each echoes the name it was sent), each of the
 * question's type, with exactly the question's values in request order (a choice's as strings,
 * a score's as 0…n−1 with their labels), every probability finite in [0, 1], a choice's or
 * score's summing to 1 within SUM_TOLERANCE (then renormalised), `choice` the top value,
 * `score` the expectation within SCORE_TOLERANCE, `confidence` in [0, 1], and
 * `usage.input_tokens` a non-negative integer. What survives is label log-probabilities only:
 * choice, score, legend and confidence are recomputed by our own code from them.
 */

export interface DecisionsAnswers {
  /** Per question, in order: log P of each label (predicate: true, false). */
  labelLogProbs: number[][];
  inputTokens: number;
}

/** The format's `refusal` answer: the hosted model declined one question (a 400 for the client, uncharged). */
export class DeclinedQuestionError extends UpstreamRejectedError {
  override name = "DeclinedQuestionError";
}

export function readDecisionsAnswers(body: unknown, expected: readonly ExpectedDecision[]): DecisionsAnswers {
  const top = objectOrFail(body, "the upstream's answer");
  if (typeof own(top, "model") !== "string") throw new EngineFailedError(`the upstream's model is ${shown(own(top, "model"))}, not a string`);
  const answers = own(top, "answers");
  if (!Array.isArray(answers)) throw new EngineFailedError(`the upstream's answers are ${shown(answers, 120)}, not an array`);
  if (answers.length !== expected.length) {
    throw new EngineFailedError(`the upstream gave ${answers.length} answers to ${expected.length} questions`);
  }
  const labelLogProbs = expected.map((question, i) => readAnswer(answers[i], question));
  const usage = objectOrFail(own(top, "usage"), "the upstream's usage");
  const inputTokens = own(usage, "input_tokens");
  if (typeof inputTokens !== "number" || !Number.isSafeInteger(inputTokens) || inputTokens < 0) {
    throw new EngineFailedError(`the upstream's usage.input_tokens is ${shown(inputTokens)}, not a non-negative integer`);
  }
  return { labelLogProbs, inputTokens };
}

/** log P per label of one answer, checked against the question it answers. */
export function readAnswer(value: unknown, question: ExpectedDecision): number[] {
  const where = `the upstream's answer to ${question.name}`;
  const answer = objectOrFail(value, where);
  const name = own(answer, "name");
  if (name !== question.name) throw new EngineFailedError(`${where} is named ${shown(name)}: answers out of order or mixed up`);
  const type = own(answer, "type");
  if (type === "refusal") {
    throw new DeclinedQuestionError(
      `the upstream model declined to answer question ${question.name} (it numbers the questions q1, q2, … in request order); nothing was charged`,
    );
  }
  if (type !== question.type) throw new EngineFailedError(`${where} has type ${shown(type)}, not ${question.type}`);
  if (question.type === "predicate") {
    const p = probability(own(answer, "probability"), `${where}: probability`);
    return [Math.log(p), Math.log(1 - p)];
  }
  probability(own(answer, "confidence"), `${where}: confidence`);
  const p = listedProbabilities(answer, question, where);
  const sum = p.reduce((a, b) => a + b, 0);
  if (!(Math.abs(sum - 1) <= SUM_TOLERANCE)) throw new EngineFailedError(`${where}: probabilities sum to ${sum}, not 1`);
  if (question.type === "choice") {
    const choice = own(answer, "choice");
    const index = typeof choice === "string" ? question.values.indexOf(choice) : -1;
    if (index < 0) throw new EngineFailedError(`${where}: choice ${shown(choice)} is not one of the choices`);
    const top = Math.max(...p);
    if (p[index] < top - ARGMAX_TOLERANCE) throw new EngineFailedError(`${where}: choice ${shown(choice)} has probability ${p[index]}, below the top ${top}`);
  } else {
    const score = own(answer, "score");
    const expectation = p.reduce((total, pi, i) => total + i * pi, 0);
    if (typeof score !== "number" || !(Math.abs(score - expectation) <= SCORE_TOLERANCE)) {
      throw new EngineFailedError(`${where}: score ${shown(score)} is not the expectation ${expectation} of its probabilities`);
    }
  }
  return p.map((pi) => Math.log(pi / sum));
}

/** `probabilities`: one entry per value, in request order, each naming its value (and a score level its label). */
function listedProbabilities(answer: Record<string, unknown>, question: ExpectedDecision, where: string): number[] {
  const listed = own(answer, "probabilities");
  if (!Array.isArray(listed) || listed.length !== question.values.length) {
    const what = Array.isArray(listed) ? `${listed.length} entries` : shown(listed, 120);
    throw new EngineFailedError(
      `${where}: probabilities are ${what}, not one per ${question.type === "choice" ? "choice" : "level"} (${question.values.length})`,
    );
  }
  return question.values.map((wanted, i) => {
    const at = `${where}: probabilities[${i}]`;
    const entry = objectOrFail(listed[i], at);
    const value = own(entry, "value");
    if (question.type === "choice" ? value !== wanted : value !== i) {
      throw new EngineFailedError(`${at} is for ${shown(value)}, not ${shown(question.type === "choice" ? wanted : i)} (request order)`);
    }
    if (question.type === "score" && own(entry, "label") !== wanted) {
      throw new EngineFailedError(`${at} has label ${shown(own(entry, "label"))}, not ${shown(wanted)}`);
    }
    return probability(own(entry, "probability"), `${at}.probability`);
  });
}
