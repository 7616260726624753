/**
 * Input tokens per question with the fixtures' made-up vocabulary against Qwen2's real one
 * (the tokenizer of Qwen2.5, the default model), as the in-process engine bills them: the
 * prefix (system text + state) once per request, each question's text and one token per
 * label branch.
 *
 *   npx tsx scripts/fixture-token-counts.ts [--dataset examples/eval-sample.jsonl]
 *
 * Counts depend on the tokenizer only, so the tiny shape stands in for every preset.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createLlamaEngine, type LlamaEngine } from "../src/engine/llama/engine.js";
import { parseDataset } from "../src/evaluation/dataset.js";
import { buildPrompt, promptStyleFor } from "../src/judgment/prompt.js";
import { Question } from "../src/judgment/schema.js";
import { tinyFixturePath, tinyQwen2FixturePath } from "../src/testing/fixture.js";

const { values } = parseArgs({ options: { dataset: { type: "string", default: "examples/eval-sample.jsonl" } } });
const items = parseDataset(readFileSync(values.dataset!, "utf8"), values.dataset!).map((item) => ({
  state: item.state,
  questions: Object.values(item.questions).map((q) => Question.parse(q)),
}));

/** Mean tokens of the prefix, of a question by type, and of a whole request (one per item). */
async function measure(model: string): Promise<Map<string, number>> {
  const engine: LlamaEngine = createLlamaEngine({ model, modelsDir: ".", contextSize: 8192, maxRequestTokens: 1e9, threads: 1, gpu: "off" });
  await engine.ready;
  const samples = new Map<string, number[]>();
  const add = (row: string, n: number) => samples.set(row, [...(samples.get(row) ?? []), n]);
  // Styled as the service styles it for this model's template (JUDGE_PROMPT_CUES=auto).
  const style = promptStyleFor(engine.templateFamily);
  const count = async (state: unknown, questions: Question[]) => (await engine.prepare(buildPrompt(state, questions, style))).inputTokens;
  for (const item of items) {
    const prefix = await count(item.state, []);
    add("system + state (once per request)", prefix);
    for (const question of item.questions) add(`${question.type} question`, (await count(item.state, [question])) - prefix);
    add("whole request", await count(item.state, item.questions));
  }
  await engine.close();
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return new Map([...samples].map(([row, xs]) => [row, mean(xs)]));
}

const madeUp = await measure(await tinyFixturePath());
const qwen2 = await measure(await tinyQwen2FixturePath());
const rows = [...madeUp.keys()].sort((a, b) => order(a) - order(b));
console.log(`Mean input tokens over the ${items.length} items of ${values.dataset}:\n`);
console.log("| | made-up vocabulary | Qwen2 vocabulary | ratio |\n|---|---|---|---|");
for (const row of rows) {
  const [a, b] = [madeUp.get(row)!, qwen2.get(row)!];
  console.log(`| ${row} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} |`);
}

function order(row: string): number {
  return ["system", "noul", "choice", "score", "whole"].findIndex((start) => row.startsWith(start));
}
