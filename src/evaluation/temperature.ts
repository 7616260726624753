import { normalise, temperatureFor, type TemperatureBucket, type Temperatures } from "../judgment/answers.js";
import type { QuestionType } from "./dataset.js";
import { negativeLogLikelihood, type Prediction } from "./metrics.js";

/**
 * Temperature scaling: one number T per question type (and per label-count bucket) such that
 * softmax(logits / T) minimises the negative log-likelihood of the gold labels. The server
 * applies the same formula (`normalise`), so a fitted T means the same thing there.
 */

export interface LogitRecord {
  type: QuestionType;
  /** Uncalibrated label log-probabilities (any constant offset is irrelevant). */
  logits: number[];
  gold: number[];
}

export const TEMPERATURE_MIN = 0.01;
export const TEMPERATURE_MAX = 100;

/**
 * Label-count buckets a fit may use: small counts one by one (2-option questions are where
 * models tend to be most overconfident), larger counts grouped; 27+ is where labels become two
 * letters (AA, AB…). Score questions have 2–10 levels, so only the first five apply to them.
 */
export const LABEL_COUNT_BUCKETS: readonly { min: number; max: number }[] = [
  { min: 2, max: 2 },
  { min: 3, max: 3 },
  { min: 4, max: 4 },
  { min: 5, max: 6 },
  { min: 7, max: 10 },
  { min: 11, max: 26 },
  { min: 27, max: 255 },
];

export function predictionsAt(records: readonly LogitRecord[], temperatures: Temperatures): Prediction[] {
  return records.map((r) => ({
    type: r.type,
    probabilities: normalise(r.logits, temperatureFor(temperatures, r.type, r.logits.length)),
    gold: r.gold,
  }));
}

export function meanNll(records: readonly LogitRecord[], temperature: number): number {
  let total = 0;
  for (const r of records) total += negativeLogLikelihood({ type: r.type, probabilities: normalise(r.logits, temperature), gold: r.gold });
  return total / records.length;
}

export interface TemperatureFit {
  temperature: number;
  answers: number;
  /** Mean NLL at T = 1 and at the fitted T, on the records fitted. */
  nllBefore: number;
  nllAfter: number;
  /** The optimum lies at the edge of [0.01, 100]: the data separate perfectly or carry no signal. */
  atBound: boolean;
}

/**
 * Minimises mean NLL over u = log T by golden-section search. NLL is convex in β = 1/T
 * (log-sum-exp of a linear function of β, minus a linear term), so it is unimodal in any
 * monotone reparameterisation such as log T, which golden-section search needs; log T makes
 * the search symmetric between sharpening and softening.
 */
export function fitTemperature(records: readonly LogitRecord[], tolerance = 1e-7): TemperatureFit {
  if (records.length === 0) throw new Error("cannot fit a temperature on no answers");
  const ordered = records.map(orderFree);
  const f = (u: number) => meanNll(ordered, Math.exp(u));
  const lo = Math.log(TEMPERATURE_MIN);
  const hi = Math.log(TEMPERATURE_MAX);
  let u = goldenSectionMinimum(f, lo, hi, tolerance);
  const nllBefore = f(0);
  // Flat NLL (every answer uniform, or no signal): keep the model as it is rather than drift.
  if (Math.abs(f(u) - nllBefore) <= 1e-12 * Math.max(1, nllBefore)) u = 0;
  const atBound = u - lo < 1e-3 || hi - u < 1e-3;
  return { temperature: Math.exp(u), answers: records.length, nllBefore, nllAfter: f(u), atBound };
}

/**
 * The answer's labels in one order whatever order the dataset listed its options in (by logit,
 * then gold): the NLL is the same sum either way, but summed in another order it moves in the
 * last bits, which a flat minimum turns into a different temperature (seen with x_debias
 * canonical, whose logits do not depend on the order, on a dataset and its reversed copy).
 */
function orderFree(r: LogitRecord): LogitRecord {
  const pairs = r.logits.map((z, k) => [z, r.gold[k]] as const);
  pairs.sort((x, y) => (x[0] === y[0] ? y[1] - x[1] : x[0] < y[0] ? 1 : -1));
  return { type: r.type, logits: pairs.map(([z]) => z), gold: pairs.map(([, g]) => g) };
}

function goldenSectionMinimum(f: (x: number) => number, lo: number, hi: number, tolerance: number): number {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let [a, b] = [lo, hi];
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let [fc, fd] = [f(c), f(d)];
  while (b - a > tolerance) {
    if (fc <= fd) {
      [b, d, fd] = [d, c, fc];
      c = b - ratio * (b - a);
      fc = f(c);
    } else {
      [a, c, fc] = [c, d, fd];
      d = a + ratio * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

export interface BucketFit extends TemperatureFit {
  min: number;
  max: number;
}

export interface CalibrationFit {
  types: Partial<Record<QuestionType, TemperatureFit>>;
  buckets: { choice?: BucketFit[]; score?: BucketFit[] };
}

/**
 * A temperature per type present, and per label-count bucket with at least `minBucketAnswers`
 * answers. A bucket holding all of its type's answers would only repeat the type's fit, so it
 * is left out.
 */
export function fitCalibration(records: readonly LogitRecord[], minBucketAnswers: number): CalibrationFit {
  const fit: CalibrationFit = { types: {}, buckets: {} };
  for (const type of ["choice", "noul", "score"] as const) {
    const ofType = records.filter((r) => r.type === type);
    if (ofType.length === 0) continue;
    fit.types[type] = fitTemperature(ofType);
    if (type === "noul") continue;
    const buckets = LABEL_COUNT_BUCKETS.map((b) => ({ ...b, records: ofType.filter((r) => r.logits.length >= b.min && r.logits.length <= b.max) }))
      .filter((b) => b.records.length >= minBucketAnswers && b.records.length < ofType.length)
      .map((b) => ({ min: b.min, max: b.max, ...fitTemperature(b.records) }));
    if (buckets.length > 0) fit.buckets[type] = buckets;
  }
  return fit;
}

/** The fitted temperatures; types the fit has no data for keep `base`'s (T = 1 by default). */
export function temperaturesOf(fit: CalibrationFit, base: Temperatures = { choice: 1, noul: 1, score: 1 }): Temperatures {
  const out: Temperatures = { choice: base.choice, noul: base.noul, score: base.score };
  const buckets: NonNullable<Temperatures["buckets"]> = {};
  for (const type of ["choice", "noul", "score"] as const) {
    const typeFit = fit.types[type];
    if (typeFit) out[type] = typeFit.temperature;
    if (type === "noul") continue;
    const kept = typeFit ? fit.buckets[type] : base.buckets?.[type];
    if (kept && kept.length > 0) buckets[type] = kept.map((b): TemperatureBucket => ({ min: b.min, max: b.max, temperature: b.temperature }));
  }
  if (buckets.choice || buckets.score) out.buckets = buckets;
  return out;
}
