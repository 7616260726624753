import { argmax } from "../judgment/confidence.js";
import { QUESTION_TYPES, type QuestionType } from "./dataset.js";

/**
 * Quality metrics of probabilistic answers against gold distributions (definitions in
 * docs/evaluation/eval.md). Every answer is a distribution over its labels; a hard gold
 * label is a one-hot distribution, so hard and soft labels share one code path.
 */

export interface Prediction {
  type: QuestionType;
  /** Predicted probability of each label. */
  probabilities: number[];
  /** Gold probability of each label, same order. */
  gold: number[];
}

/** p is clamped here before log p: a confident wrong answer costs ~34.5 nats, not Infinity. */
export const PROBABILITY_FLOOR = 1e-15;
export const ECE_BINS = 15;

/** Ties go to the first label in option order, for predictions and soft gold alike. */
export const predictedIndex = (r: Prediction) => argmax(r.probabilities);
export const goldIndex = (r: Prediction) => argmax(r.gold);
/**
 * Right when the chosen label is one the gold gives the most weight: a soft label that ties
 * (0.5/0.5) accepts either, so accuracy never depends on the order the options are listed in.
 */
export const isCorrect = (r: Prediction) => r.gold[predictedIndex(r)] === r.gold[goldIndex(r)];
export const confidenceOf = (r: Prediction) => Math.max(...r.probabilities);

/**
 * How right the chosen label is: the gold probability of it. For a hard label that is 1 or 0;
 * for a soft label 0.7/0.3 a perfectly calibrated 0.7 answer is "70% right", so ECE and coverage
 * judge it fairly instead of counting it as fully right.
 */
export const correctnessOf = (r: Prediction) => r.gold[predictedIndex(r)];

/** Σₖ (pₖ − gₖ)² over all labels (noul counts both labels, so its range is 0–2). */
export function brier(r: Prediction): number {
  return r.probabilities.reduce((sum, p, k) => sum + (p - r.gold[k]) ** 2, 0);
}

/** Cross-entropy −Σₖ gₖ·log max(pₖ, 1e-15); for a hard label, −log p(gold). */
export function negativeLogLikelihood(r: Prediction): number {
  return r.gold.reduce((sum, g, k) => (g === 0 ? sum : sum - g * Math.log(Math.max(r.probabilities[k], PROBABILITY_FLOOR))), 0);
}

/** |E_p[level] − E_gold[level]|, for score answers. */
export function levelError(r: Prediction): number {
  const expected = (dist: number[]) => dist.reduce((sum, p, i) => sum + i * p, 0);
  return Math.abs(expected(r.probabilities) - expected(r.gold));
}

export interface ReliabilityBin {
  lower: number;
  upper: number;
  count: number;
  /** Null for an empty bin. */
  meanConfidence: number | null;
  meanCorrectness: number | null;
}

/** Equal-width bins on the top probability: bin k holds [k/n, (k+1)/n), the last also holds 1. */
export function reliabilityBins(records: readonly Prediction[], bins = ECE_BINS): ReliabilityBin[] {
  const sums = Array.from({ length: bins }, () => ({ count: 0, confidence: 0, correctness: 0 }));
  for (const r of records) {
    const confidence = confidenceOf(r);
    const bin = sums[Math.min(bins - 1, Math.floor(confidence * bins))];
    bin.count++;
    bin.confidence += confidence;
    bin.correctness += correctnessOf(r);
  }
  return sums.map((s, k) => ({
    lower: k / bins,
    upper: (k + 1) / bins,
    count: s.count,
    meanConfidence: s.count === 0 ? null : s.confidence / s.count,
    meanCorrectness: s.count === 0 ? null : s.correctness / s.count,
  }));
}

/** Σ_bins (nᵦ/N)·|correctness − confidence|; empty bins contribute nothing. */
export function expectedCalibrationError(records: readonly Prediction[], bins = ECE_BINS): number {
  if (records.length === 0) return NaN;
  return reliabilityBins(records, bins).reduce(
    (sum, b) => (b.count === 0 ? sum : sum + (b.count / records.length) * Math.abs(b.meanCorrectness! - b.meanConfidence!)),
    0,
  );
}

export interface Coverage {
  maxErrorRate: number;
  /** Share of all answers in the automated prefix. */
  coverage: number;
  answers: number;
  /** Error rate inside the prefix (null when it is empty). */
  errorRate: number | null;
  /** Lowest confidence automated: answer automatically when confidence ≥ this (null: none). */
  threshold: number | null;
}

/**
 * The largest share of answers one can automate, most confident first, while the error rate
 * among them stays ≤ maxErrorRate. Prefixes only end where the confidence changes: a threshold
 * cannot take half of a group of equally confident answers.
 */
export function coverageAtErrorRate(records: readonly Prediction[], maxErrorRate: number): Coverage {
  const sorted = records.map((r) => ({ c: confidenceOf(r), e: 1 - correctnessOf(r) })).sort((a, b) => b.c - a.c);
  let best: Coverage = { maxErrorRate, coverage: 0, answers: 0, errorRate: null, threshold: null };
  let errors = 0;
  for (let i = 0; i < sorted.length; i++) {
    errors += sorted[i].e;
    const endOfGroup = i + 1 === sorted.length || sorted[i + 1].c !== sorted[i].c;
    // The tolerance keeps 0.1 + 0.2-style rounding from rejecting an exact error budget.
    if (endOfGroup && errors <= maxErrorRate * (i + 1) + 1e-9) {
      best = { maxErrorRate, coverage: (i + 1) / sorted.length, answers: i + 1, errorRate: errors / (i + 1), threshold: sorted[i].c };
    }
  }
  return best;
}

export interface MetricSummary {
  answers: number;
  accuracy: number;
  brier: number;
  nll: number;
  ece: number;
  coverage: Coverage[];
  /** Score questions only: mean |expected level − gold expected level|. */
  meanLevelError?: number;
  bins: ReliabilityBin[];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function summarise(records: readonly Prediction[], errorRates: readonly number[]): MetricSummary | undefined {
  if (records.length === 0) return undefined;
  const summary: MetricSummary = {
    answers: records.length,
    accuracy: mean(records.map((r) => (isCorrect(r) ? 1 : 0))),
    brier: mean(records.map(brier)),
    nll: mean(records.map(negativeLogLikelihood)),
    ece: expectedCalibrationError(records),
    coverage: errorRates.map((x) => coverageAtErrorRate(records, x)),
    bins: reliabilityBins(records),
  };
  return summary;
}

export type SummaryByType = { overall?: MetricSummary } & Partial<Record<QuestionType, MetricSummary>>;

/** Overall, then one summary per question type present. */
export function summariseByType(records: readonly Prediction[], errorRates: readonly number[]): SummaryByType {
  const out: SummaryByType = { overall: summarise(records, errorRates) };
  for (const type of QUESTION_TYPES) {
    const ofType = records.filter((r) => r.type === type);
    const summary = summarise(ofType, errorRates);
    if (!summary) continue;
    if (type === "score") summary.meanLevelError = mean(ofType.map(levelError));
    out[type] = summary;
  }
  return out;
}
