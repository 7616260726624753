import { applyLevel1, fitLevel1 } from "./level1.js";
import { crossValidateLevel2, fitLevel2, L2_GRID, type Level2CrossValidation, level2Omission } from "./level2.js";
import { metricsOf, reliabilityOf } from "./metrics.js";
import { softmax } from "./optimise.js";
import { assignFolds, foldCount, prepareRows } from "./rows.js";
import type { FitOptions, Head, HeadKind, LabelledRow, Metrics, PreparedRow, QuestionReport } from "./types.js";

export const DEFAULT_FOLDS = 5;

/**
 * Pseudo-counts added to the prior's label counts, spread evenly over the classes: a class
 * unseen in the training folds is unlikely, not impossible. One in all (½ each for a yes/no,
 * Krichevsky–Trofimov's choice) rather than ½ per class, which would swamp a 255-option choice
 * with a few dozen labels.
 */
export const PRIOR_SMOOTHING = 1;

type Scored = "prior" | HeadKind;

/** What cross-validation saw: each row's fold, and each candidate's prediction for it from a fit that never saw the row. */
export interface CrossValidation {
  folds: number;
  /** Fold of each row, in the canonical order of prepareRows. */
  assignment: number[];
  /** Held-out probabilities per candidate, per row (canonical order); level2 absent when not fitted. */
  heldOut: Partial<Record<Scored, number[][]>>;
  /** The same held-out predictions scored fold by fold. */
  perFold: Partial<Record<Scored, Metrics[]>>;
  /** Level 2's λ per outer fold and for the final head; absent when not fitted. */
  level2?: Omit<Level2CrossValidation, "heldOut">;
}

function priorOf(rows: readonly PreparedRow[], classes: number): number[] {
  const counts = new Array<number>(classes).fill(PRIOR_SMOOTHING / classes);
  for (const row of rows) for (let c = 0; c < classes; c++) counts[c] += row.gold[c];
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.map((count) => count / total);
}

/**
 * Cross-validates every candidate over the given fold assignment (exposed so a test can hold
 * the folds fixed while it changes labels). A row's held-out prediction comes from fits on the
 * other folds only: the prior's frequencies, level 1's parameters, level 2's standardisation,
 * weights and λ (its inner CV runs inside those training rows). With one fold there is nothing
 * to train on: the prior is uniform and the heads are not scored (they cannot be chosen).
 */
export function crossValidate(
  rows: readonly PreparedRow[],
  classes: number,
  withLevel2: boolean,
  assignment: readonly number[],
  l2Grid: readonly number[],
): CrossValidation {
  const folds = assignment.reduce((max, f) => Math.max(max, f + 1), 1);
  const kinds: Scored[] = folds < 2 ? ["prior", "plain"] : withLevel2 ? ["prior", "plain", "level1", "level2"] : ["prior", "plain", "level1"];
  const heldOut: Partial<Record<Scored, number[][]>> = {};
  for (const kind of kinds) heldOut[kind] = new Array(rows.length);
  for (let f = 0; f < folds; f++) {
    const train = rows.filter((_, i) => assignment[i] !== f);
    const level1 = folds < 2 ? undefined : fitLevel1(train, classes);
    const prior = priorOf(train, classes);
    rows.forEach((row, i) => {
      if (assignment[i] !== f) return;
      heldOut.prior![i] = prior.slice();
      heldOut.plain![i] = softmax(row.logProbs);
      if (level1) heldOut.level1![i] = applyLevel1(level1, row.logProbs);
    });
  }
  const level2 = heldOut.level2 ? crossValidateLevel2(rows, classes, assignment, l2Grid) : undefined;
  if (level2) heldOut.level2 = level2.heldOut;
  const perFold: Partial<Record<Scored, Metrics[]>> = {};
  for (const kind of kinds) {
    perFold[kind] = Array.from({ length: folds }, (_, f) => {
      const members = rows.map((_, i) => i).filter((i) => assignment[i] === f);
      return metricsOf(
        members.map((i) => heldOut[kind]![i]),
        members.map((i) => rows[i].gold),
      );
    });
  }
  return {
    folds,
    assignment: [...assignment],
    heldOut,
    perFold,
    ...(level2 ? { level2: { l2PerFold: level2.l2PerFold, l2: level2.l2 } } : {}),
  };
}

/**
 * Fits the head of one question: validates and canonicalises the rows, cross-validates the
 * candidates on stratified folds, chooses, and refits the chosen head on all rows.
 *
 * The choice: the candidate with the lowest pooled held-out NLL, but the plain readout is kept
 * unless a head beats plain's NLL, so a task never makes answers worse. The prior is reported
 * as the baseline to beat, never chosen (it ignores the question's input).
 *
 * Folds: `folds` (default 5), fewer when there are fewer rows (leave-one-out below 5 rows); a
 * single row gives one fold, the plain readout and a report of the readout on that row.
 */
export function fitQuestionHead(rowsIn: readonly LabelledRow[], options: FitOptions): { head: Head; report: QuestionReport; crossValidation: CrossValidation } {
  const { rows, classes, withFeatures } = prepareRows(rowsIn);
  const l2Grid = options.l2Grid ?? L2_GRID;
  if (l2Grid.length === 0 || l2Grid.some((l2) => !(l2 > 0) || !Number.isFinite(l2))) throw new RangeError("l2Grid must be positive finite numbers");
  const folds = foldCount(rows.length, options.folds ?? DEFAULT_FOLDS);
  const assignment = assignFolds(
    rows.map((row) => row.label),
    folds,
    options.seed,
  );
  const may = (kind: "level1" | "level2") => options.candidates?.includes(kind) ?? true;
  const omitted = may("level2") ? level2Omission(rows, classes, withFeatures, folds) : "not among the heads asked for";
  const cv = crossValidate(rows, classes, omitted === undefined, assignment, l2Grid);
  const golds = rows.map((row) => row.gold);
  const score = (kind: Scored) => (cv.heldOut[kind] ? metricsOf(cv.heldOut[kind]!, golds) : undefined);
  const prior = score("prior")!;
  const plain = score("plain")!;
  // With one fold level 1 was not cross-validated: report it as the readout it would start from.
  const level1 = score("level1") ?? plain;
  const level2 = score("level2");
  let chosen: HeadKind = "plain";
  if (may("level1") && cv.heldOut.level1 && level1.nll < plain.nll) chosen = "level1";
  if (may("level2") && level2 && level2.nll < (chosen === "level1" ? level1.nll : plain.nll)) chosen = "level2";
  const perClass = new Array<number>(classes).fill(0);
  for (const row of rows) perClass[row.label]++;
  const report: QuestionReport = {
    classes,
    examples: rows.length,
    perClass,
    folds: cv.folds,
    prior,
    plain,
    level1,
    ...(level2 ? { level2 } : { level2Omitted: omitted }),
    chosen,
    reliability: { bins: reliabilityOf(cv.heldOut[chosen]!, golds) },
  };
  let head: Head = { kind: "plain" };
  if (chosen === "level1") head = { kind: "level1", ...fitLevel1(rows, classes) };
  if (chosen === "level2") {
    head = { kind: "level2", ...fitLevel2(rows, classes, cv.level2!.l2) };
    report.l2 = head.l2;
  }
  return { head, report, crossValidation: cv };
}
