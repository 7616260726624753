import { Mulberry32 } from "../gguf/prng.js";
import type { QuestionType } from "./dataset.js";
import { brier, expectedCalibrationError, goldIndex, isCorrect, negativeLogLikelihood, predictedIndex, type Prediction } from "./metrics.js";
import { fitTemperature, meanNll, type LogitRecord } from "./temperature.js";
import { normalise } from "../judgment/answers.js";

/**
 * The quality figures docs/measurements/2026-11-28-quality-real-models.md quotes, beyond what each answer's metrics give:
 * macro-F1, the prior baseline (a judge that always answers the label frequencies), ECE on
 * 10 equal-width bins of the top probability, and k-fold temperature scaling in which every
 * answer is scored by temperatures fitted without its item.
 */

/** An answer with the question it answers: classes and priors are per question and label set. */
export interface QuestionPrediction extends Prediction {
  item: string;
  question: string;
  labels: string[];
}

/** Top-label ECE with 10 equal-width bins (the common choice in the calibration literature). */
export const QUALITY_ECE_BINS = 10;

export interface QualityFigures {
  answers: number;
  accuracy: number;
  macroF1: number;
  ece: number;
  brier: number;
  nll: number;
}

/** The question's identity for classes and priors: its id and its labels in order. */
const setKey = (r: QuestionPrediction) => `${r.question}\u0000${r.labels.join("\u0000")}`;

/**
 * Unweighted mean of the F1 of every class (a question's label), over the classes that occur in
 * the gold labels or the answers; a class never predicted and never gold is not counted. The gold
 * class of a soft label is its most likely label.
 */
export function macroF1(records: readonly QuestionPrediction[]): number {
  const counts = new Map<string, { tp: number; fp: number; fn: number }>();
  const at = (key: string) => counts.get(key) ?? counts.set(key, { tp: 0, fp: 0, fn: 0 }).get(key)!;
  for (const r of records) {
    const gold = `${setKey(r)}\u0001${goldIndex(r)}`;
    const predicted = `${setKey(r)}\u0001${predictedIndex(r)}`;
    if (gold === predicted) at(gold).tp++;
    else {
      at(gold).fn++;
      at(predicted).fp++;
    }
  }
  if (counts.size === 0) return NaN;
  let total = 0;
  for (const { tp, fp, fn } of counts.values()) total += tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
  return total / counts.size;
}

export function qualityOf(records: readonly QuestionPrediction[]): QualityFigures {
  const mean = (f: (r: QuestionPrediction) => number) => records.reduce((sum, r) => sum + f(r), 0) / records.length;
  return {
    answers: records.length,
    accuracy: mean((r) => (isCorrect(r) ? 1 : 0)),
    macroF1: macroF1(records),
    ece: expectedCalibrationError(records, QUALITY_ECE_BINS),
    brier: mean(brier),
    nll: mean(negativeLogLikelihood),
  };
}

/**
 * The prior baseline: every answer replaced by the mean gold distribution of its question (id
 * and label set) over the records given. It knows the label frequencies of the very data it is
 * scored on, which favours it slightly; a judge that does not beat it has learnt nothing from
 * the states.
 */
export function priorBaseline(records: readonly QuestionPrediction[]): QuestionPrediction[] {
  const sums = new Map<string, { total: number[]; count: number }>();
  for (const r of records) {
    const entry = sums.get(setKey(r)) ?? sums.set(setKey(r), { total: r.gold.map(() => 0), count: 0 }).get(setKey(r))!;
    r.gold.forEach((g, k) => (entry.total[k] += g));
    entry.count++;
  }
  return records.map((r) => {
    const { total, count } = sums.get(setKey(r))!;
    return { ...r, probabilities: total.map((t) => t / count) };
  });
}

/** Item indices 0…n−1 dealt into k folds after a seeded shuffle (fold sizes differ by ≤ 1). */
export function foldsOf(itemCount: number, k: number, seed: number): number[] {
  const order = Array.from({ length: itemCount }, (_, i) => i);
  const rng = new Mulberry32(seed);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const fold = new Array<number>(itemCount);
  order.forEach((item, position) => (fold[item] = position % k));
  return fold;
}

export interface KFoldResult {
  /** Every record, scored with temperatures fitted on the other folds only. */
  heldOut: QuestionPrediction[];
  /** Per fold and type, the temperature used (1 where the guard kept it). */
  temperatures: Partial<Record<QuestionType, number>>[];
}

/**
 * k-fold temperature scaling per question type: folds are dealt by item, so questions about one
 * state never sit on both sides. `logitsOf` gives a record's label log-probabilities (log of the
 * probabilities is exact: softmax(log p / T) = softmax(logits / T)).
 */
export function kFoldTemperatureScaling(
  records: readonly QuestionPrediction[],
  logitsOf: (r: QuestionPrediction) => number[],
  k: number,
  seed: number,
): KFoldResult {
  const items = [...new Set(records.map((r) => r.item))];
  const foldOfItem = new Map(foldsOf(items.length, k, seed).map((fold, i) => [items[i], fold]));
  const heldOut: QuestionPrediction[] = [];
  const temperatures: KFoldResult["temperatures"] = [];
  for (let fold = 0; fold < k; fold++) {
    const used: Partial<Record<QuestionType, number>> = {};
    for (const type of ["choice", "noul", "score"] as const) {
      const ofType = records.filter((r) => r.type === type);
      const fit = ofType.filter((r) => foldOfItem.get(r.item) !== fold).map((r): LogitRecord => ({ type, logits: logitsOf(r), gold: r.gold }));
      const test = ofType.filter((r) => foldOfItem.get(r.item) === fold);
      if (test.length === 0) continue;
      const temperature = fit.length === 0 ? 1 : fitTemperature(fit).temperature;
      used[type] = temperature;
      for (const r of test) heldOut.push({ ...r, probabilities: normalise(logitsOf(r), temperature) });
    }
    temperatures.push(used);
  }
  return { heldOut, temperatures };
}

/**
 * The temperature `judge calibrate` may write: the fitted one only when it lowers the NLL of
 * answers it was not fitted on; otherwise 1 (the model's own distribution), with the reason.
 */
export function guardedTemperature(
  fitted: number,
  heldOut: readonly LogitRecord[],
): { temperature: number; kept: boolean; nllAtOne: number; nllAtFitted: number } {
  const nllAtOne = meanNll(heldOut, 1);
  const nllAtFitted = meanNll(heldOut, fitted);
  return nllAtFitted > nllAtOne ? { temperature: 1, kept: true, nllAtOne, nllAtFitted } : { temperature: fitted, kept: false, nllAtOne, nllAtFitted };
}

export interface QualityRow {
  /** The answers as the server gave them. */
  model: QualityFigures;
  /** Always answering the label frequencies of each question. */
  prior: QualityFigures;
  /** Temperature-scaled per type with temperatures fitted on the other folds (k-fold, by item). */
  kFold: QualityFigures;
}

export type QualityByType = Partial<Record<"overall" | QuestionType, QualityRow>>;

export interface QualityReport {
  folds: number;
  seed: number;
  byType: QualityByType;
  /** Per fold, the temperature each type was scored with. */
  temperatures: Partial<Record<QuestionType, number>>[];
}

/** Log-probabilities stand in for logits (exact up to a constant per answer). */
const logitsFromProbabilities = (r: QuestionPrediction) => r.probabilities.map((p) => Math.log(Math.max(p, Number.MIN_VALUE)));

export function qualityReport(records: readonly QuestionPrediction[], folds: number, seed: number): QualityReport {
  const prior = priorBaseline(records);
  const k = Math.min(folds, new Set(records.map((r) => r.item)).size);
  const kFold = k >= 2 ? kFoldTemperatureScaling(records, logitsFromProbabilities, k, seed) : undefined;
  const byType: QualityByType = {};
  for (const type of ["overall", "choice", "noul", "score"] as const) {
    const keep = (r: QuestionPrediction) => type === "overall" || r.type === type;
    const ofType = records.filter(keep);
    if (ofType.length === 0) continue;
    byType[type] = {
      model: qualityOf(ofType),
      prior: qualityOf(prior.filter(keep)),
      kFold: qualityOf(kFold ? kFold.heldOut.filter(keep) : ofType),
    };
  }
  return { folds: k, seed, byType, temperatures: kFold?.temperatures ?? [] };
}

/**
 * Area under the ROC curve of `score` for telling `positive` cases from the others: the chance a
 * random positive scores higher than a random negative, ties counting half (Mann–Whitney U).
 * NaN when either class is empty.
 */
export function auroc(cases: readonly { score: number; positive: boolean }[]): number {
  const sorted = [...cases].sort((a, b) => a.score - b.score);
  let positives = 0;
  let rankSum = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && sorted[j].score === sorted[i].score) j++;
    const midRank = (i + 1 + j) / 2; // ranks i+1 … j share their mean
    for (let k = i; k < j; k++) if (sorted[k].positive) positives++, (rankSum += midRank);
    i = j;
  }
  const negatives = sorted.length - positives;
  if (positives === 0 || negatives === 0) return NaN;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}
