import { buildAnswer, keyedLogits, logSoftmax, normalise, type Temperatures } from "./answers.js";
import { argmax } from "./confidence.js";
import { keyed } from "./keyed.js";
import type { Answer, ChoiceQuestion, Question } from "./schema.js";

/**
 * Option-order debiasing (`x_debias`, JUDGE_DEBIAS). Label readouts prefer some positions, so
 * the order a client lists its options in moves the answer. Two remedies, for `choice` only:
 *
 * - `canonical`: the options are shown in one order, their keys sorted by code point, whatever
 *   order the client sent: the answer is exactly invariant to the client's order.
 * - `shift`: the options are shown in several cyclic rotations and the label log-probabilities
 *   are averaged per option, until the average settles (SHIFT_TOLERANCE) or MAX_SHIFTS rotations
 *   were read. The rotations are counted from the one that lists the smallest key first, so every
 *   cyclic shift of the client's order yields the very same presentations and the same answer.
 *
 * `score` levels are ordinal: their labels are the level numbers, and the order is the meaning,
 * so no mode reorders them. `noul` has a fixed Yes/No. Both are presented once, as sent.
 *
 * All arithmetic over options runs in the canonical order, and only the finished answer is keyed
 * in the client's order: sums of floats depend on their order, and ties are broken by position,
 * so this is what makes equal presentations give bit-identical probabilities and choices.
 */

export const DEBIAS_MODES = ["none", "canonical", "shift"] as const;
export type DebiasMode = (typeof DEBIAS_MODES)[number];

/**
 * At most this many rotations per question. With K > 8 options the 8 are spread evenly around
 * the cycle, so every option is seen in the first, middle and last part of the list.
 */
export const MAX_SHIFTS = 8;

/**
 * The average is settled once one more rotation moved no option's probability by more than this
 * (and kept the same most likely option): further rotations would change the answer by about as
 * little, so they are not read (nor billed).
 */
export const SHIFT_TOLERANCE = 0.01;

/** Code-point order (as UTF-8 bytes or Python sort): UTF-16 `<` would put U+FF01 after an emoji. */
export function compareCodePoints(a: string, b: string): number {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

export function canonicalOrder(keys: readonly string[]): string[] {
  return [...keys].sort(compareCodePoints);
}

/**
 * The rotation offsets read for K options, in reading order: the van der Corput sequence
 * (0, 1/2, 1/4, 3/4, 1/8, …) scaled to K, rounded down, repeats dropped. Each prefix is spread
 * around the cycle, so an average stopped early has still seen every region of the list at
 * every position; at most MAX_SHIFTS of them.
 */
export function shiftOffsets(count: number): number[] {
  const wanted = Math.min(count, MAX_SHIFTS);
  const offsets: number[] = [];
  const seen = new Set<number>();
  for (let i = 0; offsets.length < wanted; i++) {
    const offset = Math.floor(vanDerCorput(i) * count);
    if (!seen.has(offset)) {
      seen.add(offset);
      offsets.push(offset);
    }
  }
  return offsets;
}

/** The i-th term of the base-2 van der Corput sequence: i's binary digits mirrored after the point. */
function vanDerCorput(i: number): number {
  let value = 0;
  let scale = 0.5;
  for (let n = i; n > 0; n >>= 1, scale /= 2) if (n & 1) value += scale;
  return value;
}

/** The orders in which a choice question's options (keys in the client's order) are shown. */
export function presentationOrders(keys: readonly string[], mode: DebiasMode): string[][] {
  switch (mode) {
    case "none":
      return [[...keys]];
    case "canonical":
      return [canonicalOrder(keys)];
    case "shift": {
      const smallest = keys.indexOf(canonicalOrder(keys)[0]);
      return shiftOffsets(keys.length).map((offset) => keys.map((_, i) => keys[(smallest + offset + i) % keys.length]));
    }
  }
}

/** The question as shown to the model each time: choice in each order of the mode, others once. */
export function presentations(question: Question, mode: DebiasMode): Question[] {
  if (question.type !== "choice") return [question];
  return presentationOrders(Object.keys(question.criteria), mode).map((order) => withOptionOrder(question, order));
}

export function withOptionOrder(question: ChoiceQuestion, keys: readonly string[]): ChoiceQuestion {
  return {
    ...question,
    criteria: keyed(
      [...keys],
      keys.map((key) => question.criteria[key]),
    ),
  };
}

/**
 * The running mean, per option, of the presentations' renormalised label log-probabilities,
 * kept in the canonical order of the options.
 */
export class PresentationAverage {
  readonly canonical: string[];
  private readonly index: Map<string, number>;
  private readonly sums: number[];
  private previous?: number[];
  private current?: number[];
  count = 0;

  constructor(keys: readonly string[]) {
    this.canonical = canonicalOrder(keys);
    this.index = new Map(this.canonical.map((key, i) => [key, i]));
    this.sums = this.canonical.map(() => 0);
  }

  /** One presentation: its options in the order shown, and the log P the model gave each label. */
  add(shownKeys: readonly string[], labelLogProbs: readonly number[]): void {
    const renormalised = logSoftmax(labelLogProbs);
    shownKeys.forEach((key, i) => {
      this.sums[this.index.get(key)!] += renormalised[i];
    });
    this.count++;
    this.previous = this.current;
    this.current = normalise(this.mean(), 1);
  }

  /** Mean log-probability per option, canonical order. */
  mean(): number[] {
    return this.sums.map((sum) => sum / this.count);
  }

  /** After two or more: the last presentation moved no probability by more than SHIFT_TOLERANCE, nor the argmax. */
  settled(): boolean {
    const { previous, current } = this;
    if (this.count < 2 || !previous || !current) return false;
    const moved = Math.max(...current.map((p, i) => Math.abs(p - previous[i])));
    return moved <= SHIFT_TOLERANCE && argmax(current) === argmax(previous);
  }
}

/**
 * The answer to the client's `question` from log-probabilities over the options of `shown` (the
 * question as presented, or its canonical form), computed in that order and keyed in the
 * client's: `probabilities` and `logits` list the options as the client sent them.
 */
export function answerInClientOrder(question: Question, shown: Question, labelLogProbs: number[], temperatures: Temperatures, includeLogits: boolean): Answer {
  const answer = buildAnswer(shown, labelLogProbs, temperatures);
  const logits = includeLogits ? keyedLogits(shown, labelLogProbs) : undefined;
  if (question.type !== "choice" || answer.type !== "choice") return logits ? { ...answer, logits } : answer;
  const keys = Object.keys(question.criteria);
  const reorder = <T>(values: Record<string, T>) =>
    keyed(
      keys,
      keys.map((key) => values[key]),
    );
  const probabilities = reorder(answer.probabilities);
  return logits ? { ...answer, probabilities, logits: reorder(logits) } : { ...answer, probabilities };
}
