import { minimise, softmaxInto } from "./optimise.js";
import type { PreparedRow } from "./types.js";

/**
 * The L2-regularised multinomial logistic regression under level 2 (level2.ts says what it is
 * for): on standardised features z, minimise
 *   mean cross-entropy + (λ/N)/2 · ‖W‖² + BIAS_L2/2 · ‖b‖²
 * (λ is scikit-learn's 1/C: the penalty of the summed loss).
 *
 * Only classes with gold mass in the training rows ("active") get weights; the others keep zero
 * weights and a fitted bias. On centred training rows an absent class's weight gradient is
 * Σ p·z/N with p all but constant and Σ z = 0, so its optimum is all but zero anyway; leaving it
 * out keeps a 255-option choice with a few dozen labels as cheap as the classes it has seen.
 *
 * The tiny bias penalty keeps an absent class finite (its probability settles near 1e-5 instead
 * of its bias running to −∞), small enough that 250 absent options share well under 1%.
 */
export const BIAS_L2 = 1e-6;

/** Below this spread a feature is constant on the training rows: it is centred and left unscaled. */
const MIN_STD = 1e-8;

/**
 * With fewer training rows than this share of the features, the fit runs in the rows' own basis
 * (below): each pass costs N²/2 instead of N·D, about three times less for 400 rows of 640.
 */
const KERNEL_BELOW = 0.75;

/** One training set, ready to fit at any λ. */
export interface Problem {
  /** Standardised features, row-major N×D. */
  z: Float64Array;
  n: number;
  d: number;
  mean: Float64Array;
  std: Float64Array;
  golds: readonly Float64Array[];
  classes: number;
  active: number[];
  /** What the optimiser sees: z itself (m = D), or L with L·Lᵀ = z·zᵀ (m = N, lower-triangular). */
  basis: Float64Array;
  m: number;
  triangular: boolean;
}

/** `kernel` chooses the basis; by default the cheaper one. */
export function problem(rows: readonly PreparedRow[], classes: number, kernel = rows.length < KERNEL_BELOW * rows[0].features!.length): Problem {
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
  const z = new Float64Array(n * d);
  rows.forEach((row, i) => {
    for (let j = 0; j < d; j++) z[i * d + j] = (row.features![j] - mean[j]) / std[j];
  });
  const golds = rows.map((row) => row.gold);
  const active = Array.from({ length: classes }, (_, c) => c).filter((c) => golds.some((gold) => gold[c] > 0));
  const basis = kernel ? choleskyOfGram(z, n, d) : z;
  return { z, n, d, mean, std, golds, classes, active, basis, m: kernel ? n : d, triangular: kernel };
}

/**
 * The rows' own basis. The penalised fit depends on the rows only through their inner products
 * (its weights lie in their span), so any R with R·Rᵀ = z·zᵀ gives the same logits and the same
 * ‖W‖: Cholesky's L is one, and lower-triangular. Centred rows make z·zᵀ singular, so a jitter of
 * 1e-10 of the mean diagonal is added: each row gains a private feature of size ~1e-5 of its norm,
 * far below anything the fit can use.
 */
function choleskyOfGram(z: Float64Array, n: number, d: number): Float64Array {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) l[i * n + j] = dotAt(z, i * d, z, j * d, d);
  let trace = 0;
  for (let i = 0; i < n; i++) trace += l[i * n + i];
  const jitter = Math.max(1e-10 * (trace / n), 1e-300);
  for (let j = 0; j < n; j++) {
    const pivot = l[j * n + j] + jitter - dotAt(l, j * n, l, j * n, j);
    const diagonal = Math.sqrt(Math.max(pivot, jitter));
    l[j * n + j] = diagonal;
    for (let i = j + 1; i < n; i++) l[i * n + j] = (l[i * n + j] - dotAt(l, i * n, l, j * n, j)) / diagonal;
  }
  return l;
}

/**
 * Σ a[ai + j]·b[bi + j] over j < len. Unrolled by four with four running sums: V8 does not
 * vectorise, and independent sums let the CPU overlap the multiplies (about twice as fast).
 * The order of the additions is fixed, so the result is the same every run.
 */
export function dotAt(a: Float64Array, ai: number, b: Float64Array, bi: number, len: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < len; j += 4) {
    s0 += a[ai + j] * b[bi + j];
    s1 += a[ai + j + 1] * b[bi + j + 1];
    s2 += a[ai + j + 2] * b[bi + j + 2];
    s3 += a[ai + j + 3] * b[bi + j + 3];
  }
  for (; j < len; j++) s0 += a[ai + j] * b[bi + j];
  return s0 + s1 + (s2 + s3);
}

/** out[oi + j] += scale · b[bi + j] over j < len, unrolled like dotAt. */
function addScaledAt(out: Float64Array, oi: number, scale: number, b: Float64Array, bi: number, len: number): void {
  let j = 0;
  for (; j + 3 < len; j += 4) {
    out[oi + j] += scale * b[bi + j];
    out[oi + j + 1] += scale * b[bi + j + 1];
    out[oi + j + 2] += scale * b[bi + j + 2];
    out[oi + j + 3] += scale * b[bi + j + 3];
  }
  for (; j < len; j++) out[oi + j] += scale * b[bi + j];
}

/** Parameters as one vector: the active classes' coefficients on the basis row by row (A×m), then every class's bias (K). */
export function fitParameters(p: Problem, l2: number, start?: Float64Array): Float64Array {
  const { basis, n, m, golds, classes: k, active, triangular } = p;
  const a = active.length;
  const scores = new Float64Array(k);
  const penalty = l2 / n;
  const objective = (params: Float64Array, grad: Float64Array) => {
    grad.fill(0);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const offset = i * m;
      const len = triangular ? i + 1 : m;
      for (let c = 0; c < k; c++) scores[c] = params[a * m + c];
      for (let r = 0; r < a; r++) scores[active[r]] += dotAt(params, r * m, basis, offset, len);
      softmaxInto(scores, scores);
      const gold = golds[i];
      for (let c = 0; c < k; c++) {
        if (gold[c] > 0) loss -= gold[c] * Math.log(Math.max(scores[c], 1e-300));
        grad[a * m + c] += (scores[c] - gold[c]) / n;
      }
      for (let r = 0; r < a; r++) {
        const residual = (scores[active[r]] - gold[active[r]]) / n;
        if (residual !== 0) addScaledAt(grad, r * m, residual, basis, offset, len);
      }
    }
    loss /= n;
    let squares = 0;
    for (let j = 0; j < a * m; j++) {
      squares += params[j] * params[j];
      grad[j] += penalty * params[j];
    }
    let biasSquares = 0;
    for (let c = 0; c < k; c++) {
      biasSquares += params[a * m + c] ** 2;
      grad[a * m + c] += BIAS_L2 * params[a * m + c];
    }
    return loss + (penalty / 2) * squares + (BIAS_L2 / 2) * biasSquares;
  };
  return minimise(objective, start ?? new Float64Array(a * m + k), { maxIterations: 300, gradientTolerance: 1e-5, relativeTolerance: 1e-9 }).x;
}

/**
 * The weights on z (K×D) of fitted parameters. In the rows' basis, coefficients β give logits
 * L·β; with α = L⁻ᵀ·β, zᵀ·α gives z·zᵀ·α = L·Lᵀ·L⁻ᵀ·β = L·β, the same logits.
 */
export function weightsOf(p: Problem, params: Float64Array): number[][] {
  const { d, m, n, classes, active, basis, z } = p;
  const weights = Array.from({ length: classes }, () => new Array<number>(d).fill(0));
  active.forEach((c, r) => {
    if (!p.triangular) {
      weights[c] = Array.from(params.subarray(r * d, (r + 1) * d));
      return;
    }
    const alpha = new Float64Array(n);
    for (let i = n - 1; i >= 0; i--) {
      let s = params[r * m + i];
      for (let j = i + 1; j < n; j++) s -= basis[j * n + i] * alpha[j];
      alpha[i] = s / basis[i * n + i];
    }
    const w = new Float64Array(d);
    for (let i = 0; i < n; i++) if (alpha[i] !== 0) addScaledAt(w, 0, alpha[i], z, i * d, d);
    weights[c] = Array.from(w);
  });
  return weights;
}

export function biasOf(p: Problem, params: Float64Array): number[] {
  return Array.from(params.subarray(p.active.length * p.m));
}
