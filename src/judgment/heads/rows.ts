import { deriveSeed, hashNumbers, seededRandom, shuffleInPlace } from "./random.js";
import type { LabelledRow, PreparedRow } from "./types.js";

/**
 * A log-probability of -Infinity (a label the readout rules out) is read as this finite value:
 * e^-50 ≈ 2e-22 is already zero next to any probability the readout reports, and a finite value
 * lets level 1 scale it without producing NaN (0 · -Infinity). Values below it are raised to it.
 */
export const LOG_PROB_FLOOR = -50;

/** Tolerance on a soft gold's sum. */
const GOLD_SUM_TOLERANCE = 1e-6;

/** The number of classes of a set of rows, checked to be the same for all; 0 for no rows. */
export function classCount(rows: readonly LabelledRow[]): number {
  if (rows.length === 0) return 0;
  const k = rows[0].logProbs.length;
  if (k < 2) throw new RangeError(`a question needs at least 2 classes, row 0 has ${k}`);
  rows.forEach((row, i) => {
    if (row.logProbs.length !== k) throw new RangeError(`row ${i} has ${row.logProbs.length} log-probabilities, row 0 has ${k}`);
  });
  return k;
}

export function clipLogProbs(logProbs: readonly number[]): Float64Array {
  const out = new Float64Array(logProbs.length);
  for (let k = 0; k < logProbs.length; k++) {
    const v = logProbs[k];
    if (Number.isNaN(v) || v === Number.POSITIVE_INFINITY) throw new RangeError(`log-probability ${v} is not a log-probability`);
    out[k] = Math.max(v, LOG_PROB_FLOOR);
  }
  return out;
}

function goldDistribution(gold: number | readonly number[], k: number, i: number): Float64Array {
  const out = new Float64Array(k);
  if (typeof gold === "number") {
    if (!Number.isInteger(gold) || gold < 0 || gold >= k) throw new RangeError(`row ${i}: gold ${gold} is not a class index in [0, ${k})`);
    out[gold] = 1;
    return out;
  }
  if (gold.length !== k) throw new RangeError(`row ${i}: soft gold has ${gold.length} values, the question has ${k} classes`);
  let sum = 0;
  for (let c = 0; c < k; c++) {
    if (!(gold[c] >= 0) || !Number.isFinite(gold[c])) throw new RangeError(`row ${i}: soft gold value ${gold[c]} is not a probability`);
    sum += gold[c];
  }
  if (Math.abs(sum - 1) > GOLD_SUM_TOLERANCE) throw new RangeError(`row ${i}: soft gold sums to ${sum}, not 1`);
  for (let c = 0; c < k; c++) out[c] = gold[c] / sum;
  return out;
}

export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/**
 * Validates the rows and puts them in a canonical order that does not depend on the order they
 * came in: by a hash of their content (log-probabilities, features, gold), then by the content
 * itself should two hashes collide. Everything after this sees the same rows in the same order,
 * so a head fitted on shuffled rows with the same seed is the same head, bit for bit.
 * `withFeatures` is false when any row lacks features (level 2 is then not fitted).
 */
export function prepareRows(rows: readonly LabelledRow[]): { rows: PreparedRow[]; classes: number; withFeatures: boolean } {
  const k = classCount(rows);
  const withFeatures = rows.length > 0 && rows.every((row) => row.features !== undefined && row.features.length > 0);
  const d = withFeatures ? rows[0].features!.length : 0;
  const keyed = rows.map((row, i) => {
    if (withFeatures && row.features!.length !== d) throw new RangeError(`row ${i} has ${row.features!.length} features, row 0 has ${d}`);
    const prepared: PreparedRow = { logProbs: clipLogProbs(row.logProbs), gold: goldDistribution(row.gold, k, i), label: 0 };
    prepared.label = argmax(prepared.gold);
    if (withFeatures) {
      prepared.features = Float64Array.from(row.features!);
      for (let j = 0; j < d; j++) if (!Number.isFinite(prepared.features[j])) throw new RangeError(`row ${i}: feature ${j} is ${prepared.features[j]}`);
    }
    const parts = [prepared.logProbs, prepared.gold, ...(prepared.features ? [prepared.features] : [])];
    return { prepared, parts, hash: hashNumbers(parts) };
  });
  keyed.sort((x, y) => (x.hash < y.hash ? -1 : x.hash > y.hash ? 1 : compareParts(x.parts, y.parts)));
  return { rows: keyed.map((entry) => entry.prepared), classes: k, withFeatures };
}

function compareParts(x: readonly Float64Array[], y: readonly Float64Array[]): number {
  for (let p = 0; p < Math.min(x.length, y.length); p++) {
    for (let i = 0; i < Math.min(x[p].length, y[p].length); i++) if (x[p][i] !== y[p][i]) return x[p][i] < y[p][i] ? -1 : 1;
    if (x[p].length !== y[p].length) return x[p].length - y[p].length;
  }
  return x.length - y.length;
}

/** The folds used for `n` rows when `asked` are wanted: never more than the rows, so each fold holds at least one. */
export function foldCount(n: number, asked: number): number {
  return Math.max(1, Math.min(Math.floor(asked), n));
}

/**
 * Stratified fold of each row (0 … folds−1), from the labels in canonical order. Each class's
 * rows are shuffled with the seed and dealt round the folds, the deal carrying on from one class
 * to the next so that fold sizes differ by at most one. A class with fewer rows than folds is
 * simply absent from some folds (its held-out rows are then scored by heads that never saw it,
 * which is what the report should say about it).
 */
export function assignFolds(labels: readonly number[], folds: number, seed: number): number[] {
  const out = new Array<number>(labels.length).fill(0);
  if (folds <= 1) return out;
  const byClass = new Map<number, number[]>();
  labels.forEach((label, i) => {
    const members = byClass.get(label);
    if (members) members.push(i);
    else byClass.set(label, [i]);
  });
  const random = seededRandom(deriveSeed(seed, 1));
  let next = Math.floor(random() * folds);
  for (const label of [...byClass.keys()].sort((a, b) => a - b)) {
    for (const i of shuffleInPlace(byClass.get(label)!, random)) {
      out[i] = next;
      next = (next + 1) % folds;
    }
  }
  return out;
}
