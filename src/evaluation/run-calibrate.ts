import { NEUTRAL_TEMPERATURES, type Temperatures } from "../judgment/answers.js";
import type { DebiasMode } from "../judgment/debias.js";
import { Mulberry32 } from "../gguf/prng.js";
import { EvaluationRunError, labelErrors, requestExtras, sendAll, type JudgmentClient } from "./client.js";
import { requestOf, type DatasetItem } from "./dataset.js";
import { summariseByType, type MetricSummary } from "./metrics.js";
import { answerLogits } from "./read-answer.js";
import { fitCalibration, predictionsAt, temperaturesOf, type CalibrationFit, type LogitRecord } from "./temperature.js";
import { atOneFor, crossValidate, nllOf } from "./calibrate-folds.js";
import type { Prediction } from "./metrics.js";

/**
 * `judge calibrate`: asks the server every item with `include_logits`, splits the items into a
 * fitting part and a held-out part (by item, so questions about one state never sit on both
 * sides), fits temperatures on the first and reports calibration before and after on the second.
 */

export interface CalibrateRunOptions {
  items: readonly DatasetItem[];
  client: JudgmentClient;
  concurrency: number;
  /** Share of items held out for the before/after report; 0 reports on the fitting data itself. */
  holdout: number;
  /**
   * k ≥ 2: cross-validate instead (\`--folds\`): every answer is scored with temperatures fitted on
   * the other k − 1 folds of items, and the profile gets the fit on all items; \`holdout\` is unused.
   */
  folds?: number;
  seed: number;
  minBucketAnswers: number;
  model?: string;
  /**
   * Sent as every request's `x_debias`: fit on the logits the server answers with in the mode it
   * serves (shift averages several presentations, which changes how sharp they are).
   */
  debias?: DebiasMode;
  /**
   * The profile's temperatures for the model the server reports, if it has an entry: types the
   * data cannot fit keep them, and the report shows how they did.
   */
  currentFor?: (modelId: string) => Temperatures | undefined;
  progress: (total: number) => { advance(): void; finish(): void };
}

/** The reliability bins are kept for the report's before/after diagrams. */
export type CompactMetrics = Pick<MetricSummary, "answers" | "accuracy" | "ece" | "nll" | "brier" | "bins">;
export type CompactByType = Partial<Record<"overall" | "choice" | "noul" | "score", CompactMetrics>>;

export interface CalibrateResult {
  model: string;
  /** The `x_debias` every request carried, when one was asked for. */
  debias?: DebiasMode;
  /** "probabilities" when the server sent no logits and log(probabilities) stood in for them. */
  logitsSource: "logits" | "probabilities" | "mixed";
  split: { fitItems: number; fitAnswers: number; heldOutItems: number; heldOutAnswers: number; inSample: boolean };
  fit: CalibrationFit;
  temperatures: Temperatures;
  /**
   * Types whose fitted temperature raised the held-out NLL above T = 1's: they keep 1 (and no
   * buckets), since a temperature that does worse on answers it was not fitted on only adds noise.
   */
  keptAtOne: KeptAtOne[];
  heldOut: { uncalibrated: CompactByType; calibrated: CompactByType; current?: CompactByType };
  /** With \`--folds\`: the cross-validation, and per fold the temperatures its answers were scored with. */
  folds?: { k: number; seed: number; temperatures: Temperatures[] };
}

export async function runCalibration(options: CalibrateRunOptions): Promise<CalibrateResult> {
  if (options.folds !== undefined) return runCrossValidated(options, options.folds);
  const { fitItems, heldOutItems } = splitItems(options.items, options.holdout, options.seed);
  const { model, recordsOf, logitsSource } = await askForLogits(options);
  const fitRecords = fitItems.flatMap((item) => recordsOf.get(item)!);
  const inSample = heldOutItems.length === 0;
  const heldOutRecords = inSample ? fitRecords : heldOutItems.flatMap((item) => recordsOf.get(item)!);

  const fit = fitCalibration(fitRecords, options.minBucketAnswers);
  const current = options.currentFor?.(model);
  const fitted = temperaturesOf(fit, current);
  const { temperatures, keptAtOne } = inSample ? { temperatures: fitted, keptAtOne: [] } : guardTemperatures(fitted, fit, heldOutRecords);
  return {
    model,
    ...(options.debias && { debias: options.debias }),
    logitsSource,
    split: {
      fitItems: fitItems.length,
      fitAnswers: fitRecords.length,
      heldOutItems: heldOutItems.length,
      heldOutAnswers: inSample ? 0 : heldOutRecords.length,
      inSample,
    },
    fit,
    temperatures,
    keptAtOne,
    heldOut: {
      uncalibrated: compact(heldOutRecords, NEUTRAL_TEMPERATURES),
      calibrated: compact(heldOutRecords, temperatures),
      // Applying the profile's temperatures on top of probabilities the server may already have
      // calibrated would measure nothing meaningful.
      ...(current && logitsSource === "logits" && { current: compact(heldOutRecords, current) }),
    },
  };
}

/** \`--folds k\`: every answer held out once; the profile is the fit on all items, guarded by the folds. */
async function runCrossValidated(options: CalibrateRunOptions, k: number): Promise<CalibrateResult> {
  if (!Number.isInteger(k) || k < 2) throw new EvaluationRunError(`--folds must be an integer of at least 2, not ${k}`);
  if (options.items.length < k) throw new EvaluationRunError(`--folds ${k} needs at least ${k} items; the dataset has ${options.items.length}`);
  const { model, recordsOf, logitsSource } = await askForLogits(options);
  const perItem = options.items.map((item) => recordsOf.get(item)!);
  const all = perItem.flat();
  const current = options.currentFor?.(model);
  const fit = fitCalibration(all, options.minBucketAnswers);
  const fitted = temperaturesOf(fit, current);
  const cv = crossValidate(perItem, k, options.seed, options.minBucketAnswers, current);
  const temperatures = copyTemperatures(fitted);
  const keptAtOne: KeptAtOne[] = [];
  for (const type of ["choice", "noul", "score"] as const) {
    if (!fit.types[type]) continue;
    const nllAtOne = nllOf(cv.uncalibrated, type);
    const nllAtFitted = nllOf(cv.predictions, type);
    if (!(nllAtFitted > nllAtOne)) continue;
    keptAtOne.push({ type, fitted: fitted[type], nllAtOne, nllAtFitted });
    keepAtOne(temperatures, type);
  }
  return {
    model,
    ...(options.debias && { debias: options.debias }),
    logitsSource,
    split: { fitItems: options.items.length, fitAnswers: all.length, heldOutItems: options.items.length, heldOutAnswers: all.length, inSample: false },
    fit,
    temperatures,
    keptAtOne,
    heldOut: {
      uncalibrated: compactOf(cv.uncalibrated),
      // A type kept at T = 1 is scored at 1 in every fold, as the profile will answer it.
      calibrated: compactOf(
        atOneFor(
          cv,
          keptAtOne.map((kept) => kept.type),
        ),
      ),
      ...(current && logitsSource === "logits" && { current: compact(all, current) }),
    },
    folds: { k, seed: options.seed, temperatures: cv.temperatures },
  };
}

/** One request per item with include_logits; every answer read as label logits. */
async function askForLogits(options: CalibrateRunOptions) {
  const extra = { include_logits: true, ...requestExtras(options) };
  const requests = options.items.map((item) => ({ body: { ...requestOf(item), ...extra }, label: `item ${item.id} (line ${item.line})` }));
  const progress = options.progress(requests.length);
  const replies = await sendAll(options.client, requests, { concurrency: options.concurrency, progress });
  progress.finish();

  const models = [...new Set(replies.map((r) => r.model))];
  if (models.length !== 1) throw new EvaluationRunError(`the server answered as several models (${models.join(", ")}); a profile is per model`);
  let answers = 0;
  let fromLogits = 0;
  const recordsOf = new Map<DatasetItem, LogitRecord[]>();
  options.items.forEach((item, i) => {
    const records = item.labelled.map((q): LogitRecord => {
      const read = labelErrors(requests[i].label, () => answerLogits(q, replies[i].answers[q.id]));
      answers++;
      if (read.fromLogits) fromLogits++;
      return { type: q.type, logits: read.logits, gold: q.gold };
    });
    recordsOf.set(item, records);
  });
  const logitsSource: CalibrateResult["logitsSource"] = fromLogits === answers ? "logits" : fromLogits === 0 ? "probabilities" : "mixed";
  return { model: models[0], recordsOf, logitsSource };
}

export interface KeptAtOne {
  type: "choice" | "noul" | "score";
  fitted: number;
  nllAtOne: number;
  nllAtFitted: number;
}

/**
 * Per type, the fitted temperatures (with their buckets) against T = 1 on the held-out answers of
 * that type: where the fit is worse there, the type keeps 1.
 */
export function guardTemperatures(fitted: Temperatures, fit: CalibrationFit, heldOut: readonly LogitRecord[]) {
  const temperatures = copyTemperatures(fitted);
  const keptAtOne: KeptAtOne[] = [];
  for (const type of ["choice", "noul", "score"] as const) {
    const records = heldOut.filter((r) => r.type === type);
    if (!fit.types[type] || records.length === 0) continue;
    const nll = (t: Temperatures) => summariseByType(predictionsAt(records, t), [])[type]!.nll;
    const nllAtOne = nll(NEUTRAL_TEMPERATURES);
    const nllAtFitted = nll(fitted);
    if (!(nllAtFitted > nllAtOne)) continue;
    keptAtOne.push({ type, fitted: fitted[type], nllAtOne, nllAtFitted });
    keepAtOne(temperatures, type);
  }
  return { temperatures, keptAtOne };
}

const copyTemperatures = (t: Temperatures): Temperatures => ({ ...t, ...(t.buckets && { buckets: { ...t.buckets } }) });

/** The type answers at T = 1, without buckets of its own. */
function keepAtOne(temperatures: Temperatures, type: "choice" | "noul" | "score"): void {
  temperatures[type] = 1;
  if (type !== "noul" && temperatures.buckets) delete temperatures.buckets[type];
  if (temperatures.buckets && !temperatures.buckets.choice && !temperatures.buckets.score) delete temperatures.buckets;
}

function compact(records: readonly LogitRecord[], temperatures: Temperatures): CompactByType {
  return compactOf(predictionsAt(records, temperatures));
}

function compactOf(predictions: readonly Prediction[]): CompactByType {
  const summaries = summariseByType(predictions, []);
  const out: CompactByType = {};
  for (const [key, s] of Object.entries(summaries)) {
    if (s) out[key as keyof CompactByType] = { answers: s.answers, accuracy: s.accuracy, ece: s.ece, nll: s.nll, brier: s.brier, bins: s.bins };
  }
  return out;
}

/** A seeded shuffle of the items, the first `holdout` share held out (at least one of each side). */
export function splitItems<T>(items: readonly T[], holdout: number, seed: number): { fitItems: T[]; heldOutItems: T[] } {
  if (holdout === 0) return { fitItems: [...items], heldOutItems: [] };
  if (items.length < 2) throw new EvaluationRunError("holding items out needs at least 2 items; use --holdout 0 to report on the fitting data");
  const order = items.map((_, i) => i);
  const rng = new Mulberry32(seed);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const count = Math.min(items.length - 1, Math.max(1, Math.round(items.length * holdout)));
  const held = new Set(order.slice(0, count));
  // Both parts keep the file's order, so reports list items as the dataset does.
  return { fitItems: items.filter((_, i) => !held.has(i)), heldOutItems: items.filter((_, i) => held.has(i)) };
}
