import { meanNll } from "./metrics.js";
import { biasOf, fitParameters, type Problem, problem, weightsOf } from "./logistic.js";
import { softmaxInto } from "./optimise.js";
import type { PreparedRow } from "./types.js";

/**
 * Level 2: a multinomial logistic head on the model's hidden state at the answer position,
 * softmax_k(w_k · (x − mean) / std + b_k), fitted with an L2 penalty (logistic.ts) whose
 * strength λ is chosen by cross-validation on the training rows only. For K = 2 the two rows
 * are the binary logistic regression itself: with the penalty on both, the optimum has
 * w_1 = −w_0, the binary fit with penalty λ·‖w_0‖² in the form every K shares.
 */

/**
 * The candidate λ (scikit-learn's 1/C), strongest first. Why it stops at 1 (C = 1): the issue
 * measured that with fewer than ~50 labels 5-fold CV sometimes picks far too weak a
 * regularisation; on 640 features a weaker λ lets the head memorise a few dozen rows, and one
 * noisy fold is enough to pick it. On synthetic problems shaped like hidden states, cleanly
 * separable ones gain under 0.02 NLL from going weaker, while small noisy ones lose more. The
 * choice on the grid uses the one-standard-error rule (chooseL2), which leans stronger still
 * when the evidence for a weaker λ is thin.
 */
export const L2_GRID: readonly number[] = [1000, 300, 100, 30, 10, 3, 1];

/**
 * The most work one pass of a level 2 fit may take: active classes × rows × basis size
 * (min(N, D), logistic.ts), in multiply-adds. A fit is about 3 000 passes over 15 CV paths, so
 * this bounds it near a minute on one core: 3 classes × 500 rows × 640 features is 1e6 (about 3 s);
 * a 60-option choice with 500 examples is at the limit. Past it the report leaves level 2 out
 * and says why: a head over hundreds of options with a handful of examples each would mostly
 * learn the prior, at the cost of minutes.
 */
export const LEVEL2_WORK_LIMIT = 2e7;

/** Why level 2 is not fitted on these rows, or undefined when it is. */
export function level2Omission(rows: readonly PreparedRow[], classes: number, withFeatures: boolean, folds: number): string | undefined {
  if (rows.length === 0) return "no examples";
  if (!withFeatures) return "not every example has the model's hidden state";
  if (folds < 2) return "too few examples to cross-validate";
  const active = Array.from({ length: classes }, (_, c) => c).filter((c) => rows.some((row) => row.gold[c] > 0)).length;
  const d = rows[0].features!.length;
  const work = active * rows.length * Math.min(rows.length, d);
  if (work > LEVEL2_WORK_LIMIT)
    return `too large to fit: ${active} classes × ${rows.length} examples × ${Math.min(rows.length, d)} is over ${LEVEL2_WORK_LIMIT}`;
  return undefined;
}

export interface Level2 {
  mean: number[];
  std: number[];
  weights: number[][];
  bias: number[];
  l2: number;
}

function toHead(p: Problem, params: Float64Array, l2: number): Level2 {
  return { mean: Array.from(p.mean), std: Array.from(p.std), weights: weightsOf(p, params), bias: biasOf(p, params), l2 };
}

export function applyLevel2(head: Level2, features: ArrayLike<number>): number[] {
  const d = head.mean.length;
  if (features.length !== d) throw new RangeError(`the head takes ${d} features, got ${features.length}`);
  const scores = head.bias.slice();
  for (let j = 0; j < d; j++) {
    const z = (features[j] - head.mean[j]) / head.std[j];
    for (let c = 0; c < scores.length; c++) scores[c] += head.weights[c][j] * z;
  }
  softmaxInto(scores, scores);
  return scores;
}

/** Fits at one λ. */
export function fitLevel2(rows: readonly PreparedRow[], classes: number, l2: number): Level2 {
  const fit = problem(rows, classes);
  return toHead(fit, fitParameters(fit, l2), l2);
}

/**
 * The one-standard-error rule: the strongest λ whose mean held-out NLL is within one standard
 * error (over the inner folds) of the best mean. With few labels the fold-to-fold spread is
 * wide and the rule lands on a strong λ; with many it narrows to the best.
 */
export function chooseL2(grid: readonly number[], foldNll: readonly (readonly number[])[]): number {
  const means = foldNll.map((values) => values.reduce((a, b) => a + b, 0) / values.length);
  let best = 0;
  for (let g = 1; g < grid.length; g++) if (means[g] < means[best]) best = g;
  const values = foldNll[best];
  const m = values.length;
  const sd = m > 1 ? Math.sqrt(values.reduce((a, v) => a + (v - means[best]) ** 2, 0) / (m - 1)) : 0;
  const bound = means[best] + sd / Math.sqrt(m);
  let chosen = best;
  for (let g = 0; g < grid.length; g++) if (grid[g] > grid[chosen] && means[g] <= bound) chosen = g;
  return grid[chosen];
}

/** What cross-validating level 2 gives the report: held-out predictions, each outer fold's λ, and the λ for the final head. */
export interface Level2CrossValidation {
  /** Per row, the prediction of a fit that never saw the row's fold, at the λ that fold's inner CV chose. */
  heldOut: number[][];
  /** The λ each outer fold's inner CV chose. */
  l2PerFold: number[];
  /** The λ that cross-validation over all rows chose, for the head refitted on all of them. */
  l2: number;
}

/**
 * Nested cross-validation that shares its fits. The inner folds of outer fold f are the other
 * outer folds: λ for f is chosen from fits on all folds but {f, g}, each scored on g. The fit
 * on all but {f, g} serves both f's and g's inner CV, so k folds cost k(k−1)/2 + k fit paths
 * instead of k² + k, and fold f's labels still never touch its own prediction or its λ. The
 * fits on all but f give f's held-out predictions and, scored on f, the CV that picks the
 * final head's λ. Each path standardises by its own training rows and walks the grid from
 * strongest to weakest, each fit starting where the previous stopped (the solution moves
 * smoothly with λ, so warm starts save most iterations). With fewer than 3 folds there is no
 * inner fold to choose with and the strongest λ is used.
 */
export function crossValidateLevel2(
  rows: readonly PreparedRow[],
  classes: number,
  assignment: readonly number[],
  l2Grid: readonly number[],
): Level2CrossValidation {
  const grid = [...l2Grid].sort((a, b) => b - a);
  const folds = assignment.reduce((max, f) => Math.max(max, f + 1), 1);
  const members = Array.from({ length: folds }, (_, f) => rows.map((_, i) => i).filter((i) => assignment[i] === f));
  /** predictions[g][i]: the fit at grid[g] on all folds outside `excluded`, for each row i of those folds. */
  const path = (excluded: readonly number[]) => {
    const train = rows.filter((_, i) => !excluded.includes(assignment[i]));
    const fit = problem(train, classes);
    const predictions: Map<number, number[]>[] = [];
    let params: Float64Array | undefined;
    for (const l2 of grid) {
      params = fitParameters(fit, l2, params);
      const head = toHead(fit, params, l2);
      const at = new Map<number, number[]>();
      for (const f of excluded) for (const i of members[f]) at.set(i, applyLevel2(head, rows[i].features!));
      predictions.push(at);
    }
    return predictions;
  };
  const nllOn = (predictions: Map<number, number[]>, fold: number) =>
    meanNll(
      members[fold].map((i) => predictions.get(i)!),
      members[fold].map((i) => rows[i].gold),
    );
  const single = Array.from({ length: folds }, (_, f) => path([f]));
  // innerNll[f][g][h]: grid[h] fitted without folds f and g, scored on g.
  const innerNll = Array.from({ length: folds }, () => new Array<number[]>(folds));
  if (folds >= 3) {
    for (let f = 0; f < folds; f++) {
      for (let g = f + 1; g < folds; g++) {
        const pair = path([f, g]);
        innerNll[f][g] = pair.map((predictions) => nllOn(predictions, g));
        innerNll[g][f] = pair.map((predictions) => nllOn(predictions, f));
      }
    }
  }
  const choose = (scores: (f: number) => number[], over: number[]) =>
    over.length < 2
      ? grid[0]
      : chooseL2(
          grid,
          grid.map((_, h) => over.map((f) => scores(f)[h])),
        );
  const heldOut = new Array<number[]>(rows.length);
  const l2PerFold = Array.from({ length: folds }, (_, f) => {
    const others = Array.from({ length: folds }, (_, g) => g).filter((g) => g !== f);
    const l2 = folds >= 3 ? choose((g) => innerNll[f][g], others) : grid[0];
    const predictions = single[f][grid.indexOf(l2)];
    for (const i of members[f]) heldOut[i] = predictions.get(i)!;
    return l2;
  });
  const all = Array.from({ length: folds }, (_, f) => f);
  const l2 = choose((f) => single[f].map((predictions) => nllOn(predictions, f)), all);
  return { heldOut, l2PerFold, l2 };
}
