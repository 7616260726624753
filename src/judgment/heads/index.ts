/**
 * Task heads: the pure math of issue 34. A task's labelled examples, read through the model,
 * become per question a small head fitted on the tenant's data, kept only when it beats the
 * plain readout on held-out folds. No I/O; the service stores heads as plain JSON.
 *
 *   fitQuestionHead(rows: readonly LabelledRow[], options: FitOptions): { head: Head; report: QuestionReport; crossValidation }
 *   applyHead(head: Head, logProbs: readonly number[], features?): number[]   — K probabilities
 *   confidence(probabilities: readonly number[]): number                      — the top probability
 *
 * Classes: K per question, in the task's order (choice keys as the task lists them, noul
 * [true, false], score levels lowest first). Heads:
 * - plain: softmax of the readout's log-probabilities (what the service answers without a task);
 * - level1: softmax(scale_k·logp_k + bias_k), a scale and bias per class (level1.ts);
 * - level2: L2-regularised multinomial logistic on standardised hidden states, λ by inner
 *   cross-validation with the one-standard-error rule (level2.ts).
 * The report (report.ts) scores the prior, the readout and each head on held-out folds only.
 * Deterministic: the rows are put in a canonical order first (rows.ts), folds come from a
 * seeded generator (random.ts) and the optimiser is deterministic L-BFGS (optimise.ts), so the
 * same rows in any order with the same seed give the same head. docs/concepts/task-heads.md
 * explains it for users.
 */
import { applyLevel1 } from "./level1.js";
import { applyLevel2 } from "./level2.js";
import { softmax } from "./optimise.js";
import { clipLogProbs } from "./rows.js";
import type { Head } from "./types.js";

export { chooseL2, L2_GRID, LEVEL2_WORK_LIMIT, level2Omission } from "./level2.js";
export { BIAS_L2 } from "./logistic.js";
export { LEVEL1_L2 } from "./level1.js";
export { metricsOf, NLL_FLOOR, RELIABILITY_BINS, reliabilityOf } from "./metrics.js";
export { type CrossValidation, crossValidate, DEFAULT_FOLDS, fitQuestionHead, PRIOR_SMOOTHING } from "./report.js";
export { assignFolds, foldCount, LOG_PROB_FLOOR, prepareRows } from "./rows.js";
export type { FitOptions, Head, HeadKind, LabelledRow, Metrics, QuestionReport, ReliabilityBin } from "./types.js";

/** The head's probabilities for one answer (K values, summing to 1). Level 2 needs the features it was fitted on. */
export function applyHead(head: Head, logProbs: readonly number[], features?: Float32Array | readonly number[]): number[] {
  switch (head.kind) {
    case "plain":
      return softmax(clipLogProbs(logProbs));
    case "level1":
      if (logProbs.length !== head.scale.length) throw new RangeError(`the head has ${head.scale.length} classes, got ${logProbs.length} log-probabilities`);
      return applyLevel1(head, clipLogProbs(logProbs));
    case "level2":
      if (!features) throw new RangeError("a level 2 head needs the hidden-state features");
      if (logProbs.length !== head.bias.length) throw new RangeError(`the head has ${head.bias.length} classes, got ${logProbs.length} log-probabilities`);
      return applyLevel2(head, features);
  }
}

/** The abstention helper: the top probability, which the service compares with the question's confidence floor. */
export function confidence(probabilities: readonly number[]): number {
  return probabilities.reduce((max, p) => Math.max(max, p), 0);
}
