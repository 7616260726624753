import { beforeAll, describe, expect, it } from "vitest";
import type { Temperatures } from "../judgment/answers.js";
import { calibrateReportHtml, type CalibrateContext } from "./calibrate-report.js";
import type { JudgmentClient, JudgmentReply } from "./client.js";
import { cell, EVIL_DATASET, EVIL_OPTION, evilDataset, foreignMarkup, tableOf, variedReplyWithLogits } from "./report-test-helpers.js";
import { formatCalibrateText } from "./report.js";
import { runCalibration, type CalibrateResult } from "./run-calibrate.js";

/**
 * calibrate's report.html: the temperatures and the before/after figures it shows are the
 * result's, and each question type gets a diagram whose panels (uncalibrated, the profile's
 * current entry, calibrated) count the same held-out answers.
 */

const show = (value: unknown) => JSON.stringify(value, null, 1).slice(0, 6000);
const GROUPS = ["overall", "choice", "noul", "score"] as const;
const COLUMNS = [
  ["uncalibrated", "uncalibrated"],
  ["current profile", "current"],
  ["calibrated", "calibrated"],
] as const;

/** The varied fake judge, in process (calibrate's client is tested on its own), with logits three times too sharp. */
const client: JudgmentClient = { judge: async (body) => variedReplyWithLogits(JSON.parse(JSON.stringify(body)), "fake<&>").body as JudgmentReply };

async function calibrate(current?: Temperatures, items = 40, holdout = 0.3): Promise<CalibrateResult> {
  const progress = () => ({ advance() {}, finish() {} });
  return runCalibration({ items: evilDataset(items), client, concurrency: 4, holdout, seed: 2, minBucketAnswers: 5, currentFor: () => current, progress });
}

const context = (written: boolean): CalibrateContext => ({
  dataset: EVIL_DATASET,
  url: "http://127.0.0.1:1",
  profile: { path: "p<&>.json", written },
  notes: ["a <note> & more"],
});

/** Per diagram (one per group): the panels' headings and the answers counted in each panel's bins. */
function diagrams(html: string) {
  return [...html.matchAll(/<svg [\s\S]*?<\/svg>/g)].map(([svg]) =>
    svg
      .split(/<g transform="translate\(\d+ 0\)">/)
      .slice(1)
      .map((panel) => ({
        heading: /<text[^>]*>([^<]*)<\/text>/.exec(panel)![1],
        counted: [...panel.matchAll(/<g class="bin">[\s\S]*?>(\d+)<\/text><\/g>/g)].reduce((sum, m) => sum + Number(m[1]), 0),
      })),
  );
}

let result: CalibrateResult;
let html: string;
beforeAll(async () => {
  result = await calibrate({ choice: 2, noul: 1.5, score: 1 });
  html = calibrateReportHtml(result, context(true));
});

describe("calibrate's report.html", () => {
  it("is one page that runs and loads nothing, with every name escaped", () => {
    expect(foreignMarkup(`<p>x</p><img src=x><b onclick="y">`), "the check itself sees markup it does not expect").toEqual(["<img src=x>", `<b onclick="y">`]);
    expect(foreignMarkup(html)).toEqual([]);
    expect(html).toContain("model <code>fake&lt;&amp;&gt;</code>");
    expect(html).toContain("Wrote <code>p&lt;&amp;&gt;.json</code>");
    expect(html).toContain(`<p class="note">a &lt;note&gt; &amp; more</p>`);
    expect(html).not.toContain(EVIL_OPTION);
  });

  it("lists the temperatures written, per type and per label-count bucket, with the fit's NLL before and after", () => {
    const table = tableOf(html, "temperatures");
    const buckets = result.fit.buckets.choice ?? [];
    expect(buckets.length, show(result.fit)).toBeGreaterThan(0);
    expect(
      table.rows.map((r) => r[0]),
      show(table),
    ).toEqual(["choice", ...buckets.map((b) => `choice, ${b.min} labels`), "noul", "score"]);
    for (const type of ["choice", "noul", "score"] as const) {
      const fit = result.fit.types[type]!;
      expect(Number(cell(table, type, "Temperature")), type).toBeCloseTo(result.temperatures[type], 4);
      expect(cell(table, type, "Answers")).toBe(String(fit.answers));
      expect(Number(cell(table, type, "NLL at T = 1"))).toBeCloseTo(fit.nllBefore, 4);
      expect(Number(cell(table, type, "NLL at T"))).toBeCloseTo(fit.nllAfter, 4);
    }
    expect(result.temperatures.choice / 3, "the fake judge is three times too sharp: T recovers it roughly").toBeGreaterThan(0.5);
  });

  it("shows every group before, with the current profile, and after, with the result's figures", () => {
    const table = tableOf(html, "held-out");
    expect(
      table.rows.map((r) => `${r[0]} ${r[1]}`),
      show(table),
    ).toEqual(GROUPS.flatMap((g) => COLUMNS.map(([name]) => `${g} ${name}`)));
    for (const group of GROUPS) {
      for (const [name, key] of COLUMNS) {
        const m = result.heldOut[key]![group]!;
        const row = (cells: string[]) => cells[0] === group && cells[1] === name;
        expect(cell(table, row, "Answers")).toBe(String(m.answers));
        for (const [column, metric] of [
          ["ECE", "ece"],
          ["NLL", "nll"],
          ["Brier", "brier"],
          ["Accuracy", "accuracy"],
        ] as const) {
          expect(Number(cell(table, row, column)), `${group} ${name} ${column}`).toBeCloseTo(m[metric], 4);
        }
      }
    }
    expect(result.heldOut.calibrated.overall!.nll, show(result.heldOut)).toBeLessThan(result.heldOut.uncalibrated.overall!.nll);
  });

  it("draws each group before and after, every panel counting the same held-out answers in its bins", () => {
    const drawn = diagrams(html);
    expect(drawn, show(drawn)).toHaveLength(GROUPS.length);
    expect(result.heldOut.uncalibrated.overall!.answers).toBe(result.split.heldOutAnswers);
    drawn.forEach((panels, i) => {
      const group = GROUPS[i];
      expect(
        panels.map((p) => p.heading),
        show(panels),
      ).toEqual(
        COLUMNS.map(([name, key]) => `${name} · ECE ${result.heldOut[key]![group]!.ece.toFixed(4)} · ${result.heldOut.uncalibrated[group]!.answers} answers`),
      );
      for (const p of panels) expect(p.counted, `${group}: ${show(panels)}`).toBe(result.heldOut.uncalibrated[group]!.answers);
    });
  });

  it("without a current entry, has two panels and two rows per group, and says when the profile was not written", async () => {
    const plain = calibrateReportHtml(await calibrate(), context(false));
    expect(diagrams(plain).map((panels) => panels.map((p) => p.heading.split(" · ")[0]))).toEqual(GROUPS.map(() => ["uncalibrated", "calibrated"]));
    expect(tableOf(plain, "held-out").rows).toHaveLength(2 * GROUPS.length);
    expect(plain).toContain("Not written (<code>--dry-run</code>): <code>p&lt;&amp;&gt;.json</code>");
  });

  it("counts one item and one answer in the singular, in the page and in the terminal's text", async () => {
    // Two items, half held out: one item on each side, and one noul and one score answer held out.
    const small = await calibrate(undefined, 2, 0.5);
    expect(small.split, show(small.split)).toMatchObject({ fitItems: 1, fitAnswers: 5, heldOutItems: 1, heldOutAnswers: 5 });
    const page = calibrateReportHtml(small, context(true));
    expect(page).toContain("Fitted on 5 answers (1 item), reported on 5 held-out answers (1 item).");
    const captions = [...page.matchAll(/<figcaption>([^<]*)<\/figcaption>/g)].map((m) => m[1].replace(/\d\.\d{4}/g, "x"));
    expect(captions).toEqual([
      "overall: ECE x uncalibrated, x calibrated (5 answers)",
      "choice: ECE x uncalibrated, x calibrated (3 answers)",
      "noul: ECE x uncalibrated, x calibrated (1 answer)",
      "score: ECE x uncalibrated, x calibrated (1 answer)",
    ]);
    const text = formatCalibrateText(small, context(true).profile);
    expect(text).toContain("Fitted on 5 answers (1 item) of model");
    expect(text).toContain("Calibration on 5 held-out answers (1 item):");
    expect(page + text).not.toMatch(/\b1 (answers|items)\b/);
  });
});
