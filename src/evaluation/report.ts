import { formatTable } from "../views/text.js";
import type { SummaryByType } from "./metrics.js";
import type { QualityFigures } from "./quality.js";
import type { SensitivitySummary } from "./robustness.js";
import type { CalibrateResult, CompactByType } from "./run-calibrate.js";
import type { TemperatureFit } from "./temperature.js";
import { bucketKey } from "../judgment/calibration.js";
import type { Temperatures } from "../judgment/answers.js";
import type { EvalResult } from "./run-eval.js";

/**
 * The eval and calibrate results as text for the terminal. The rows are shared with the HTML
 * reports (eval-report.ts, calibrate-report.ts), so both show the same figures.
 */

export const GROUPS = ["overall", "choice", "noul", "score"] as const;
export const n4 = (x: number) => x.toFixed(4);
export const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
/** "1 request", "90 requests". */
export const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

export interface EvalContext {
  dataset: string;
  url: string;
}

export interface Rows {
  headers: string[];
  rows: string[][];
}

/** One row per group present: the headline metrics and the coverage at each error rate. */
export function metricsRows(metrics: SummaryByType): Rows {
  const rates = metrics.overall?.coverage.map((c) => c.maxErrorRate) ?? [];
  const rows = GROUPS.flatMap((group) => {
    const m = metrics[group];
    if (!m) return [];
    const coverage = m.coverage.map((c) => pct(c.coverage));
    const levelError = m.meanLevelError === undefined ? "-" : n4(m.meanLevelError);
    return [[group, String(m.answers), n4(m.accuracy), n4(m.brier), n4(m.nll), n4(m.ece), ...coverage, levelError]];
  });
  const coverageHeaders = rates.map((r) => `Coverage err≤${+(100 * r).toFixed(3)}%`);
  return { headers: ["Type", "Answers", "Accuracy", "Brier", "NLL", "ECE", ...coverageHeaders, "Level MAE"], rows };
}

const metricsTable = (metrics: SummaryByType) => upperTable(metricsRows(metrics));
const upperTable = ({ headers, rows }: Rows) =>
  formatTable(
    headers.map((h) => h.toUpperCase()),
    rows,
  );

/** The checks that ran, each with its sensitivity summary per group. */
export function robustnessChecks(result: EvalResult): [string, Partial<Record<(typeof GROUPS)[number], SensitivitySummary>>][] {
  const { optionOrder, questionIds, interference } = result.robustness;
  const checks: ReturnType<typeof robustnessChecks> = [];
  if (optionOrder) checks.push([`option order (${optionOrder.mode})`, optionOrder]);
  if (questionIds) checks.push(["question ids", questionIds]);
  if (interference) checks.push(["alone vs batch", interference]);
  return checks;
}

export const ROBUSTNESS_HEADERS = ["Check", "Compared", "Top changed", "Mean |Δp|", "Max |Δp|"];
export const sensitivityCells = (s: SensitivitySummary | undefined) =>
  s ? [String(s.compared), pct(s.changedRate), n4(s.meanAbsChange), n4(s.maxAbsChange)] : ["0", "-", "-", "-"];

/** The checks that ran, one row each (all answers); undefined when none ran. */
function robustnessTable(result: EvalResult): string | undefined {
  const checks = robustnessChecks(result);
  if (checks.length === 0) return undefined;
  return upperTable({ headers: ROBUSTNESS_HEADERS, rows: checks.map(([name, byType]) => [name, ...sensitivityCells(byType.overall)]) });
}

export function formatEvalText(result: EvalResult, context: EvalContext, written: string[]): string {
  const lines = [
    `Evaluated ${plural(result.items, "item")} (${plural(result.metrics.overall?.answers ?? 0, "answer")}) from ${context.dataset} ` +
      `against ${context.url}, model ${result.models.join(", ")}${result.debias ? `, x_debias ${result.debias}` : ""}: ` +
      `${plural(result.usage.requests, "request")}, ${plural(result.usage.input_tokens, "input token")}.`,
    "",
    metricsTable(result.metrics),
  ];
  lines.push("", qualityTable(result));
  const robustness = robustnessTable(result);
  if (robustness) lines.push("", robustness);
  if (result.models.length > 1) lines.push("", `Warning: the server answered as several models (${result.models.join(", ")}).`);
  lines.push("", `Wrote ${written.join(", ")}`);
  return lines.join("\n");
}

export const QUALITY_HEADERS = ["Accuracy", "Macro-F1", "ECE(10)", "Brier", "NLL"];
export const qualityCells = (q: QualityFigures) => [n4(q.accuracy), n4(q.macroF1), n4(q.ece), n4(q.brier), n4(q.nll)];

/** Each group's quality figures (summary.json's `quality`): the judge's, the prior baseline's and the k-fold scaled judge's. */
export function qualityFigures(result: EvalResult): { group: (typeof GROUPS)[number]; judge: string[]; prior: string[]; kFold: string[] }[] {
  return GROUPS.flatMap((group) => {
    const row = result.quality.byType[group];
    return row ? [{ group, judge: qualityCells(row.model), prior: qualityCells(row.prior), kFold: qualityCells(row.kFold) }] : [];
  });
}

export const kFoldName = (result: EvalResult) => `${result.quality.folds}-fold T`;

/** The judge against the prior baseline and after k-fold temperature scaling (ECE: top label, 10 bins). */
function qualityTable(result: EvalResult): string {
  const rows = qualityFigures(result).flatMap(({ group, judge, prior, kFold }) => [
    [group, "judge", ...judge],
    ["", "prior", ...prior],
    ["", kFoldName(result), ...kFold],
  ]);
  return upperTable({ headers: ["Type", "Answers of", ...QUALITY_HEADERS], rows });
}

export function formatCalibrateText(result: CalibrateResult, profile: { path: string; written: boolean }): string {
  const { split, temperatures } = result;
  const t = (x: number) => x.toFixed(3);
  const buckets = (["choice", "score"] as const).flatMap((type) =>
    (temperatures.buckets?.[type] ?? []).map((b) => `${type} with ${bucketKey(b)} labels ${t(b.temperature)}`),
  );
  const heldOut = result.folds
    ? `${plural(split.heldOutAnswers, "answer")} (${plural(split.heldOutItems, "item")}), ${result.folds.k}-fold cross-validated: each fold scored with temperatures fitted on the other ${result.folds.k - 1}`
    : split.inSample
      ? `the ${plural(split.fitAnswers, "answer")} it was fitted on (no held-out split)`
      : `${plural(split.heldOutAnswers, "held-out answer")} (${plural(split.heldOutItems, "item")})`;
  return [
    `Fitted on ${plural(split.fitAnswers, "answer")} (${plural(split.fitItems, "item")}) of model ${result.model}${result.debias ? `, x_debias ${result.debias}` : ""}.`,
    `Temperatures: choice ${t(temperatures.choice)}, noul ${t(temperatures.noul)}, score ${t(temperatures.score)}` +
      (buckets.length > 0 ? `; buckets: ${buckets.join(", ")}` : ""),
    ...(result.folds ? [`Per fold (fitted on the other folds): ${foldRanges(result.folds.temperatures)}`] : []),
    "",
    `Calibration on ${heldOut}:`,
    calibrationTable(result.heldOut),
    "",
    ...boundNotes(result),
    ...result.keptAtOne.map(
      (k) =>
        `Kept T = 1 for ${k.type}: the fitted T = ${k.fitted.toFixed(3)} raised the ${result.folds ? "cross-validated" : "held-out"} NLL from ${k.nllAtOne.toFixed(4)} to ` +
        `${k.nllAtFitted.toFixed(4)}, so it would make answers worse; more data would fit it better.`,
    ),
    profile.written ? `Wrote ${profile.path} (entry "${result.model}").` : `Not written (--dry-run): ${profile.path}.`,
  ].join("\n");
}

/** Each type's temperature over the folds: one value, or the range "min–max". */
export function foldRanges(folds: readonly Temperatures[]): string {
  return (["choice", "noul", "score"] as const)
    .map((type) => {
      const values = folds.map((f) => f[type]);
      const [min, max] = [Math.min(...values), Math.max(...values)];
      return `${type} ${min === max ? min.toFixed(3) : `${min.toFixed(3)}–${max.toFixed(3)}`}`;
    })
    .join(", ");
}

/** A fit that stopped at the search's edge is worth a word: the data could not pin it down. */
export function boundNotes(result: CalibrateResult): string[] {
  const bucketFits = (["choice", "score"] as const).flatMap((type) =>
    (result.fit.buckets[type] ?? []).map((b): [string, TemperatureFit] => [`${type} ${bucketKey(b)}-label`, b]),
  );
  const fits: [string, TemperatureFit | undefined][] = [...Object.entries(result.fit.types), ...bucketFits];
  return fits.flatMap(([name, fit]) => {
    if (!fit?.atBound) return [];
    const why = fit.temperature < 1 ? "every top label was right, so sharper always looked better" : "the answers carry no information about the gold labels";
    return [`Note: the ${name} temperature stopped at the edge of 0.01–100 (${why}); more or harder data would fit it better.`];
  });
}

function calibrationTable(heldOut: CalibrateResult["heldOut"]): string {
  const columns: [string, CompactByType | undefined][] = [
    ["uncalibrated", heldOut.uncalibrated],
    ["current profile", heldOut.current],
    ["calibrated", heldOut.calibrated],
  ];
  const present = columns.filter(([, v]) => v !== undefined) as [string, CompactByType][];
  const rows = GROUPS.flatMap((group) => {
    if (!heldOut.uncalibrated[group]) return [];
    const cells = present.flatMap(([, v]) => [n4(v[group]!.ece), n4(v[group]!.nll)]);
    return [[group, String(heldOut.uncalibrated[group]!.answers), ...cells]];
  });
  return formatTable(["TYPE", "ANSWERS", ...present.flatMap(([name]) => [`ECE ${name}`, `NLL ${name}`])], rows);
}
