import type { Answer, Question } from "./schema.js";
import { argmax, choiceConfidence, scoreConfidence } from "./confidence.js";
import { keyed } from "./keyed.js";

/** A temperature for the questions of one type whose number of labels lies in [min, max]. */
export interface TemperatureBucket {
  min: number;
  max: number;
  temperature: number;
}

/**
 * Temperature per question type, applied to the label log-probabilities before normalising.
 * `buckets` refine it by the number of labels (choice options, score levels): a model is often
 * more overconfident with 2 options than with 20, so one temperature per type can be a poor fit.
 */
export interface Temperatures {
  choice: number;
  noul: number;
  score: number;
  buckets?: { choice?: TemperatureBucket[]; score?: TemperatureBucket[] };
}

export const NEUTRAL_TEMPERATURES: Temperatures = { choice: 1, noul: 1, score: 1 };

/** The bucket's temperature when a bucket holds `labelCount`, otherwise the type's. */
export function temperatureFor(temperatures: Temperatures, type: Question["type"], labelCount: number): number {
  const buckets = type === "noul" ? undefined : temperatures.buckets?.[type];
  const bucket = buckets?.find((b) => labelCount >= b.min && labelCount <= b.max);
  return bucket ? bucket.temperature : temperatures[type];
}

/**
 * softmax(logP / T) over the labels: with T = 1 this is the model's own probability of each
 * label renormalised over the labels; T > 1 softens, T < 1 sharpens.
 */
export function normalise(labelLogProbs: number[], temperature: number): number[] {
  const scaled = labelLogProbs.map((lp) => lp / temperature);
  const max = Math.max(...scaled);
  if (max === -Infinity) return scaled.map(() => 1 / scaled.length);
  const weights = scaled.map((s) => Math.exp(s - max));
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

/**
 * The uncalibrated log-probabilities over the labels (temperature 1), keyed like the answer's
 * probabilities, for calibration tools (`include_logits`). The engine's scores carry an
 * arbitrary constant per question; renormalising removes it so the values mean log P.
 * noul's labels are read in the order true, false.
 */
export function keyedLogits(question: Question, labelLogProbs: number[]): Record<string, number | null> {
  // −∞ would serialise as null anyway; saying so keeps the type honest.
  const logP = logSoftmax(labelLogProbs).map((value) => (value === -Infinity ? null : value));
  switch (question.type) {
    case "choice":
      return keyed(Object.keys(question.criteria), logP);
    case "noul":
      return keyed(["true", "false"], logP);
    case "score":
      return keyed(
        logP.map((_, i) => String(i)),
        logP,
      );
  }
}

/**
 * log(normalise(scores, 1)), computed in the log domain so a label far below the others stays
 * finite rather than log(0). A label at −∞ among possible ones stays −∞. A row with every label
 * at −∞ (the model ruled them all out, as when none is among a remote model's top
 * log-probabilities) has no mass to renormalise; it is read as uniform, as `normalise` reads it,
 * because softmax is uniform over equal scores however low they are. Its callers need a number
 * there, not NaN: `keyedLogits` reports the log of the probabilities the answer carries (uniform),
 * and the shift average (debias.ts) sums rows, where one NaN would spoil every option.
 */
export function logSoftmax(scores: readonly number[]): number[] {
  const max = Math.max(...scores);
  if (max === -Infinity) return scores.map(() => -Math.log(scores.length));
  const logTotal = Math.log(scores.reduce((sum, s) => sum + Math.exp(s - max), 0));
  return scores.map((s) => s - max - logTotal);
}

/** Builds an answer in the wire shape from the label log-probabilities the engine read. */
export function buildAnswer(question: Question, labelLogProbs: number[], temperatures: Temperatures): Answer {
  const p = normalise(labelLogProbs, temperatureFor(temperatures, question.type, labelLogProbs.length));
  switch (question.type) {
    case "choice": {
      const keys = Object.keys(question.criteria);
      return {
        type: "choice",
        choice: keys[argmax(p)],
        probabilities: keyed(keys, p),
        confidence: choiceConfidence(p),
      };
    }
    case "noul":
      return { type: "noul", noul: p[0] };
    case "score": {
      const levels = p.map((_, i) => String(i));
      return {
        type: "score",
        score: p.reduce((sum, pi, i) => sum + i * pi, 0),
        probabilities: keyed(levels, p),
        // Echoed as sent (an object stays that object), except that a value is never null: the
        // official Python SDK rejects a response holding one, so a null level is "" (jev-compat.md).
        legend: keyed(
          levels,
          question.criteria.map((level) => level ?? ""),
        ),
        confidence: scoreConfidence(p),
      };
    }
  }
}
