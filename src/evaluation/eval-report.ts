import type { Confusion, ConfusionTable } from "./confusion.js";
import { esc, figure, legend, page, table, type Cell } from "./html.js";
import type { MetricSummary } from "./metrics.js";
import { diagramSize, reliabilitySvg } from "./reliability.js";
import {
  GROUPS,
  kFoldName,
  metricsRows,
  n4,
  pct,
  plural,
  QUALITY_HEADERS,
  qualityFigures,
  ROBUSTNESS_HEADERS,
  robustnessChecks,
  sensitivityCells,
  type EvalContext,
} from "./report.js";
import type { EvalResult } from "./run-eval.js";

/**
 * `judge eval`'s report.html: the metrics, coverage, quality (against the prior, and k-fold
 * calibrated), robustness and confusion tables, and a reliability diagram per type with its bins
 * as a table. Every figure comes from the result
 * that summary.json holds, rendered by the same row builders as the terminal text.
 */

export function evalReportHtml(result: EvalResult, context: EvalContext): string {
  const answers = result.metrics.overall?.answers ?? 0;
  const body = [
    `<h1>judge eval</h1>`,
    `<p>Dataset <code>${esc(context.dataset)}</code> · server <code>${esc(context.url)}</code> · model <code>${esc(result.models.join(", "))}</code>` +
      `${result.debias ? ` · x_debias <code>${esc(result.debias)}</code>` : ""}<br>` +
      `${plural(result.items, "item")}, ${plural(answers, "answer")} · ${plural(result.usage.requests, "request")}, ${plural(result.usage.input_tokens, "input token")}</p>`,
    result.models.length > 1 ? `<p class="note">Warning: the server answered as several models; the figures mix them.</p>` : "",
    `<h2>Metrics</h2>`,
    metricsSection(result),
    `<h2>Against the prior, and calibrated</h2>`,
    qualitySection(result),
    `<h2>Robustness</h2>`,
    robustnessSection(result),
    `<h2>Choice questions: confusion</h2>`,
    confusionSection(result.confusion),
    `<h2>Reliability</h2>`,
    reliabilitySection(result),
  ];
  return page(`judge eval: ${context.dataset}`, body.filter(Boolean).join("\n"));
}

/** The single-panel diagram of one group, as in report.html and reliability.svg. */
export function evalDiagram(title: string, model: string, m: MetricSummary): string {
  return reliabilitySvg(title, [{ name: `model ${model}`, bins: m.bins, ece: m.ece }]);
}

function metricsSection(result: EvalResult): string {
  const { headers, rows } = metricsRows(result.metrics);
  const coverage = GROUPS.flatMap((group) =>
    (result.metrics[group]?.coverage ?? []).map((c) => [
      group,
      pct(c.maxErrorRate),
      pct(c.coverage),
      String(c.answers),
      c.threshold === null ? "-" : n4(c.threshold),
      c.errorRate === null ? "-" : pct(c.errorRate),
    ]),
  );
  return [
    table("metrics", "Quality of the answers, overall and per question type", headers, rows),
    `<p>Accuracy: the most likely label is the gold label. Brier: Σ (p − gold)² over the labels. NLL: −Σ gold·log p.
ECE: the gap between confidence and share right, over 15 equal-width bins of the top probability. Coverage: the share of
answers one can automate, most confident first, while their error rate stays within the allowed rate. Level MAE (score):
the error of the expected level. Lower is better for all but accuracy and coverage.</p>`,
    coverage.length === 0
      ? ""
      : table(
          "coverage",
          "Where to draw the line: automate answers whose confidence is at least the threshold",
          ["Type", "Allowed error rate", "Coverage", "Answers automated", "Threshold", "Error rate among them"],
          coverage,
        ),
  ].join("\n");
}

/**
 * The terminal's quality table, each figure with the prior's beside it: the judge as it answered,
 * then temperature-scaled out of fold, each row against the same prior.
 */
function qualitySection(result: EvalResult): string {
  const { folds, seed } = result.quality;
  const scaled = kFoldName(result);
  const beside = (figures: string[], prior: string[]) => figures.flatMap((figure, i) => [figure, prior[i]]);
  const rows = qualityFigures(result).flatMap(({ group, judge, prior, kFold }) => [
    [group, "judge", ...beside(judge, prior)],
    [group, scaled, ...beside(kFold, prior)],
  ]);
  const headers = ["Type", "Answers of", ...QUALITY_HEADERS.flatMap((name) => [name, "prior"])];
  return [
    table("quality", "The judge beside the prior baseline, as it answered and calibrated out of fold", headers, rows),
    `<p>Prior: a judge that answers every question with its labels' frequencies in this dataset (knowing them favours it
slightly); a judge that does not beat it has learnt nothing from the states. ${esc(scaled)}: every answer
temperature-scaled per question type with temperatures fitted on the other folds only (${folds} folds dealt by item, seed
${seed}): what calibrating (<code>judge calibrate</code>) may be expected to gain on answers it was not fitted on. Scaling
moves no top label, so accuracy and macro-F1 stay as they are. ECE(10): the top label's, over 10 equal-width bins (the metrics table's ECE uses 15). Lower is better for
all but accuracy and macro-F1. summary.json holds the same figures under <code>quality</code>, with each fold's temperatures.</p>`,
  ].join("\n");
}

function robustnessSection(result: EvalResult): string {
  const checks = robustnessChecks(result);
  if (checks.length === 0) {
    return `<p>No robustness check ran. <code>--option-order shift|shuffle</code>, <code>--question-ids</code> and <code>--interference</code> ask the questions again in ways that should not change the answers.</p>`;
  }
  const rows = checks.flatMap(([name, byType]) => GROUPS.filter((g) => byType[g]).map((g) => [name, g, ...sensitivityCells(byType[g])]));
  const [check, ...rest] = ROBUSTNESS_HEADERS;
  return [
    table(
      "robustness",
      "The same questions asked another way: how often the most likely label changed, and by how much the probabilities moved",
      [check, "Type", ...rest],
      rows,
    ),
    `<p>A sound judge changes nothing: every figure would be 0. Options are matched by key, so a reordered question is compared label by label.</p>`,
  ].join("\n");
}

function confusionSection(confusion: Confusion): string {
  if (confusion.tables.length === 0 && confusion.omitted.tables === 0) return `<p>The dataset has no choice questions.</p>`;
  const tables = confusion.tables.map((t, i) => confusionTable(t, `confusion-${i + 1}`));
  const omitted =
    confusion.omitted.tables === 0
      ? ""
      : `<p class="note">${plural(confusion.omitted.tables, "more option set")} (${plural(confusion.omitted.answers, "answer")}) ${confusion.omitted.tables === 1 ? "is" : "are"} not shown: too many options for a table, or beyond the first tables; predictions.jsonl has every answer.</p>`;
  return [
    `<p>Rows: the gold label (its most likely label when soft); columns: the label answered. One table per set of options.</p>`,
    legend(["right", "wrong"]),
    ...tables,
    omitted,
  ].join("\n");
}

function confusionTable(t: ConfusionTable, id: string): string {
  const right = t.counts.reduce((sum, row, i) => sum + row[i], 0);
  const rows: Cell[][] = t.labels.map((label, i) => [
    label,
    ...t.counts[i].map((n, j): Cell => ({ text: String(n), colour: n === 0 ? undefined : i === j ? "right" : "wrong" })),
    String(t.counts[i].reduce((a, b) => a + b, 0)),
  ]);
  rows.push(["total", ...t.labels.map((_, j) => String(t.counts.reduce((sum, row) => sum + row[j], 0))), String(t.answers)]);
  // Many questions may share one option set; the caption names a few.
  const named = t.questions.length <= 6 ? t.questions.join(", ") : `${t.questions.slice(0, 5).join(", ")} and ${t.questions.length - 5} more`;
  const caption = `${t.questions.length === 1 ? "Question" : "Questions"} ${named}: ${plural(t.answers, "answer")}, ${right} right (${pct(right / t.answers)})`;
  return table(id, caption, ["gold ↓ · answered →", ...t.labels, "total"], rows);
}

function reliabilitySection(result: EvalResult): string {
  const model = result.models.join(", ");
  const { width } = diagramSize(1);
  const parts = [
    `<p>Each bar is the share of a confidence bin's answers that were right; the black mark is their mean confidence,
the red band the gap between the two, and the dashed diagonal where a calibrated judge's marks would sit. The strip
underneath counts the answers per bin. Each diagram's legend names its colours; hovering a bin shows its numbers.</p>`,
  ];
  parts.push(`<div class="figures">`);
  for (const group of GROUPS) {
    const m = result.metrics[group];
    if (!m) continue;
    // The page names the dataset; a diagram's own title stays short enough to fit.
    const title = `${group === "overall" ? "all" : group} answers`;
    parts.push(`<div>`, figure(evalDiagram(title, model, m), `${group}: ${plural(m.answers, "answer")}, ECE ${n4(m.ece)}`, width * 1.6));
    const bins = m.bins.filter((b) => b.count > 0);
    const rows = bins.map((b) => [
      `${b.lower.toFixed(3)}–${b.upper.toFixed(3)}`,
      String(b.count),
      n4(b.meanConfidence!),
      n4(b.meanCorrectness!),
      n4(b.meanCorrectness! - b.meanConfidence!),
    ]);
    parts.push(
      `<details><summary>The ${esc(group)} diagram's bins as a table</summary>`,
      table(`bins-${group}`, `${group}: non-empty bins`, ["Confidence bin", "Answers", "Mean confidence", "Share right", "Share right − confidence"], rows),
      `</details></div>`,
    );
  }
  parts.push(`</div>`);
  return parts.join("\n");
}
