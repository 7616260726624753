/**
 * Deterministic numerical pieces: a stable softmax and a limited-memory BFGS minimiser with a
 * backtracking (Armijo) line search, a fixed iteration budget and fixed tolerances. No
 * randomness and a fixed order of every sum, so the same problem gives the same bits.
 */

/** softmax of `scores` written into `out` (scores and out may be the same array). */
export function softmaxInto(scores: ArrayLike<number>, out: Float64Array | number[], offset = 0, length = scores.length): void {
  let max = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < length; k++) max = Math.max(max, scores[offset + k]);
  let sum = 0;
  for (let k = 0; k < length; k++) {
    const e = max === Number.NEGATIVE_INFINITY ? 1 : Math.exp(scores[offset + k] - max);
    out[offset + k] = e;
    sum += e;
  }
  for (let k = 0; k < length; k++) out[offset + k] /= sum;
}

export function softmax(scores: ArrayLike<number>): number[] {
  const out = new Array<number>(scores.length);
  softmaxInto(scores, out);
  return out;
}

/** Writes the gradient at x into grad and returns the objective. */
export type Objective = (x: Float64Array, grad: Float64Array) => number;

export interface MinimiseOptions {
  /** Iteration budget; the result is the best point reached within it. */
  maxIterations?: number;
  /** Stop when the largest gradient component is at most this. */
  gradientTolerance?: number;
  /** Stop when an iteration lowers the objective by less than this, relative to its size. */
  relativeTolerance?: number;
  /** Pairs of past steps kept. */
  memory?: number;
}

export interface MinimiseResult {
  x: Float64Array;
  value: number;
  iterations: number;
  evaluations: number;
}

const dot = (a: Float64Array, b: Float64Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

const maxAbs = (a: Float64Array) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
};

/** L-BFGS from x0 (not modified). The objectives here are smooth and convex, so a plain Armijo backtracking search is enough. */
export function minimise(objective: Objective, x0: Float64Array, options: MinimiseOptions = {}): MinimiseResult {
  const maxIterations = options.maxIterations ?? 200;
  const gradientTolerance = options.gradientTolerance ?? 1e-6;
  const relativeTolerance = options.relativeTolerance ?? 1e-10;
  const memory = options.memory ?? 8;
  const n = x0.length;
  let x = Float64Array.from(x0);
  let grad = new Float64Array(n);
  let value = objective(x, grad);
  let evaluations = 1;
  const sHistory: Float64Array[] = [];
  const yHistory: Float64Array[] = [];
  const rhoHistory: number[] = [];
  const direction = new Float64Array(n);
  const alpha = new Array<number>(memory);
  let nextX = new Float64Array(n);
  let nextGrad = new Float64Array(n);
  let iterations = 0;
  while (iterations < maxIterations && maxAbs(grad) > gradientTolerance) {
    iterations++;
    // Two-loop recursion: direction = −H·grad.
    for (let i = 0; i < n; i++) direction[i] = -grad[i];
    for (let h = sHistory.length - 1; h >= 0; h--) {
      alpha[h] = rhoHistory[h] * dot(sHistory[h], direction);
      const y = yHistory[h];
      for (let i = 0; i < n; i++) direction[i] -= alpha[h] * y[i];
    }
    if (sHistory.length > 0) {
      const last = sHistory.length - 1;
      const gamma = dot(sHistory[last], yHistory[last]) / dot(yHistory[last], yHistory[last]);
      for (let i = 0; i < n; i++) direction[i] *= gamma;
    } else {
      // First step: no curvature known yet, so a unit-length step along the gradient.
      const norm = Math.sqrt(dot(direction, direction));
      for (let i = 0; i < n; i++) direction[i] /= Math.max(norm, 1);
    }
    for (let h = 0; h < sHistory.length; h++) {
      const beta = rhoHistory[h] * dot(yHistory[h], direction);
      const s = sHistory[h];
      for (let i = 0; i < n; i++) direction[i] += (alpha[h] - beta) * s[i];
    }
    let slope = dot(grad, direction);
    if (!(slope < 0)) {
      // Not a descent direction (rounding): restart from steepest descent.
      sHistory.length = yHistory.length = rhoHistory.length = 0;
      for (let i = 0; i < n; i++) direction[i] = -grad[i];
      slope = dot(grad, direction);
    }
    let step = 1;
    let nextValue = Number.POSITIVE_INFINITY;
    for (let tries = 0; tries < 40; tries++) {
      for (let i = 0; i < n; i++) nextX[i] = x[i] + step * direction[i];
      nextValue = objective(nextX, nextGrad);
      evaluations++;
      if (nextValue <= value + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(nextValue < value)) break; // no progress possible at this precision
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = nextX[i] - x[i];
      y[i] = nextGrad[i] - grad[i];
    }
    const sy = dot(s, y);
    if (sy > 1e-12 * Math.sqrt(dot(s, s) * dot(y, y))) {
      if (sHistory.length === memory) {
        sHistory.shift();
        yHistory.shift();
        rhoHistory.shift();
      }
      sHistory.push(s);
      yHistory.push(y);
      rhoHistory.push(1 / sy);
    }
    const decrease = value - nextValue;
    [x, nextX] = [nextX, x];
    [grad, nextGrad] = [nextGrad, grad];
    value = nextValue;
    if (decrease <= relativeTolerance * Math.max(1, Math.abs(value))) break;
  }
  return { x, value, iterations, evaluations };
}
