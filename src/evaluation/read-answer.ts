import type { LabelledQuestion } from "./dataset.js";

/**
 * Reads a server's answer into the evaluation's one shape: numbers over the question's labels,
 * in the dataset's label order. Any server may be on the other end, so every field is checked
 * and a malformed answer is an error naming the question, never a silent NaN in the metrics.
 */

export class AnswerFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AnswerFormatError";
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The answer's probability of each label. noul becomes [P(true), P(false)]. */
export function answerProbabilities(question: LabelledQuestion, answer: unknown): number[] {
  const a = checkedAnswer(question, answer);
  if (question.type === "noul") {
    const p = a.noul;
    if (typeof p !== "number" || !(p >= -1e-9 && p <= 1 + 1e-9)) throw bad(question, `noul must be a number in [0, 1], got ${JSON.stringify(p)}`);
    return [p, 1 - p];
  }
  // A hair of rounding outside [0, 1] from another server's arithmetic is not worth refusing.
  return keyedNumbers(question, a.probabilities, "probabilities", (v) => v >= -1e-9 && v <= 1 + 1e-9);
}

/** Log-probabilities below this are treated as this, so log(0) stays finite when falling back. */
export const LOG_PROBABILITY_FLOOR = 1e-12;

/**
 * The label log-probabilities calibration fits on: the answer's `logits` when the server sent
 * them (uncalibrated), else log of its probabilities clamped at the floor (which already carry
 * whatever calibration the server applies).
 */
export function answerLogits(question: LabelledQuestion, answer: unknown): { logits: number[]; fromLogits: boolean } {
  const a = checkedAnswer(question, answer);
  if (a.logits !== undefined && a.logits !== null) {
    // Any finite scale works: softmax(z / T) ignores a constant added to every label.
    const logits = keyedNumbers(question, a.logits, "logits", (v) => v < Infinity);
    return { logits, fromLogits: true };
  }
  const p = answerProbabilities(question, answer);
  return { logits: p.map((x) => Math.log(Math.max(x, LOG_PROBABILITY_FLOOR))), fromLogits: false };
}

function checkedAnswer(question: LabelledQuestion, answer: unknown): Record<string, unknown> {
  if (!isObject(answer)) throw bad(question, "the server sent no answer");
  if (answer.type !== question.type) throw bad(question, `answer type ${JSON.stringify(answer.type)}, expected "${question.type}"`);
  return answer;
}

function keyedNumbers(question: LabelledQuestion, value: unknown, field: string, valid: (v: number) => boolean): number[] {
  if (!isObject(value)) throw bad(question, `${field} must be an object keyed by label`);
  return question.labels.map((label) => {
    const v = Object.hasOwn(value, label) ? value[label] : undefined;
    // JSON has no -Infinity; a server may send null for a label it gives probability 0.
    if (v === null && field === "logits") return -Infinity;
    if (typeof v !== "number" || Number.isNaN(v) || !valid(v)) {
      throw bad(question, `${field}[${JSON.stringify(label)}] is ${JSON.stringify(v) ?? "missing"}`);
    }
    return v;
  });
}

function bad(question: LabelledQuestion, message: string): AnswerFormatError {
  return new AnswerFormatError(`question ${JSON.stringify(question.id)}: ${message}`);
}
