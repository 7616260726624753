import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJudgmentClient } from "./client.js";
import { parseDataset } from "./dataset.js";
import { evalReportHtml } from "./eval-report.js";
import { startFakeJudgeServer, type FakeJudgeServer } from "../testing/fake-judge-server.js";
import { CELL_COLOURS } from "./html.js";
import { goldIndex, predictedIndex } from "./metrics.js";
import {
  cell,
  EVIL_DATASET,
  foreignMarkup,
  EVIL_OPTION,
  EVIL_QUESTION,
  evilDataset,
  tableOf,
  tablesOf,
  unescapeHtml,
  variedReply,
} from "./report-test-helpers.js";
import type { QualityFigures } from "./quality.js";
import { formatEvalText } from "./report.js";
import { runEvaluation, type EvalChecks, type EvalResult } from "./run-eval.js";

/**
 * report.html read as a reader would: its tables, parsed, must hold the figures the metrics
 * computed (recomputed here from the per-answer records where that is cheap), and nothing
 * in it may run or load anything, whatever the dataset's labels say.
 */

const show = (value: unknown) => JSON.stringify(value, null, 1).slice(0, 6000);
const GROUPS = ["overall", "choice", "noul", "score"] as const;
const noProgress = () => ({ advance() {}, finish() {} });

let server: FakeJudgeServer;
let result: EvalResult;
let html: string;
beforeAll(async () => {
  server = await startFakeJudgeServer((body) => variedReply(body));
  result = await evaluate(evilDataset(), { order: "shift", ids: true, interference: true });
  html = evalReportHtml(result, { dataset: EVIL_DATASET, url: server.url });
});
afterAll(() => server?.close());

function evaluate(items: ReturnType<typeof evilDataset>, checks: EvalChecks): Promise<EvalResult> {
  const client = createJudgmentClient({ url: server.url, key: "k" });
  return runEvaluation({ items, client, concurrency: 4, errorRates: [0.1, 0.5], checks, seed: 3, progress: noProgress });
}

/** A figure as printed (4 decimals or a percentage with 1) matches the computed value. */
function expectFigure(text: string, value: number, context: string): void {
  const printed = text.endsWith("%") ? Number(text.slice(0, -1)) / 100 : Number(text);
  expect(Number.isFinite(printed), `${text} is not a number: ${context}`).toBe(true);
  expect(Math.abs(printed - value), `${text} vs ${value}: ${context}`).toBeLessThanOrEqual(text.endsWith("%") ? 5e-4 : 5e-5);
}

describe("report.html", () => {
  it("is one page that runs and loads nothing, whatever the labels and the dataset's name say", () => {
    expect(foreignMarkup(html)).toEqual([]);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co");
    expect(html).toContain(`<title>judge eval: data &lt;img src=x&gt; &amp; &quot;y&quot;.jsonl</title>`);
    expect(unescapeHtml(html), "the escaped text reads back as the labels").toContain(EVIL_QUESTION);
  });

  it("has the metrics table with every group's figures, as computed", () => {
    const table = tableOf(html, "metrics");
    expect(table.headers, show(table)).toEqual(["Type", "Answers", "Accuracy", "Brier", "NLL", "ECE", "Coverage err≤10%", "Coverage err≤50%", "Level MAE"]);
    expect(table.rows.map((r) => r[0])).toEqual([...GROUPS]);
    for (const group of GROUPS) {
      const m = result.metrics[group]!;
      const at = (column: string) => cell(table, group, column);
      expect(at("Answers")).toBe(String(m.answers));
      for (const [column, value] of [
        ["Accuracy", m.accuracy],
        ["Brier", m.brier],
        ["NLL", m.nll],
        ["ECE", m.ece],
      ] as const)
        expectFigure(at(column), value, `${group} ${column}`);
      expectFigure(at("Coverage err≤50%"), m.coverage[1].coverage, group);
      if (group === "score") expectFigure(at("Level MAE"), m.meanLevelError!, group);
      else expect(at("Level MAE")).toBe("-");
    }
    expect(Number(cell(table, "overall", "Answers"))).toBe(result.records.length);
  });

  it("has the terminal's quality table, the prior's figure beside each of the judge's, as summary.json's quality holds them", () => {
    const table = tableOf(html, "quality");
    expect(table.headers, show(table)).toEqual(["Type", "Answers of", ...["Accuracy", "Macro-F1", "ECE(10)", "Brier", "NLL"].flatMap((h) => [h, "prior"])]);
    const scaled = `${result.quality.folds}-fold T`;
    expect(result.quality.folds, "the dataset has enough items for the default folds").toBe(5);
    expect(table.rows.map((r) => `${r[0]} / ${r[1]}`)).toEqual(GROUPS.flatMap((g) => [`${g} / judge`, `${g} / ${scaled}`]));
    const figures = (q: QualityFigures) => [q.accuracy, q.macroF1, q.ece, q.brier, q.nll];
    const terminal = formatEvalText(result, { dataset: EVIL_DATASET, url: server.url }, [])
      .split("\n")
      .map((line) => line.trim().split(/\s{2,}/));
    for (const group of GROUPS) {
      const { model, prior, kFold } = result.quality.byType[group]!;
      for (const [name, judged] of [
        ["judge", model],
        [scaled, kFold],
      ] as const) {
        const row = table.rows.find((r) => r[0] === group && r[1] === name)!;
        figures(judged).forEach((value, i) => expectFigure(row[2 + 2 * i], value, `${group} ${name} ${table.headers[2 + 2 * i]}`));
        figures(prior).forEach((value, i) => expectFigure(row[3 + 2 * i], value, `${group} ${name}: the prior's ${table.headers[2 + 2 * i]}`));
      }
      // The terminal prints the same figures: the judge's row, then the prior's and the scaled judge's under it.
      const at = terminal.findIndex((cells) => cells[0] === group && cells[1] === "judge");
      const html = (name: string, odd: number) =>
        table.rows
          .find((r) => r[0] === group && r[1] === name)!
          .slice(2)
          .filter((_, i) => i % 2 === odd);
      expect(terminal.slice(at, at + 3), group).toEqual([
        [group, "judge", ...html("judge", 0)],
        ["prior", ...html("judge", 1)],
        [scaled, ...html(scaled, 0)],
      ]);
    }
  });

  it("has the coverage thresholds: one row per group and error rate", () => {
    const table = tableOf(html, "coverage");
    expect(table.rows, show(table)).toHaveLength(GROUPS.length * 2);
    for (const row of table.rows) {
      const c = result.metrics[row[0] as (typeof GROUPS)[number]]!.coverage.find((x) => `${(100 * x.maxErrorRate).toFixed(1)}%` === row[1])!;
      expect(c, show(row)).toBeDefined();
      expectFigure(row[2], c.coverage, show(row));
      expect(row[3]).toBe(String(c.answers));
      if (c.threshold === null) expect(row[4]).toBe("-");
      else expectFigure(row[4], c.threshold, show(row));
    }
  });

  it("has the robustness results as a table: a row per check and type with the summary's figures", () => {
    const table = tableOf(html, "robustness");
    const expected = [
      ["option order (shift)", result.robustness.optionOrder!],
      ["question ids", result.robustness.questionIds!],
      ["alone vs batch", result.robustness.interference!],
    ] as const;
    expect(
      table.rows.map((r) => `${r[0]} / ${r[1]}`),
      show(table),
    ).toEqual(expected.flatMap(([name, byType]) => GROUPS.filter((g) => byType[g]).map((g) => `${name} / ${g}`)));
    for (const [name, byType] of expected) {
      for (const group of GROUPS.filter((g) => byType[g])) {
        const s = byType[group]!;
        const row = (cells: string[]) => cells[0] === name && cells[1] === group;
        expect(cell(table, row, "Compared")).toBe(String(s.compared));
        expectFigure(cell(table, row, "Top changed"), s.changedRate, `${name} ${group}`);
        expectFigure(cell(table, row, "Mean |Δp|"), s.meanAbsChange, `${name} ${group}`);
        expectFigure(cell(table, row, "Max |Δp|"), s.maxAbsChange, `${name} ${group}`);
      }
    }
    expect(result.robustness.optionOrder!.overall!.changedRate, "the fake judge favours the first option: the check must see it").toBeGreaterThan(0);
  });

  it("has a confusion table per option set whose counts, recounted from the predictions, sum to the choice answers", () => {
    const confusion = [...tablesOf(html)].filter(([id]) => id.startsWith("confusion-")).map(([, t]) => t);
    expect(
      confusion.map((t) => t.caption),
      show(confusion),
    ).toEqual([expect.stringMatching(new RegExp(`^Questions ${EVIL_QUESTION}, topic: 48 answers`)), expect.stringMatching(/^Question yesno: 24 answers/)]);
    const recount = new Map<string, number>();
    const choice = result.records.filter((r) => r.type === "choice");
    for (const r of choice) {
      const key = `${r.labels.length}|${r.labels[goldIndex(r)]}|${r.labels[predictedIndex(r)]}`;
      recount.set(key, (recount.get(key) ?? 0) + 1);
    }
    let total = 0;
    let right = 0;
    for (const t of confusion) {
      const labels = t.headers.slice(1, -1);
      expect(new Set(labels), show(t)).toEqual(new Set(choice.find((r) => r.labels.length === labels.length)!.labels));
      for (const row of t.rows.slice(0, -1)) {
        labels.forEach((predicted, j) =>
          expect(row[j + 1], `${row[0]} → ${predicted}: ${show(t)}`).toBe(String(recount.get(`${labels.length}|${row[0]}|${predicted}`) ?? 0)),
        );
        if (labels.includes(row[0])) right += Number(row[1 + labels.indexOf(row[0])]);
      }
      const totals = t.rows.at(-1)!;
      expect(totals[0]).toBe("total");
      total += Number(totals.at(-1));
    }
    expect(total, "every choice answer is in exactly one table").toBe(result.metrics.choice!.answers);
    expect(right / total, "the diagonals hold the answers counted right").toBeCloseTo(result.metrics.choice!.accuracy, 12);
    expect(confusion[0].headers, "an option that needs escaping is a column like any other").toContain(EVIL_OPTION);
  });

  it("names every cell colour it uses in a legend, and colours no cell without one", () => {
    const used = new Set([...html.matchAll(/<td class="([^"]*)"/g)].flatMap((m) => m[1].split(" ")).filter((c) => c !== "num"));
    expect([...used].sort(), "the confusion tables colour right and wrong answers").toEqual(["right", "wrong"]);
    const legend = new Map([...html.matchAll(/<span class="swatch (\w+)"><\/span>([^<]+)</g)].map((m) => [m[1], m[2]]));
    for (const colour of used) expect(legend.get(colour), `${colour} in ${show([...legend])}`).toBe(CELL_COLOURS[colour as keyof typeof CELL_COLOURS].label);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    const backgrounds = [...style.matchAll(/([^{}\s]+)\{[^}]*background:/g)].map((m) => m[1]);
    expect(backgrounds.sort(), "only legend colours paint a background").toEqual(
      Object.keys(CELL_COLOURS)
        .map((c) => `.${c}`)
        .sort(),
    );
  });

  it("has a reliability diagram per group, each with its bins as a table holding the metrics' bins", () => {
    expect(html.match(/<svg /g), "one diagram per group").toHaveLength(GROUPS.length);
    for (const group of GROUPS) {
      const m = result.metrics[group]!;
      const table = tableOf(html, `bins-${group}`);
      const bins = m.bins.filter((b) => b.count > 0);
      expect(
        table.rows.map((r) => Number(r[1])),
        show(table),
      ).toEqual(bins.map((b) => b.count));
      expect(table.rows.reduce((sum, r) => sum + Number(r[1]), 0)).toBe(m.answers);
      table.rows.forEach((row, i) => {
        expectFigure(row[2], bins[i].meanConfidence!, `${group} ${row[0]}`);
        expectFigure(row[3], bins[i].meanCorrectness!, `${group} ${row[0]}`);
      });
    }
  });

  it("says so when no check ran and there are no choice questions, instead of empty tables", async () => {
    const items = parseDataset(JSON.stringify({ questions: { holds: { type: "noul", instructions: "x" } }, gold: { holds: true } }), "one.jsonl");
    const plain = evalReportHtml(await evaluate(items, {}), { dataset: "one.jsonl", url: server.url });
    expect([...tablesOf(plain).keys()], plain).toEqual(["metrics", "coverage", "quality", "bins-overall", "bins-noul"]);
    expect(plain, "one of each, in the singular").toMatch(/1 item, 1 answer · 1 request, \d+ input tokens/);
    expect(plain).toMatch(/No robustness check ran/);
    expect(plain).toMatch(/no choice questions/);
  });
});
