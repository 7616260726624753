/**
 * Prompt and readout A/B on a real model, in process (no server, no billing): every item of a
 * `judge eval` dataset is asked with one prompt style, and the quality figures of `judge eval`
 * are printed for it (docs/evaluation/prompt-ab.md).
 *
 *   npx tsx scripts/prompt-ab.ts <model.gguf> <dataset.jsonl> <style> [--json]
 *
 * Styles: auto (what the service builds for this model: JUDGE_PROMPT_CUES=auto, per chat template
 * family), default (DEFAULT_PROMPT_STYLE: digits, full cues; the service's style for a family no
 * measurement covers, and its default before 2026-11-28), base (letters, the judge's system text, full cues: the
 * default before the A/B), letters / digits (choice labels), nosystem / judge (the system text),
 * full / short / compact (the answer cues), each a change of one thing from the default. One thread: on a shared 2-core machine, two spinning threads wait on each other.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { createLlamaEngine } from "../src/engine/llama/engine.js";
import { parseDataset, requestOf } from "../src/evaluation/dataset.js";
import { auroc, qualityReport, type QuestionPrediction } from "../src/evaluation/quality.js";
import { isCorrect } from "../src/evaluation/metrics.js";
import { normalise } from "../src/judgment/answers.js";
import { buildPrompt, DEFAULT_PROMPT_STYLE, promptStyleFor, type PromptStyle } from "../src/judgment/prompt.js";
import type { Question } from "../src/judgment/schema.js";

const STYLES: Record<string, PromptStyle> = {
  default: DEFAULT_PROMPT_STYLE,
  // The default before the A/B: letters, the judge's system text, full cues.
  base: { choiceLabels: "letters", system: "judge", cues: "full" },
  letters: { ...DEFAULT_PROMPT_STYLE, choiceLabels: "letters" },
  digits: { ...DEFAULT_PROMPT_STYLE, choiceLabels: "digits" },
  nosystem: { ...DEFAULT_PROMPT_STYLE, system: "none" },
  judge: { ...DEFAULT_PROMPT_STYLE, system: "judge" },
  full: { ...DEFAULT_PROMPT_STYLE, cues: "full" },
  short: { ...DEFAULT_PROMPT_STYLE, cues: "short" },
  compact: { ...DEFAULT_PROMPT_STYLE, cues: "compact" },
};

const [modelPath, datasetPath, styleName] = process.argv.slice(2);
if (!modelPath || !datasetPath || !(styleName === "auto" || STYLES[styleName])) {
  console.error(`usage: prompt-ab.ts <model.gguf> <dataset.jsonl> <auto|${Object.keys(STYLES).join("|")}> [--json]`);
  process.exit(2);
}
const items = parseDataset(await readFile(datasetPath, "utf8"), datasetPath);
const engine = createLlamaEngine({ model: modelPath, modelsDir: ".", contextSize: 2048, maxRequestTokens: 100_000, threads: 1, gpu: "off", slots: 1 });
await engine.ready;
const style: PromptStyle = styleName === "auto" ? promptStyleFor(engine.templateFamily) : STYLES[styleName];

const records: QuestionPrediction[] = [];
/** The same answers with contextual calibration (Zhao et al. 2021): divided by the answer to content-free states. */
const contextual: QuestionPrediction[] = [];
const CONTENT_FREE = ["N/A", ""];
const contentFree = new Map<string, Promise<number[]>>();
/** Mean probabilities over the content-free states, per question as shown (cached: a dataset repeats its questions). */
function contentFreeOf(question: Question): Promise<number[]> {
  const key = JSON.stringify(question);
  if (!contentFree.has(key)) {
    contentFree.set(
      key,
      (async () => {
        const sum: number[] = [];
        for (const state of CONTENT_FREE) {
          const result = await engine.evaluate(await engine.prepare(buildPrompt(state, [question], style)));
          normalise(result.labelLogProbs[0], 1).forEach((p, k) => (sum[k] = (sum[k] ?? 0) + p / CONTENT_FREE.length));
        }
        return sum;
      })(),
    );
  }
  return contentFree.get(key)!;
}
/** Per answer: the label mass (x_diagnostics), whether the top token was a label, and whether the answer was right. */
const diagnosed: { mass: number; top: boolean; confidence: number; right: boolean; type: string }[] = [];
let tokens = 0;
const started = performance.now();
for (const item of items) {
  const request = requestOf(item) as { state?: unknown; questions: Record<string, Question> };
  const ids = Object.keys(request.questions);
  const prompt = {
    ...buildPrompt(
      request.state,
      ids.map((id) => request.questions[id]),
      style,
    ),
    diagnostics: true,
  };
  const prepared = await engine.prepare(prompt);
  const result = await engine.evaluate(prepared);
  tokens += result.inputTokens;
  for (const q of item.labelled) {
    const probabilities = normalise(result.labelLogProbs[ids.indexOf(q.id)], 1);
    // noul's labels are Yes/No, read as [P(true), P(false)] like the gold.
    const record: QuestionPrediction = { item: `${item.id}#${item.line}`, question: q.id, labels: q.labels, type: q.type, probabilities, gold: q.gold };
    records.push(record);
    const cf = await contentFreeOf(request.questions[q.id]);
    const corrected = normalise(
      result.labelLogProbs[ids.indexOf(q.id)].map((lp, k) => lp - Math.log(cf[k])),
      1,
    );
    contextual.push({ ...record, probabilities: corrected });
    const d = result.diagnostics![ids.indexOf(q.id)];
    diagnosed.push({ mass: d.labelMass, top: d.topTokenIsLabel, confidence: Math.max(...probabilities), right: isCorrect(record), type: q.type });
  }
}
await engine.close();

const report = qualityReport(records, 5, 1);
const contextualReport = qualityReport(contextual, 5, 1);
// Does a low label mass flag a wrong answer? AUROC of −mass for "wrong", beside that of −confidence.
const flags = (filter: (d: (typeof diagnosed)[number]) => boolean) => {
  const of = diagnosed.filter(filter);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return {
    answers: of.length,
    auroc_low_mass_flags_wrong: auroc(of.map((d) => ({ score: -d.mass, positive: !d.right }))),
    auroc_low_confidence_flags_wrong: auroc(of.map((d) => ({ score: -d.confidence, positive: !d.right }))),
    median_label_mass: median(of.map((d) => d.mass)),
    top_token_is_label_share: of.filter((d) => d.top).length / of.length,
  };
};
const diagnostics = Object.fromEntries(
  ["overall", "choice", "noul", "score"]
    .map((type) => [type, flags((d) => type === "overall" || d.type === type)])
    .filter(([, f]) => (f as { answers: number }).answers > 0),
);
const row = {
  model: basename(modelPath),
  dataset: basename(datasetPath),
  style: styleName === "auto" ? `auto (${style.cues} cues)` : styleName,
  items: items.length,
  input_tokens: tokens,
  seconds: (performance.now() - started) / 1000,
  quality: report.byType,
  contextual: contextualReport.byType,
  diagnostics,
};
if (process.argv.includes("--json")) console.log(JSON.stringify(row));
else {
  console.log(`${row.model} ${row.dataset} style=${row.style}: ${items.length} items, ${tokens} tokens, ${row.seconds.toFixed(0)} s`);
  for (const [type, q] of Object.entries(report.byType)) {
    const f = (x: number) => x.toFixed(4);
    const g = diagnostics[type];
    if (g)
      console.log(
        `${type.padEnd(8)} label mass median ${g.median_label_mass.toFixed(4)}, top token a label ${(100 * g.top_token_is_label_share).toFixed(1)}%, AUROC(low mass → wrong) ${g.auroc_low_mass_flags_wrong.toFixed(3)}, AUROC(low confidence → wrong) ${g.auroc_low_confidence_flags_wrong.toFixed(3)}`,
      );
    console.log(
      `${type.padEnd(8)} acc ${f(q!.model.accuracy)}  F1 ${f(q!.model.macroF1)}  ECE10 ${f(q!.model.ece)}  Brier ${f(q!.model.brier)}  NLL ${f(q!.model.nll)}   prior NLL ${f(q!.prior.nll)}`,
    );
    const c = contextualReport.byType[type as keyof typeof contextualReport.byType];
    if (c) console.log(`${type.padEnd(8)} contextual: acc ${f(c.model.accuracy)}  ECE10 ${f(c.model.ece)}  NLL ${f(c.model.nll)}`);
  }
}
