import { NEUTRAL_TEMPERATURES, type Temperatures } from "../judgment/answers.js";
import { summariseByType, type Prediction } from "./metrics.js";
import { foldsOf } from "./quality.js";
import { fitCalibration, predictionsAt, temperaturesOf, type LogitRecord } from "./temperature.js";

/**
 * `judge calibrate --folds k`: the items are dealt into k folds (seeded, by item, so questions
 * about one state never sit on both sides); every fold's answers are scored with temperatures
 * fitted on the other k − 1 folds, so every answer is held out once and no answer is scored by
 * a fit that saw it. The profile gets the fit on all items: the folds measure how well that
 * fitting procedure does on answers it has not seen, with all the data rather than 30% of it.
 */

export interface CrossValidated {
  k: number;
  seed: number;
  /** Per fold: the temperatures its answers were scored with (fitted on the other folds). */
  temperatures: Temperatures[];
  /** Every answer, scored out of fold. */
  predictions: Prediction[];
  /** The same answers at T = 1, in the same order. */
  uncalibrated: Prediction[];
}

export function crossValidate(
  recordsPerItem: readonly (readonly LogitRecord[])[],
  k: number,
  seed: number,
  minBucketAnswers: number,
  base: Temperatures | undefined,
): CrossValidated {
  const foldOf = foldsOf(recordsPerItem.length, k, seed);
  const temperatures: Temperatures[] = [];
  const predictions: Prediction[] = [];
  const uncalibrated: Prediction[] = [];
  for (let fold = 0; fold < k; fold++) {
    const fitting = recordsPerItem.filter((_, i) => foldOf[i] !== fold).flat();
    const scored = recordsPerItem.filter((_, i) => foldOf[i] === fold).flat();
    const used = temperaturesOf(fitCalibration(fitting, minBucketAnswers), base);
    temperatures.push(used);
    predictions.push(...predictionsAt(scored, used));
    uncalibrated.push(...predictionsAt(scored, NEUTRAL_TEMPERATURES));
  }
  return { k, seed, temperatures, predictions, uncalibrated };
}

/** Mean NLL of one type's predictions (NaN when there are none). */
export function nllOf(predictions: readonly Prediction[], type: "choice" | "noul" | "score"): number {
  return (
    summariseByType(
      predictions.filter((p) => p.type === type),
      [],
    )[type]?.nll ?? NaN
  );
}

/** Replaces a type's temperatures (buckets included) by T = 1 in every fold's predictions. */
export function atOneFor(cv: CrossValidated, types: readonly ("choice" | "noul" | "score")[]): Prediction[] {
  return cv.predictions.map((p, i) => (types.includes(p.type) ? cv.uncalibrated[i] : p));
}
