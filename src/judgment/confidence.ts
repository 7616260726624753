/**
 * Confidence as the reference service defines it (docs/interface/choices.md): how far the answer is from
 * the least informative one, in [0, 1].
 */

/** (m − 1/n) / (1 − 1/n), m the largest of n probabilities. */
export function choiceConfidence(probabilities: number[]): number {
  const n = probabilities.length;
  const top = Math.max(...probabilities);
  return clamp01((top - 1 / n) / (1 - 1 / n));
}

/**
 * max(0, 1 − Σ pᵢ·|i − k| / D), k the most likely level and D = (1/n)·Σᵢ |i − (n−1)/2|,
 * the mean distance from the middle, which normalises the spread for the scale's length.
 */
export function scoreConfidence(probabilities: number[]): number {
  const n = probabilities.length;
  const k = argmax(probabilities);
  let spread = 0;
  let meanDistance = 0;
  for (let i = 0; i < n; i++) {
    spread += probabilities[i] * Math.abs(i - k);
    meanDistance += Math.abs(i - (n - 1) / 2) / n;
  }
  return clamp01(1 - spread / meanDistance);
}

/** Index of the largest value; the first one on ties. */
export function argmax(values: number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
