import { argmax } from "./rows.js";
import type { Metrics, ReliabilityBin } from "./types.js";

/**
 * Scores of predicted distributions against gold distributions (a hard gold is one-hot).
 * - accuracy: the gold probability of the predicted (top) class, averaged; for a hard gold
 *   that is the usual 0/1 accuracy, for a soft one its expectation.
 * - macroF1: F1 per class, predicted top class against the gold's argmax, averaged over the
 *   classes present in the gold (a class never asked about cannot be scored).
 * - nll: cross-entropy −Σ g·log p, with p floored at NLL_FLOOR so that a readout that rules out
 *   the gold answer scores a large finite loss (−log 1e-12 ≈ 27.6) and the report stays JSON.
 * - ece: RELIABILITY_BINS equal-width bins of the top probability, Σ (count/n)·|accuracy − confidence|.
 * - brier: Σ_k (p_k − g_k)², averaged (0 … 2).
 * All are 0 for no rows (n says so).
 */
export const NLL_FLOOR = 1e-12;
export const RELIABILITY_BINS = 10;

export function metricsOf(predictions: readonly ArrayLike<number>[], golds: readonly ArrayLike<number>[]): Metrics {
  const n = predictions.length;
  if (n === 0) return { n: 0, accuracy: 0, macroF1: 0, nll: 0, ece: 0, brier: 0 };
  const k = golds[0].length;
  let accuracy = 0;
  let nll = 0;
  let brier = 0;
  const truePositive = new Array<number>(k).fill(0);
  const predicted = new Array<number>(k).fill(0);
  const actual = new Array<number>(k).fill(0);
  for (let i = 0; i < n; i++) {
    const p = predictions[i];
    const g = golds[i];
    const top = argmax(p);
    const label = argmax(g);
    accuracy += g[top];
    predicted[top]++;
    actual[label]++;
    if (top === label) truePositive[top]++;
    for (let c = 0; c < k; c++) {
      if (g[c] > 0) nll -= g[c] * Math.log(Math.max(p[c], NLL_FLOOR));
      brier += (p[c] - g[c]) ** 2;
    }
  }
  let f1 = 0;
  let present = 0;
  for (let c = 0; c < k; c++) {
    if (actual[c] === 0) continue;
    present++;
    f1 += (2 * truePositive[c]) / (predicted[c] + actual[c]);
  }
  const bins = reliabilityOf(predictions, golds);
  const ece = bins.reduce((sum, bin) => sum + (bin.count / n) * Math.abs(bin.accuracy - bin.confidence), 0);
  return { n, accuracy: accuracy / n, macroF1: f1 / present, nll: nll / n, ece, brier: brier / n };
}

/** The reliability diagram: per equal-width bin of the top probability, its mean and the mean gold probability of that class. */
export function reliabilityOf(predictions: readonly ArrayLike<number>[], golds: readonly ArrayLike<number>[]): ReliabilityBin[] {
  const bins: ReliabilityBin[] = Array.from({ length: RELIABILITY_BINS }, (_, b) => ({
    lower: b / RELIABILITY_BINS,
    upper: (b + 1) / RELIABILITY_BINS,
    count: 0,
    confidence: 0,
    accuracy: 0,
  }));
  predictions.forEach((p, i) => {
    const top = argmax(p);
    const bin = bins[Math.min(RELIABILITY_BINS - 1, Math.floor(p[top] * RELIABILITY_BINS))];
    bin.count++;
    bin.confidence += p[top];
    bin.accuracy += golds[i][top];
  });
  for (const bin of bins) {
    if (bin.count === 0) continue;
    bin.confidence /= bin.count;
    bin.accuracy /= bin.count;
  }
  return bins;
}

/** Mean cross-entropy alone, for the inner cross-validation. */
export function meanNll(predictions: readonly ArrayLike<number>[], golds: readonly ArrayLike<number>[]): number {
  let nll = 0;
  for (let i = 0; i < predictions.length; i++) {
    for (let c = 0; c < golds[i].length; c++) if (golds[i][c] > 0) nll -= golds[i][c] * Math.log(Math.max(predictions[i][c], NLL_FLOOR));
  }
  return predictions.length === 0 ? 0 : nll / predictions.length;
}
