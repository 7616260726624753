/**
 * Engine benchmark: raw prompt reading speed of a model through node-llama-cpp, against the
 * judgment engine answering a ~190-word (1 KB) state with 3 questions, in the same run; then
 * tenants interleaving K states, on an engine with 1 slot against one with K slots.
 *
 *   npm run bench:engine -- [--model path.gguf] [--preset qwen2.5-0.5b] [--runs 7] [--threads 0]
 *                           [--states 4] [--part all|ceiling|states]
 *
 * Without --model it writes (once) and uses a fixture with the given preset's tensor shapes,
 * which runs exactly as fast as the real model of those shapes.
 */
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { openRawReader } from "../src/bench/ceiling.js";
import { createLlamaEngine } from "../src/engine/llama/engine.js";
import { writeFixtureModel, type FixturePreset } from "../src/gguf/fixture-model.js";
import { buildPrompt } from "../src/judgment/prompt.js";
import type { Question } from "../src/routes/systemone/schema.js";

const { values } = parseArgs({
  options: {
    model: { type: "string" },
    preset: { type: "string", default: "qwen2.5-0.5b" },
    runs: { type: "string", default: "7" },
    threads: { type: "string", default: "0" },
    states: { type: "string", default: "4" },
    part: { type: "string", default: "all" },
  },
});
const runs = Number(values.runs);
const threads = Number(values.threads);
const states = Number(values.states);
if (!["all", "ceiling", "states"].includes(values.part!)) throw new Error(`--part must be all, ceiling or states, not ${values.part}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const QUESTIONS: Question[] = [
  {
    type: "choice",
    instructions: "What is the ticket about?",
    criteria: { billing: "money, invoices", technical: "bugs, outages", account: "login, profile", other: null },
  },
  { type: "noul", instructions: "The customer is angry.", criteria: { true: "strong negative tone" } },
  { type: "score", instructions: "How urgent is it?", criteria: ["not urgent", "low", "medium", "high", "critical"] },
];

/** About 190 words (1 KB) of ticket text; `variant` changes its first words so no run reuses another's cache. */
function state(variant: number): string {
  const body =
    "I was charged twice for my subscription this month and the second charge appeared two days after the first one. " +
    "I contacted support last week through the chat window, and the agent told me the duplicate would be refunded within five business days. " +
    "It has now been nine days, nothing has come back to my card, and my bank says the charge is settled and final. " +
    "I have been a customer for three years, I pay annually, and I have never had a problem like this before. ";
  return `Ticket ${variant}: ${body.repeat(2)}Please fix this today, or cancel my account and refund everything.`;
}

async function main(): Promise<void> {
  const modelPath = values.model ?? (await fixture(values.preset as FixturePreset));
  console.error(`model: ${modelPath}, threads: ${threads || "auto"}, runs: ${runs}`);
  if (values.part !== "states") await ceilingAndRequests(modelPath);
  if (values.part !== "ceiling") await interleavedStates(modelPath);
}

async function ceilingAndRequests(modelPath: string): Promise<void> {
  // The ceiling: the same model reading the 1 KB state text from an empty context, nothing else.
  const raw = await openRawReader(modelPath, { threads });
  const rawTokens = raw.tokenize(state(0));
  const engine = createLlamaEngine({ model: modelPath, modelsDir: "models", contextSize: 8192, maxRequestTokens: 65536, threads, gpu: "off" });
  await engine.ready;
  const status = await engine.status();
  if (status.state !== "ready") throw new Error(JSON.stringify(status));

  const timeRequest = async (variant: number, questions: Question[]) => {
    const prepared = await engine.prepare(buildPrompt(state(variant), questions));
    const result = await engine.evaluate(prepared);
    return { ms: result.timingMs, tokens: result.inputTokens };
  };
  await timeRequest(-1, QUESTIONS); // warm-up
  // Interleaved, so machine noise hits the ceiling and the engine alike.
  const rawSeconds: number[] = [],
    fresh3: number[] = [],
    fresh1: number[] = [],
    cached3: number[] = [];
  let tokens3 = 0,
    tokens1 = 0;
  for (let i = 0; i < runs; i++) {
    rawSeconds.push(await raw.readSeconds(rawTokens));
    const three = await timeRequest(1000 + i, QUESTIONS);
    fresh3.push(three.ms);
    tokens3 = three.tokens;
    cached3.push((await timeRequest(1000 + i, QUESTIONS)).ms);
    const one = await timeRequest(2000 + i, QUESTIONS.slice(0, 1));
    fresh1.push(one.ms);
    tokens1 = one.tokens;
  }
  const rawTokensPerSecond = rawTokens.length / median(rawSeconds);
  await engine.close();
  await raw.close();

  const perQuestion = (median(fresh3) - median(fresh1)) / 2;
  const serviceTps = tokens3 / (median(fresh3) / 1000);
  const rows: [string, string][] = [
    ["raw prompt reading (node-llama-cpp, no judgment)", `${rawTokensPerSecond.toFixed(1)} tokens/s (${rawTokens.length} tokens, median of ${runs})`],
    ["request: 1 KB state + 3 questions", `${median(fresh3).toFixed(0)} ms median, ${tokens3} input tokens`],
    ["engine input tokens/s", `${serviceTps.toFixed(1)} tokens/s = ${(serviceTps / rawTokensPerSecond).toFixed(2)} × raw`],
    ["same request, state cached from the previous one", `${median(cached3).toFixed(0)} ms median`],
    ["request with 1 question", `${median(fresh1).toFixed(0)} ms median, ${tokens1} input tokens`],
    ["latency per extra question", `${perQuestion.toFixed(0)} ms`],
  ];
  printRows(rows);
  console.log(
    JSON.stringify({
      modelPath,
      runs,
      rawTokensPerSecond: rawTokensPerSecond,
      requestMs: median(fresh3),
      inputTokens: tokens3,
      cachedRequestMs: median(cached3),
      oneQuestionMs: median(fresh1),
      perQuestionMs: perQuestion,
    }),
  );
}

/**
 * K tenants, each asking new questions about its own state, their requests interleaved: an
 * engine with one slot re-reads every state, one with K slots keeps all of them. Both engines
 * answer the same requests in the same order, alternately, so machine noise hits both; the
 * first round (which fills the slots) is not measured.
 */
async function interleavedStates(modelPath: string): Promise<void> {
  const open = async (slots: number) => {
    const engine = createLlamaEngine({ model: modelPath, modelsDir: "models", contextSize: 8192, maxRequestTokens: 65536, threads, gpu: "off", slots });
    await engine.ready;
    const status = await engine.status();
    if (status.state !== "ready") throw new Error(JSON.stringify(status));
    return engine;
  };
  const engines = { one: await open(1), many: await open(states) };
  const measured = { one: [] as number[], many: [] as number[] };
  const evaluated = { one: 0, many: 0 };
  const wallMs = { one: 0, many: 0 };
  let requests = 0;
  let inputTokens = 0;
  for (let round = 0; round <= runs; round++) {
    for (let s = 0; s < states; s++) {
      // A new question each round: the tenant's state repeats, its question does not.
      const questions = [QUESTIONS[(round + s) % QUESTIONS.length]];
      for (const key of ["one", "many"] as const) {
        const engine = engines[key];
        const before = engine.evaluatedTokens();
        const started = performance.now();
        const prepared = await engine.prepare(buildPrompt(state(3000 + s), questions));
        const result = await engine.evaluate(prepared);
        if (round === 0) continue;
        wallMs[key] += performance.now() - started;
        measured[key].push(result.timingMs);
        evaluated[key] += engine.evaluatedTokens() - before;
        if (key === "one") inputTokens += result.inputTokens;
      }
      if (round > 0) requests++;
    }
  }
  await engines.one.close();
  await engines.many.close();

  const row = (key: "one" | "many") =>
    `${median(measured[key]).toFixed(0)} ms median, ${(requests / (wallMs[key] / 1000)).toFixed(2)} requests/s, ` +
    `${Math.round(evaluated[key] / requests)} tokens evaluated per request`;
  printRows([
    [
      `${states} states interleaved, 1 question each (${Math.round(inputTokens / requests)} input tokens per request)`,
      `${requests} measured requests per engine`,
    ],
    ["engine with 1 slot (re-reads every state)", row("one")],
    [`engine with ${states} slots (keeps every state)`, row("many")],
    [
      `${states} slots against 1`,
      `${(median(measured.one) / median(measured.many)).toFixed(2)}× faster (median), ${(wallMs.one / wallMs.many).toFixed(2)}× the requests/s`,
    ],
  ]);
  console.log(
    JSON.stringify({
      modelPath,
      states,
      rounds: runs,
      requests,
      inputTokensPerRequest: inputTokens / requests,
      oneSlot: { medianMs: median(measured.one), requestsPerSecond: requests / (wallMs.one / 1000), evaluatedPerRequest: evaluated.one / requests },
      slots: {
        count: states,
        medianMs: median(measured.many),
        requestsPerSecond: requests / (wallMs.many / 1000),
        evaluatedPerRequest: evaluated.many / requests,
      },
      medianRatio: median(measured.one) / median(measured.many),
    }),
  );
}

function printRows(rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
}

async function fixture(preset: FixturePreset): Promise<string> {
  const file = `models/fixture-${preset}.gguf`;
  if (!existsSync(file)) {
    console.error(`writing ${file} (once)…`);
    await writeFixtureModel(file, { preset });
  }
  return file;
}

await main();
