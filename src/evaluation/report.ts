import { formatTable } from "../cli/format.js";
import type { MetricSummary, SummaryByType } from "./metrics.js";
import { escapeXml, reliabilitySvg } from "./reliability.js";
import type { SensitivitySummary } from "./robustness.js";
import type { CalibrateResult, CompactByType } from "./run-calibrate.js";
import type { TemperatureFit } from "./temperature.js";
import { bucketKey } from "../judgment/calibration.js";
import type { EvalResult } from "./run-eval.js";

/** Human-readable renderings of the eval and calibrate results: terminal text and the HTML report. */

const GROUPS = ["overall", "choice", "noul", "score"] as const;
const n4 = (x: number) => x.toFixed(4);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export interface EvalContext {
  dataset: string;
  url: string;
}

function metricsTable(metrics: SummaryByType): string {
  const rates = metrics.overall?.coverage.map((c) => c.maxErrorRate) ?? [];
  const rows = GROUPS.flatMap((group) => {
    const m = metrics[group];
    if (!m) return [];
    const coverage = m.coverage.map((c) => pct(c.coverage));
    const levelError = m.meanLevelError === undefined ? "-" : n4(m.meanLevelError);
    return [[group, String(m.answers), n4(m.accuracy), n4(m.brier), n4(m.nll), n4(m.ece), ...coverage, levelError]];
  });
  const coverageHeaders = rates.map((r) => `COVERAGE ERR≤${+(100 * r).toFixed(3)}%`);
  return formatTable(["TYPE", "ANSWERS", "ACCURACY", "BRIER", "NLL", "ECE", ...coverageHeaders, "LEVEL MAE"], rows);
}

/** The checks that ran, one row each; undefined when none ran. */
function robustnessTable(result: EvalResult): string | undefined {
  const { optionOrder, questionIds, interference } = result.robustness;
  const rows: [string, SensitivitySummary | undefined][] = [];
  if (optionOrder) rows.push([`option order (${optionOrder.mode})`, optionOrder.overall]);
  if (questionIds) rows.push(["question ids", questionIds.overall]);
  if (interference) rows.push(["alone vs batch", interference.overall]);
  if (rows.length === 0) return undefined;
  return formatTable(
    ["CHECK", "COMPARED", "TOP CHANGED", "MEAN |ΔP|", "MAX |ΔP|"],
    rows.map(([name, s]) => (s ? [name, String(s.compared), pct(s.changedRate), n4(s.meanAbsChange), n4(s.maxAbsChange)] : [name, "0", "-", "-", "-"])),
  );
}

export function formatEvalText(result: EvalResult, context: EvalContext, written: string[]): string {
  const lines = [
    `Evaluated ${result.items} items (${result.metrics.overall?.answers ?? 0} answers) from ${context.dataset} ` +
      `against ${context.url}, model ${result.models.join(", ")}: ${result.usage.requests} requests, ${result.usage.input_tokens} input tokens.`,
    "",
    metricsTable(result.metrics),
  ];
  const robustness = robustnessTable(result);
  if (robustness) lines.push("", robustness);
  if (result.models.length > 1) lines.push("", `Warning: the server answered as several models (${result.models.join(", ")}).`);
  lines.push("", `Wrote ${written.join(", ")}`);
  return lines.join("\n");
}

export function formatCalibrateText(result: CalibrateResult, profile: { path: string; written: boolean }): string {
  const { split, temperatures } = result;
  const t = (x: number) => x.toFixed(3);
  const buckets = (["choice", "score"] as const).flatMap((type) =>
    (temperatures.buckets?.[type] ?? []).map((b) => `${type} with ${bucketKey(b)} labels ${t(b.temperature)}`),
  );
  const heldOut = split.inSample
    ? `the ${split.fitAnswers} answers it was fitted on (no held-out split)`
    : `${split.heldOutAnswers} held-out answers (${split.heldOutItems} items)`;
  return [
    `Fitted on ${split.fitAnswers} answers (${split.fitItems} items) of model ${result.model}.`,
    `Temperatures: choice ${t(temperatures.choice)}, noul ${t(temperatures.noul)}, score ${t(temperatures.score)}` +
      (buckets.length > 0 ? `; buckets: ${buckets.join(", ")}` : ""),
    "",
    `Calibration on ${heldOut}:`,
    calibrationTable(result.heldOut),
    "",
    ...boundNotes(result),
    profile.written ? `Wrote ${profile.path} (entry "${result.model}").` : `Not written (--dry-run): ${profile.path}.`,
  ].join("\n");
}

/** A fit that stopped at the search's edge is worth a word: the data could not pin it down. */
function boundNotes(result: CalibrateResult): string[] {
  const bucketFits = (["choice", "score"] as const).flatMap((type) =>
    (result.fit.buckets[type] ?? []).map((b): [string, TemperatureFit] => [`${type} ${bucketKey(b)}-label`, b]),
  );
  const fits: [string, TemperatureFit | undefined][] = [...Object.entries(result.fit.types), ...bucketFits];
  return fits.flatMap(([name, fit]) => {
    if (!fit?.atBound) return [];
    const why = fit.temperature < 1
      ? "every top label was right, so sharper always looked better"
      : "the answers carry no information about the gold labels";
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

/** The HTML report: metric tables, robustness table and a reliability diagram per type. */
export function evalReportHtml(result: EvalResult, context: EvalContext): string {
  const diagrams = GROUPS.flatMap((group) => {
    const m: MetricSummary | undefined = result.metrics[group];
    return m ? [`<figure>${reliabilitySvg(`${group} (${m.answers} answers)`, m.bins, m.ece)}</figure>`] : [];
  });
  const robustness = robustnessTable(result);
  const esc = (s: string) => escapeXml(s);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>judge eval: ${esc(context.dataset)}</title>
<style>
body{font-family:sans-serif;margin:2em;max-width:80em}
pre{background:#f6f6f6;padding:1em;overflow:auto}
figure{display:inline-block;margin:0 1em 1em 0}
</style>
</head><body>
<h1>judge eval</h1>
<p>Dataset <code>${esc(context.dataset)}</code> · server <code>${esc(context.url)}</code> ·
model <code>${esc(result.models.join(", "))}</code> · ${result.items} items · ${result.usage.requests} requests</p>
<h2>Metrics</h2>
<pre>${esc(metricsTable(result.metrics))}</pre>
<p>Accuracy: top label vs gold label. Brier: Σ (p − gold)² over labels. NLL: −Σ gold·log p.
ECE: 15 equal-width bins on the top probability. Coverage@X: share of answers, most confident first,
whose error rate stays ≤ X.</p>
${robustness ? `<h2>Robustness</h2>\n<pre>${esc(robustness)}</pre>` : ""}
<h2>Reliability</h2>
<p>Blue: share of answers right in each confidence bin; red: gap to the bin's mean confidence;
dashed: perfect calibration; grey strip: answers per bin. Hover a bar for its numbers.</p>
${diagrams.join("\n")}
</body></html>
`;
}
