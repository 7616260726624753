/**
 * The quality table of docs/measurements/2026-11-28-quality-real-models.md from `judge eval` outputs: for each predictions.jsonl given, the
 * judge's figures, the prior baseline and k-fold temperature scaling (the same `quality` that
 * judge eval's summary.json holds), plus the option-order flip rate from its summary.json.
 *
 *   npx tsx scripts/quality-table.ts <eval-out-dir>...   (each dir from `judge eval --out dir`)
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { qualityReport, type QuestionPrediction } from "../src/evaluation/quality.js";

const f = (x: number) => x.toFixed(3);
console.log(
  "| Run | Type | Answers | Accuracy | Macro-F1 | ECE (10 bins) | Brier | NLL | Prior: acc / ECE / Brier / NLL | 5-fold T: ECE / Brier / NLL | Flip rate (shift) |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const dir of process.argv.slice(2)) {
  const lines = (await readFile(path.join(dir, "predictions.jsonl"), "utf8")).split("\n").filter((l) => l.trim() !== "");
  const records: QuestionPrediction[] = lines.map((l) => {
    const r = JSON.parse(l);
    return { item: `${r.item}\u0000${r.line}`, question: r.question, labels: r.labels, type: r.type, probabilities: r.probabilities, gold: r.gold };
  });
  const summary = JSON.parse(await readFile(path.join(dir, "summary.json"), "utf8"));
  const report = qualityReport(records, 5, 1);
  for (const [type, row] of Object.entries(report.byType)) {
    const flips = summary.robustness?.optionOrder?.[type];
    const m = row!.model,
      p = row!.prior,
      k = row!.kFold;
    console.log(
      `| ${path.basename(dir)} | ${type} | ${m.answers} | ${f(m.accuracy)} | ${f(m.macroF1)} | ${f(m.ece)} | ${f(m.brier)} | ${f(m.nll)} | ` +
        `${f(p.accuracy)} / ${f(p.ece)} / ${f(p.brier)} / ${f(p.nll)} | ${f(k.ece)} / ${f(k.brier)} / ${f(k.nll)} | ${flips ? `${(100 * flips.changedRate).toFixed(1)}%` : "-"} |`,
    );
  }
}
