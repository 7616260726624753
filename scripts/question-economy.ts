/**
 * The economy of asking 6 questions in one request against 6 requests of one question, in
 * billed input tokens: the figure `scripts/bench-real-models.sh` prints as "× fewer input tokens
 * per question" (issue 18's goal: ≥ 4×), without reading a single prompt. The requests are the
 * ones `judge bench --state-tokens 300 --questions 1|6 --options 4 --concurrency 1 --no-reuse`
 * sends in its phase (same seed, same warm-up skipped, the state's length measured with the
 * model's tokenizer), and the tokens are those the in-process engine bills for them.
 *
 *   npx tsx scripts/question-economy.ts [--requests 12] [--seed 1] [--choice-labels letters|digits] [--cues auto|full|short|compact] <model.gguf>…
 *
 * `--cues auto` (the default) styles each model's requests as the service does (JUDGE_PROMPT_CUES=auto).
 *
 * Prints per model the mean input tokens per request for 1 and 6 questions, the ratio, and the
 * mean tokens of the shared prefix and of each question type.
 */
import { basename } from "node:path";
import { openRawReader } from "../src/bench/ceiling.js";
import { deriveSeed } from "../src/bench/random.js";
import { createRequestGenerator, measureTokensPerWord } from "../src/bench/requests.js";
import { createLlamaEngine } from "../src/engine/llama/engine.js";
import { buildPrompt, promptStyleFor, type PromptCuesSetting, type PromptStyle } from "../src/judgment/prompt.js";
import type { Question } from "../src/judgment/schema.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [value] = args.splice(at, 2).slice(1);
  return Number(value);
};
const requests = option("--requests", 12);
const seed = option("--seed", 1);
const text = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const choiceLabels = text("--choice-labels") as PromptStyle["choiceLabels"] | undefined;
const cues = (text("--cues") ?? "auto") as PromptCuesSetting;
if (args.length === 0) {
  console.error("usage: question-economy.ts [--requests 12] [--seed 1] [--choice-labels letters|digits] [--cues auto|full|short|compact] <model.gguf>…");
  process.exit(2);
}

for (const modelPath of args) {
  const reader = await openRawReader(modelPath, { threads: 1 });
  const tokensPerWord = measureTokensPerWord((text) => reader.tokenize(text).length, seed);
  await reader.close();
  const engine = createLlamaEngine({ model: modelPath, modelsDir: ".", contextSize: 4096, maxRequestTokens: 100_000, threads: 1, gpu: "off", slots: 1 });
  await engine.ready;
  const style: PromptStyle = { ...promptStyleFor(engine.templateFamily, cues), ...(choiceLabels && { choiceLabels }) };
  const perType: Record<string, number[]> = {};
  const prefixes: number[] = [];
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const meanTokens = async (questions: number): Promise<number> => {
    // Phase 1 of `judge bench` (one concurrency level): its generator, after one warm-up request.
    const next = createRequestGenerator({ stateTokens: 300, questions, options: 4 }, { seed: deriveSeed(seed, 1), tokensPerWord });
    next();
    const counts: number[] = [];
    for (let i = 0; i < requests; i++) {
      const body = JSON.parse(next().body) as { state: string; questions: Record<string, Question> };
      const asked = Object.values(body.questions);
      const prepared = await engine.prepare(buildPrompt(body.state, asked, style));
      const prefix = (await engine.prepare(buildPrompt(body.state, [], style))).inputTokens;
      prefixes.push(prefix);
      counts.push(prepared.inputTokens);
      // A question's own tokens: what it adds to the prefix alone (the same as among others).
      for (const q of asked) (perType[q.type] ??= []).push((await engine.prepare(buildPrompt(body.state, [q], style))).inputTokens - prefix);
    }
    return mean(counts);
  };
  const one = await meanTokens(1);
  const six = await meanTokens(6);
  await engine.close();
  const types = Object.entries(perType)
    .map(([type, xs]) => `${type} ${mean(xs).toFixed(1)}`)
    .join(", ");
  console.log(
    `${basename(modelPath)} (${style.cues} cues): ${tokensPerWord.toFixed(3)} tokens/word; 1 question/request ${one.toFixed(1)} input tokens, ` +
      `6 questions/request ${six.toFixed(1)}: economy ${((6 * one) / six).toFixed(2)}× fewer input tokens per question ` +
      `(shared prefix ${mean(prefixes).toFixed(1)} tokens; a question's own tokens: ${types})`,
  );
}
