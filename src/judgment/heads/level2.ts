import { meanNll } from "./metrics.js";
import { minimise, softmaxInto } from "./optimise.js";
import type { PreparedRow } from "./types.js";

/**
 * Level 2: multinomial logistic regression on standardised hidden-state features,
 * softmax_k(w_k · z + b_k) with z = (x − mean) / std, minimising
 *   mean cross-entropy + (λ·D/2)·‖W‖² + (BIAS_L2/2)·‖b‖².
 * λ is scaled by D because a standardised row has squared norm ≈ D: the same λ is the same
 * strength for SmolLM2's 576 features and Gemma's 640. For K = 2 the K rows are the binary
 * logistic regression itself: with the penalty on both rows the optimum has w_1 = −w_0, so
 * the fit is the binary one with penalty λ·D·‖w_0‖², in the form every K shares.
 * The tiny bias penalty keeps a class absent from the training rows finite (its probability
 * settles near 1e-5 instead of its bias running to −∞), small enough that 250 absent options
 * of a large choice still hold well under 1% of the mass between them.
 */
export const BIAS_L2 = 1e-6;

/**
 * The candidate λ, strongest first. Why it stops at 0.003: the issue measured that with fewer
 * than ~50 labels 5-fold CV sometimes picks far too weak a regularisation, and its held-out
 * NLL suffers; weaker λ let a head on 640 features memorise a few dozen rows. 0.003 still
 * lets a cleanly separable problem reach confident logits (a standardised row scaled by 1/√D
 * has norm ≈ 1, so ‖w‖ up to ~1/λ). The choice on the grid uses the one-standard-error rule
 * (chooseL2), which leans stronger still when the evidence for a weaker λ is thin.
 */
export const L2_GRID: readonly number[] = [1000, 300, 100, 30, 10, 3, 1];

/** Below this spread a feature is constant on the training rows: it is centred and left unscaled. */
const MIN_STD = 1e-8;

export interface Level2 {
  mean: number[];
  std: number[];
  weights: number[][];
  bias: number[];
  l2: number;
}

/** Rows' features standardised by the training rows' statistics, as one row-major N×D block. */
interface Design {
  x: Float64Array;
  n: number;
  d: number;
  mean: Float64Array;
  std: Float64Array;
}

function design(rows: readonly PreparedRow[]): Design {
  const n = rows.length;
  const d = rows[0].features!.length;
  const mean = new Float64Array(d);
  const std = new Float64Array(d);
  for (const row of rows) for (let j = 0; j < d; j++) mean[j] += row.features![j];
  for (let j = 0; j < d; j++) mean[j] /= n;
  for (const row of rows) for (let j = 0; j < d; j++) std[j] += (row.features![j] - mean[j]) ** 2;
  for (let j = 0; j < d; j++) {
    const s = Math.sqrt(std[j] / n);
    std[j] = s > MIN_STD ? s : 1;
  }
  const x = new Float64Array(n * d);
  rows.forEach((row, i) => {
    for (let j = 0; j < d; j++) x[i * d + j] = (row.features![j] - mean[j]) / std[j];
  });
  return { x, n, d, mean, std };
}

/**
 * Σ a[ai + j]·b[bi + j] over j < d. Unrolled by four with four running sums: V8 does not
 * vectorise, and independent sums let the CPU overlap the multiplies (about twice as fast on
 * the 500 × 640 fits). The order of the additions is fixed, so results are the same every run.
 */
function dotAt(a: Float64Array, ai: number, b: Float64Array, bi: number, d: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < d; j += 4) {
    s0 += a[ai + j] * b[bi + j];
    s1 += a[ai + j + 1] * b[bi + j + 1];
    s2 += a[ai + j + 2] * b[bi + j + 2];
    s3 += a[ai + j + 3] * b[bi + j + 3];
  }
  for (; j < d; j++) s0 += a[ai + j] * b[bi + j];
  return s0 + s1 + (s2 + s3);
}

/** out[oi + j] += scale · b[bi + j] over j < d, unrolled like dotAt. */
function addScaledAt(out: Float64Array, oi: number, scale: number, b: Float64Array, bi: number, d: number): void {
  let j = 0;
  for (; j + 3 < d; j += 4) {
    out[oi + j] += scale * b[bi + j];
    out[oi + j + 1] += scale * b[bi + j + 1];
    out[oi + j + 2] += scale * b[bi + j + 2];
    out[oi + j + 3] += scale * b[bi + j + 3];
  }
  for (; j < d; j++) out[oi + j] += scale * b[bi + j];
}

/**
 * One training set, ready to fit at any λ. Only classes with gold mass in the training rows
 * ("active") get weights; the others keep zero weights and a fitted bias. On centred training
 * rows an absent class's weight gradient is Σ p·z/N with p tiny and Σ z = 0, so its optimal
 * weights are all but zero anyway; leaving them out keeps a 255-option choice with a few dozen
 * labels as cheap as the classes actually seen.
 */
interface Problem {
  data: Design;
  golds: readonly Float64Array[];
  classes: number;
  active: number[];
}

function problem(rows: readonly PreparedRow[], classes: number): Problem {
  const golds = rows.map((row) => row.gold);
  const active = Array.from({ length: classes }, (_, c) => c).filter((c) => golds.some((gold) => gold[c] > 0));
  return { data: design(rows), golds, classes, active };
}

/** Parameters as one vector: the active classes' weights row by row (A×D), then every class's bias (K). */
function fitParameters(problem: Problem, l2: number, start?: Float64Array): Float64Array {
  const { data, golds, classes: k, active } = problem;
  const { x, n, d } = data;
  const a = active.length;
  const scores = new Float64Array(k);
  const penalty = l2 / n;
  const objective = (params: Float64Array, grad: Float64Array) => {
    grad.fill(0);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const offset = i * d;
      for (let c = 0; c < k; c++) scores[c] = params[a * d + c];
      for (let r = 0; r < a; r++) scores[active[r]] += dotAt(params, r * d, x, offset, d);
      softmaxInto(scores, scores);
      const gold = golds[i];
      for (let c = 0; c < k; c++) {
        if (gold[c] > 0) loss -= gold[c] * Math.log(Math.max(scores[c], 1e-300));
        grad[a * d + c] += (scores[c] - gold[c]) / n;
      }
      for (let r = 0; r < a; r++) {
        const residual = (scores[active[r]] - gold[active[r]]) / n;
        if (residual !== 0) addScaledAt(grad, r * d, residual, x, offset, d);
      }
    }
    loss /= n;
    let squares = 0;
    for (let j = 0; j < a * d; j++) {
      squares += params[j] * params[j];
      grad[j] += penalty * params[j];
    }
    let biasSquares = 0;
    for (let c = 0; c < k; c++) {
      biasSquares += params[a * d + c] ** 2;
      grad[a * d + c] += BIAS_L2 * params[a * d + c];
    }
    return loss + (penalty / 2) * squares + (BIAS_L2 / 2) * biasSquares;
  };
  return minimise(objective, start ?? new Float64Array(a * d + k), { maxIterations: 300, gradientTolerance: 1e-5, relativeTolerance: 1e-9 }).x;
}

function toHead(problem: Problem, params: Float64Array, l2: number): Level2 {
  const { data, classes, active } = problem;
  const d = data.d;
  const weights = Array.from({ length: classes }, () => new Array<number>(d).fill(0));
  active.forEach((c, r) => {
    weights[c] = Array.from(params.subarray(r * d, (r + 1) * d));
  });
  return { mean: Array.from(data.mean), std: Array.from(data.std), weights, bias: Array.from(params.subarray(active.length * d)), l2 };
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
