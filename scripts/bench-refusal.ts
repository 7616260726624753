/**
 * What a request over JUDGE_MAX_REQUEST_TOKENS costs the server before its 400 over_budget:
 * the body (64 questions × 255 options, ~225 KB) prepared by the in-process engine on a
 * real model, N times; prints the median milliseconds and the refusal's message.
 *
 *   npx tsx scripts/bench-refusal.ts "$(scripts/real-models.sh smollm2-135m-instruct)" [runs]
 */
import { createLlamaEngine } from "../src/engine/llama/engine.js";
import { buildPrompt } from "../src/judgment/prompt.js";
import type { Question } from "../src/judgment/schema.js";

const [model, runsText] = process.argv.slice(2);
if (!model) throw new Error("usage: bench-refusal.ts MODEL.gguf [runs]");
const runs = Number(runsText ?? 9);
const option = "a choice";
const questions: Question[] = Array.from({ length: 64 }, (_, q) => ({
  type: "choice",
  instructions: `Question ${q}: which option fits best?`,
  criteria: Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`o${i}`, option])),
}));
const body = JSON.stringify({ state: "s", questions: Object.fromEntries(questions.map((q, i) => [`q${i}`, q])) });
/** Median ms of preparing the body under `maxRequestTokens`, and the last outcome. */
async function measure(maxRequestTokens: number): Promise<{ median: number; min: number; max: number; message: string }> {
  const engine = createLlamaEngine({ model, modelsDir: "models", contextSize: 8192, maxRequestTokens, threads: 1, gpu: "off" });
  await engine.ready;
  const times: number[] = [];
  let message = "";
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await engine.prepare(buildPrompt("s", questions)).then(
      (prepared) => (message = `prepared: ${prepared.inputTokens} input tokens`),
      (error: Error) => (message = error.message),
    );
    times.push(performance.now() - started);
  }
  await engine.close();
  times.sort((x, y) => x - y);
  return { median: times[Math.floor(times.length / 2)], min: times[0], max: times.at(-1)!, message };
}

const show = (label: string, m: Awaited<ReturnType<typeof measure>>) =>
  console.log(`${label}: median ${m.median.toFixed(1)} ms over ${runs} runs (min ${m.min.toFixed(1)}, max ${m.max.toFixed(1)})\n  ${m.message}`);
console.log(`body ${(body.length / 1024).toFixed(0)} KB, 64 questions × 255 options`);
// The whole body tokenised: what every such refusal cost before it was refused early.
show("tokenised whole (limit 1048576)", await measure(1_048_576));
show("refused at the default limit (16384)", await measure(16_384));
