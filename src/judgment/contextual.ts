/**
 * Contextual calibration (Zhao, Wallace, Feng, Klein, Singh, "Calibrate Before Use", ICML 2021):
 * a model's answer to a question carries a bias of its own (a favourite letter, a habit of saying
 * "No"), visible in how it answers the same question about a content-free state. Dividing the
 * answer's label probabilities by that content-free answer, and renormalising, removes it.
 *
 * The content-free answer depends only on the question as shown, so an answer stays deterministic
 * and independent of every other request.
 */

/** The content-free states, as in the paper ("N/A" and the empty input); their answers are averaged. */
export const CONTENT_FREE_STATES = ["N/A", ""] as const;

/** Mean label distribution over the content-free answers (each a vector of label log-probabilities). */
export function contentFreeDistribution(answers: readonly number[][]): number[] {
  const mean = answers[0].map(() => 0);
  for (const logProbs of answers) softmax(logProbs).forEach((p, k) => (mean[k] += p / answers.length));
  return mean;
}

/** log p − log p_cf per label: the corrected label log-probabilities (up to a shared constant). */
export function contextuallyCalibrated(logProbs: readonly number[], contentFree: readonly number[]): number[] {
  return logProbs.map((lp, k) => lp - Math.log(Math.max(contentFree[k], Number.MIN_VALUE)));
}

function softmax(logProbs: readonly number[]): number[] {
  const max = Math.max(...logProbs);
  if (max === -Infinity) return logProbs.map(() => 1 / logProbs.length);
  const weights = logProbs.map((lp) => Math.exp(lp - max));
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}
