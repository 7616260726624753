/**
 * What a level-2 fit reads, for every item of dev and test, written as one JSON line per item and
 * question (split, id, question, its type, gold, the label log-probabilities, the hidden state):
 * the input of scripts/head-variants.py, which compares head variants offline. It reads through
 * the in-process engine as a fit does (one thread, strict), not through the service: nothing is
 * billed and no task is made. About 25 minutes per model on one core.
 *   npx tsx scripts/head-variants-dump.ts MODEL.gguf OUT.jsonl
 */
import { createWriteStream, readFileSync } from "node:fs";
import { createLlamaEngine } from "../src/engine/llama/engine.js";
import { parseDataset } from "../src/evaluation/dataset.js";
import { buildPrompt } from "../src/judgment/prompt.js";
import { Question } from "../src/judgment/schema.js";

const [model, out] = process.argv.slice(2);
if (!model || !out) {
  console.error("usage: npx tsx scripts/head-variants-dump.ts MODEL.gguf OUT.jsonl");
  process.exit(2);
}
const engine = createLlamaEngine({ model, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1, gpu: "off" });
await engine.ready;
if (!engine.readFeatures) throw new Error("this engine reads no hidden states");
const sink = createWriteStream(out);
for (const split of ["dev", "test"]) {
  const file = `datasets/${split}.jsonl`;
  const items = parseDataset(readFileSync(file, "utf8"), file);
  for (const [n, item] of items.entries()) {
    const questions = item.labelled.map((labelled) => Question.parse(item.questions[labelled.id]));
    const prepared = await engine.prepare(buildPrompt(item.state, questions, "auto"));
    const { labelLogProbs } = await engine.evaluate(prepared);
    const { features } = await engine.readFeatures(prepared);
    item.labelled.forEach((labelled, j) => {
      const line = {
        split,
        id: item.id,
        q: labelled.id,
        kind: questions[j].type,
        gold: labelled.gold,
        logProbs: labelLogProbs[j],
        features: Array.from(features[j]),
      };
      sink.write(`${JSON.stringify(line)}\n`);
    });
    if ((n + 1) % 50 === 0) console.error(`${split} ${n + 1}/${items.length}`);
  }
}
sink.end();
await engine.close();
