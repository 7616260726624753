import { minimise, softmaxInto } from "./optimise.js";
import type { PreparedRow } from "./types.js";

/**
 * Level 1: softmax_k(scale_k · logp_k + bias_k), fitted by minimising the mean cross-entropy
 * against the (soft) gold. Each class has its own scale and bias, attached to the class, not
 * to a position, so permuting the classes permutes the fitted parameters and nothing else.
 *
 * A small penalty LEVEL1_L2/2 · Σ((scale_k − 1)² + bias_k²) pulls towards the plain readout
 * (scale 1, bias 0). It keeps the fit finite where it otherwise is not: a class absent from
 * the training rows (its bias would run to −∞), or a readout that separates the training rows
 * perfectly (its scale would run to +∞); 1e-3 is small next to the loss of any real data set.
 */
export const LEVEL1_L2 = 1e-3;

export interface Level1 {
  scale: number[];
  bias: number[];
}

export function fitLevel1(rows: readonly PreparedRow[], classes: number): Level1 {
  const n = rows.length;
  const k = classes;
  const probabilities = new Float64Array(k);
  // Parameters: scale_0 … scale_{k−1}, bias_0 … bias_{k−1}.
  const objective = (x: Float64Array, grad: Float64Array) => {
    grad.fill(0);
    let loss = 0;
    for (const row of rows) {
      for (let c = 0; c < k; c++) probabilities[c] = x[c] * row.logProbs[c] + x[k + c];
      softmaxInto(probabilities, probabilities);
      for (let c = 0; c < k; c++) {
        const g = row.gold[c];
        if (g > 0) loss -= g * Math.log(Math.max(probabilities[c], 1e-300));
        const residual = (probabilities[c] - g) / n;
        grad[c] += residual * row.logProbs[c];
        grad[k + c] += residual;
      }
    }
    loss /= n;
    for (let c = 0; c < k; c++) {
      loss += (LEVEL1_L2 / 2) * ((x[c] - 1) ** 2 + x[k + c] ** 2);
      grad[c] += LEVEL1_L2 * (x[c] - 1);
      grad[k + c] += LEVEL1_L2 * x[k + c];
    }
    return loss;
  };
  // The optimiser sees u_k = scale_k·r_k, r_k the root mean square of class k's log-probability:
  // a scale multiplies values far from 0 (−50 for a ruled-out label) and a bias multiplies 1, so
  // unscaled, their curvatures differ by r², up to 2 500, and L-BFGS crawls.
  const rms = new Float64Array(k);
  for (const row of rows) for (let c = 0; c < k; c++) rms[c] += row.logProbs[c] ** 2 / n;
  for (let c = 0; c < k; c++) rms[c] = Math.sqrt(rms[c]) > 1e-6 ? Math.sqrt(rms[c]) : 1;
  const original = new Float64Array(2 * k);
  const scaled = (y: Float64Array, grad: Float64Array) => {
    for (let c = 0; c < k; c++) original[c] = y[c] / rms[c];
    original.set(y.subarray(k), k);
    const value = objective(original, grad);
    for (let c = 0; c < k; c++) grad[c] /= rms[c];
    return value;
  };
  const start = new Float64Array(2 * k);
  start.set(rms);
  const { x } = minimise(scaled, start, { maxIterations: 300, gradientTolerance: 1e-7, relativeTolerance: 1e-12 });
  return { scale: Array.from(x.subarray(0, k), (u, c) => u / rms[c]), bias: Array.from(x.subarray(k)) };
}

export function applyLevel1(head: Level1, logProbs: ArrayLike<number>): number[] {
  const scores = new Array<number>(head.scale.length);
  for (let c = 0; c < scores.length; c++) scores[c] = head.scale[c] * logProbs[c] + head.bias[c];
  softmaxInto(scores, scores);
  return scores;
}
