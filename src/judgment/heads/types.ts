/** The shapes src/judgment/heads/index.ts documents; kept apart so that every module of the folder can import them without a cycle. */

/**
 * One labelled example of one question. K = number of classes, in the task's order: choice
 * options in the task's key order, noul [true, false] (index 0 true), score levels lowest first.
 */
export interface LabelledRow {
  /** The plain readout's log P of each class (K values; may be -Infinity). */
  logProbs: readonly number[];
  /** The model's hidden state at the answer position (D values); absent when the engine cannot give it. */
  features?: Float32Array | readonly number[];
  /** The gold class index, or a soft distribution over the K classes (sums to 1). */
  gold: number | readonly number[];
}

export interface FitOptions {
  /** Seeds the fold shuffles; the same seed and the same rows (in any order) give the same head. */
  seed: number;
  /** Outer (and inner) cross-validation folds; default 5, fewer when there are fewer rows. */
  folds?: number;
  /** Level 2's candidate L2 strengths (see level2.ts for the scale); default L2_GRID. */
  l2Grid?: readonly number[];
  /** The heads that may be chosen over the readout (default both); without level 2 the report leaves it out too. */
  candidates?: readonly ("level1" | "level2")[];
}

export type Head =
  /** Keep the readout: softmax of the log-probabilities. */
  | { kind: "plain" }
  /** softmax_k(scale_k · logp_k + bias_k): a scale and a bias per class. */
  | { kind: "level1"; scale: number[]; bias: number[] }
  /** softmax_k(weights_k · (x − mean) / std + bias_k): K rows of D weights, K = 2 included. */
  | { kind: "level2"; mean: number[]; std: number[]; weights: number[][]; bias: number[]; l2: number };

export type HeadKind = Head["kind"];

export interface Metrics {
  n: number;
  accuracy: number;
  macroF1: number;
  nll: number;
  ece: number;
  brier: number;
}

export interface ReliabilityBin {
  lower: number;
  upper: number;
  count: number;
  /** Mean top-class probability of the rows in the bin (0 when empty). */
  confidence: number;
  /** Mean gold probability of the top class of the rows in the bin (0 when empty). */
  accuracy: number;
}

export interface QuestionReport {
  classes: number;
  examples: number;
  /** Examples per class (argmax of a soft gold). */
  perClass: number[];
  /** The folds actually used (fewer than asked when there are fewer rows; 1 = no cross-validation). */
  folds: number;
  /** All from held-out folds only. */
  prior: Metrics;
  plain: Metrics;
  level1: Metrics;
  level2?: Metrics;
  /** Why level 2 was not fitted, when it was not (no hidden states, too few examples, too large). */
  level2Omitted?: string;
  chosen: HeadKind;
  /** Of the chosen head, held-out. */
  reliability: { bins: ReliabilityBin[] };
  /** Level 2's L2 strength for the final head, chosen by inner cross-validation on all rows. */
  l2?: number;
}

/** A row after validation: log-probabilities clipped, gold as a distribution, features as float64. */
export interface PreparedRow {
  logProbs: Float64Array;
  features?: Float64Array;
  gold: Float64Array;
  /** argmax of gold, the first on ties: the class the folds stratify on. */
  label: number;
}
