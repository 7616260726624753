import { quote } from "../../remote/http.js";
import { EngineFailedError } from "../../types.js";
import type { ExpectedAnswer } from "./upstream-request.js";

/**
 * Every upstream answer is checked before anything of it is used: an upstream answering over
 * other labels, in another order or with broken numbers must give a 502 (uncharged), never a
 * plausible-looking wrong answer. What survives is label log-probabilities only: choice, score,
 * legend and confidence are recomputed by our own code, so engines that define them otherwise
 * (and any extra field) cannot leak through.
 */

/**
 * |Σp − 1| allowed, then renormalised. A float32 softmax over 255 labels drifts by about
 * 255 × 6e-8 ≈ 2e-5 and printing 6 decimals adds up to 255 × 5e-7 ≈ 1e-4; an upstream reading
 * other labels (a missing option's mass) or mixing answers up is off by far more.
 */
export const SUM_TOLERANCE = 1e-3;
/** `choice` may sit this far below the top probability (ties, float noise; rounding is monotone). */
export const ARGMAX_TOLERANCE = 1e-6;
/** |score − Σ i·pᵢ| allowed, in levels: above any printing round-off, below any real mistake (levels from 1 is off by 1). */
export const SCORE_TOLERANCE = 1e-2;
/** Probabilities must not fall as logits rise (a temperature keeps the order), to within float noise. */
export const ORDER_TOLERANCE = 1e-6;

export interface UpstreamAnswers {
  /** Per question, in prompt order: log P of each label, in our label order. */
  labelLogProbs: number[][];
  inputTokens: number;
  /** The upstream's own `timing_ms`, when it gave a usable one. */
  timingMs?: number;
}

export function readUpstreamAnswers(body: unknown, expected: readonly ExpectedAnswer[]): UpstreamAnswers {
  const top = objectOrFail(body, "the upstream's answer");
  const answers = objectOrFail(own(top, "answers"), "the upstream's answers");
  const ids = expected.map((e) => e.id);
  expectExactKeys(answers, ids, "the upstream's answers");
  const labelLogProbs = expected.map((question) => readAnswer(own(answers, question.id), question));
  const usage = objectOrFail(own(top, "usage"), "the upstream's usage");
  const inputTokens = own(usage, "input_tokens");
  if (typeof inputTokens !== "number" || !Number.isSafeInteger(inputTokens) || inputTokens < 0) {
    throw new EngineFailedError(`the upstream's usage.input_tokens is ${shown(inputTokens)}, not a non-negative integer`);
  }
  const timing = own(top, "timing_ms");
  const timingMs = typeof timing === "number" && Number.isFinite(timing) && timing >= 0 ? timing : undefined;
  return { labelLogProbs, inputTokens, timingMs };
}

/** log P per label of one answer, checked against the question it answers. */
export function readAnswer(value: unknown, question: ExpectedAnswer): number[] {
  const where = `the upstream's answer to ${question.id}`;
  const answer = objectOrFail(value, where);
  if (own(answer, "type") !== question.type) {
    throw new EngineFailedError(`${where} has type ${shown(own(answer, "type"))}, not ${question.type}`);
  }
  const probabilities = question.type === "noul" ? noulProbabilities(answer, where) : keyedProbabilities(answer, question, where);
  const logits = own(answer, "logits");
  if (logits === undefined) return probabilities.map(Math.log);
  return checkedLogits(logits, probabilities, question.keys, where);
}

function noulProbabilities(answer: Record<string, unknown>, where: string): number[] {
  const p = probability(own(answer, "noul"), `${where}: noul`);
  return [p, 1 - p];
}

/** choice and score: keys exactly ours, numbers in [0, 1] summing to 1, and choice/score consistent with them. */
function keyedProbabilities(answer: Record<string, unknown>, question: ExpectedAnswer, where: string): number[] {
  const given = objectOrFail(own(answer, "probabilities"), `${where}: probabilities`);
  expectExactKeys(given, question.keys, `${where}: probabilities`);
  const p = question.keys.map((key) => probability(own(given, key), `${where}: probabilities[${JSON.stringify(key)}]`));
  const sum = p.reduce((a, b) => a + b, 0);
  if (!(Math.abs(sum - 1) <= SUM_TOLERANCE)) throw new EngineFailedError(`${where}: probabilities sum to ${sum}, not 1`);
  const top = Math.max(...p);
  if (question.type === "choice") {
    const choice = own(answer, "choice");
    const index = typeof choice === "string" ? question.keys.indexOf(choice) : -1;
    if (index < 0) throw new EngineFailedError(`${where}: choice ${shown(choice)} is not one of the options`);
    if (p[index] < top - ARGMAX_TOLERANCE) {
      throw new EngineFailedError(`${where}: choice ${shown(choice)} has probability ${p[index]}, below the top ${top}`);
    }
  } else {
    const score = own(answer, "score");
    const expectation = p.reduce((total, pi, i) => total + i * pi, 0);
    if (typeof score !== "number" || !(Math.abs(score - expectation) <= SCORE_TOLERANCE)) {
      throw new EngineFailedError(`${where}: score ${shown(score)} is not the expectation ${expectation} of its probabilities`);
    }
  }
  return p.map((pi) => pi / sum);
}

/**
 * The upstream's uncalibrated log-probabilities (include_logits), preferred over log(p): its
 * probabilities may carry its own calibration, and ours applies on top of the raw readout.
 * JSON has no −∞, so null stands for a label the model ruled out, only where p is 0.
 */
function checkedLogits(value: unknown, probabilities: number[], keys: string[], where: string): number[] {
  const given = objectOrFail(value, `${where}: logits`);
  expectExactKeys(given, keys, `${where}: logits`);
  const logits = keys.map((key, i) => {
    const logit = own(given, key);
    if (logit === null && probabilities[i] === 0) return -Infinity;
    if (typeof logit !== "number" || !Number.isFinite(logit)) {
      throw new EngineFailedError(`${where}: logits[${JSON.stringify(key)}] is ${shown(logit)}, not a finite number`);
    }
    return logit;
  });
  const order = logits.map((_, i) => i).sort((a, b) => logits[a] - logits[b] || 0);
  for (let k = 1; k < order.length; k++) {
    const [lower, higher] = [order[k - 1], order[k]];
    if (probabilities[lower] > probabilities[higher] + ORDER_TOLERANCE && logits[lower] < logits[higher]) {
      throw new EngineFailedError(
        `${where}: logits disagree with probabilities (${JSON.stringify(keys[lower])} has the lower logit but the higher probability)`,
      );
    }
  }
  if (logits.every((l) => l === -Infinity)) throw new EngineFailedError(`${where}: every label's logit is −∞`);
  return logits;
}

export function probability(value: unknown, where: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new EngineFailedError(`${where} is ${shown(value)}, not a probability`);
  }
  return value;
}

export function objectOrFail(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new EngineFailedError(`${what} is ${shown(value, 120)}, not an object`);
  }
  return value as Record<string, unknown>;
}

/** The same keys, no more, no fewer (a key named "__proto__" is an own key like any other). */
function expectExactKeys(object: Record<string, unknown>, keys: readonly string[], what: string): void {
  const given = Object.keys(object);
  const wanted = new Set(keys);
  const extra = given.filter((key) => !wanted.has(key));
  const present = new Set(given);
  const missing = keys.filter((key) => !present.has(key));
  if (extra.length > 0 || missing.length > 0) {
    const parts = [missing.length > 0 ? `missing ${quote(missing, 120)}` : "", extra.length > 0 ? `unexpected ${quote(extra, 120)}` : ""].filter(Boolean);
    throw new EngineFailedError(`${what} do not match the request: ${parts.join(", ")}`);
  }
}

/** What a value was, for a message: as JSON (a string quoted), "missing" when absent. */
export function shown(value: unknown, max?: number): string {
  return value === undefined ? "missing" : quote(typeof value === "string" ? JSON.stringify(value) : value, max);
}

/** An own property only, so "__proto__" reads the key and never the prototype. */
export function own(object: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}
