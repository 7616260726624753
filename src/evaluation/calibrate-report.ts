import { bucketKey } from "../judgment/calibration.js";
import { esc, figure, page, table } from "./html.js";
import { diagramSize, reliabilitySvg, type ReliabilityPanel } from "./reliability.js";
import { boundNotes, foldRanges, GROUPS, n4, plural } from "./report.js";
import type { CalibrateResult, CompactByType } from "./run-calibrate.js";
import type { TemperatureFit } from "./temperature.js";

/**
 * `judge calibrate`'s report.html: the temperatures fitted, the held-out metrics before and
 * after, and per question type a reliability diagram with one panel per column (uncalibrated,
 * the profile's current entry when there is one, calibrated) on the same held-out answers.
 */

export interface CalibrateContext {
  dataset: string;
  url: string;
  profile: { path: string; written: boolean };
  notes: string[];
}

type Group = (typeof GROUPS)[number];

/** The held-out results in display order, leaving out a column that was not computed. */
function columns(heldOut: CalibrateResult["heldOut"]): [string, CompactByType][] {
  const all: [string, CompactByType | undefined][] = [
    ["uncalibrated", heldOut.uncalibrated],
    ["current profile", heldOut.current],
    ["calibrated", heldOut.calibrated],
  ];
  return all.filter((c): c is [string, CompactByType] => c[1] !== undefined);
}

/** The before/after diagram of one group: a panel per column. */
export function calibrateDiagram(result: CalibrateResult, group: Group, title: string): string {
  const panels: ReliabilityPanel[] = columns(result.heldOut).map(([name, byType]) => ({ name, bins: byType[group]!.bins, ece: byType[group]!.ece }));
  return reliabilitySvg(title, panels);
}

export function calibrateReportHtml(result: CalibrateResult, context: CalibrateContext): string {
  const { split } = result;
  const heldOut = result.folds
    ? `reported on all ${plural(split.heldOutAnswers, "answer")}, ${result.folds.k}-fold cross-validated (each fold scored with temperatures ` +
      `fitted on the other ${result.folds.k - 1}: ${esc(foldRanges(result.folds.temperatures))})`
    : split.inSample
      ? `reported on the same ${plural(split.fitAnswers, "answer")} (no held-out split: <code>--holdout 0</code>)`
      : `reported on ${plural(split.heldOutAnswers, "held-out answer")} (${plural(split.heldOutItems, "item")})`;
  const notes = [...context.notes, ...boundNotes(result)];
  const profile = context.profile.written
    ? `Wrote <code>${esc(context.profile.path)}</code> (entry <code>${esc(result.model)}</code>).`
    : `Not written (<code>--dry-run</code>): <code>${esc(context.profile.path)}</code>.`;
  const body = [
    `<h1>judge calibrate</h1>`,
    `<p>Dataset <code>${esc(context.dataset)}</code> · server <code>${esc(context.url)}</code> · model <code>${esc(result.model)}</code>` +
      `${result.debias ? ` · x_debias <code>${esc(result.debias)}</code>` : ""}<br>` +
      `Fitted on ${plural(split.fitAnswers, "answer")} (${plural(split.fitItems, "item")}), ${heldOut}. ${profile}</p>`,
    ...notes.map((note) => `<p class="note">${esc(note)}</p>`),
    `<h2>Temperatures</h2>`,
    temperaturesTable(result),
    `<p>Probabilities become softmax(logits / T): T above 1 softens an overconfident judge, below 1 sharpens a timid one.
Each T minimises the NLL on the fitting answers; a label-count bucket with enough answers gets its own.</p>`,
    `<h2>Before and after, on ${split.inSample ? "the fitting answers" : "the held-out answers"}</h2>`,
    heldOutTable(result),
    `<h2>Reliability before and after</h2>`,
    `<p>Per question type, the same answers ${columns(result.heldOut)
      .map(([name]) => name)
      .join(", ")}: each bar is the share of a
confidence bin's answers that were right, the black mark their mean confidence, the red band the gap, the dashed diagonal
perfect calibration, and the strip underneath the answers per bin. Calibration moves answers between bins; the marks
should come to sit on the diagonal.</p>`,
    ...diagrams(result),
  ];
  return page(`judge calibrate: ${context.dataset}`, body.join("\n"));
}

function temperaturesTable(result: CalibrateResult): string {
  const fitCells = (fit: TemperatureFit | undefined): string[] =>
    fit ? [String(fit.answers), n4(fit.nllBefore), n4(fit.nllAfter), fit.atBound ? "at the edge of 0.01–100" : ""] : ["0", "-", "-", "no answers: kept"];
  const rows = (["choice", "noul", "score"] as const).flatMap((type) => {
    const buckets = type === "noul" ? [] : (result.fit.buckets[type] ?? []);
    return [
      [type, n4(result.temperatures[type]), ...fitCells(result.fit.types[type])],
      ...buckets.map((b) => [`${type}, ${bucketKey(b)} labels`, n4(b.temperature), ...fitCells(b)]),
    ];
  });
  return table(
    "temperatures",
    "Temperatures written to the profile, and the fit on the fitting answers",
    ["Fitted for", "Temperature", "Answers", "NLL at T = 1", "NLL at T", "Note"],
    rows,
  );
}

function heldOutTable(result: CalibrateResult): string {
  const present = columns(result.heldOut);
  const rows = GROUPS.flatMap((group) =>
    present.flatMap(([name, byType]) => {
      const m = byType[group];
      return m ? [[group, name, String(m.answers), n4(m.ece), n4(m.nll), n4(m.brier), n4(m.accuracy)]] : [];
    }),
  );
  // A temperature never changes which label is on top: accuracy is the same in every row of a type.
  return table(
    "held-out",
    "Calibration error and likelihood before and after (lower is better; accuracy cannot change)",
    ["Type", "Temperatures", "Answers", "ECE", "NLL", "Brier", "Accuracy"],
    rows,
  );
}

function diagrams(result: CalibrateResult): string[] {
  const panels = columns(result.heldOut).length;
  const { width } = diagramSize(panels);
  return GROUPS.flatMap((group) => {
    const before = result.heldOut.uncalibrated[group];
    const after = result.heldOut.calibrated[group];
    if (!before || !after) return [];
    // The page names the dataset and model; a diagram's own title stays short enough to fit.
    const title = `${group === "overall" ? "all" : group} answers`;
    const caption = `${group}: ECE ${n4(before.ece)} uncalibrated, ${n4(after.ece)} calibrated (${plural(before.answers, "answer")})`;
    return [figure(calibrateDiagram(result, group, title), caption, Math.round(width * (panels === 1 ? 1.5 : 1.2)))];
  });
}
