/**
 * What strict mode's fixed shapes cost on the in-process engine: the same requests on two
 * engines over one GGUF, `JUDGE_EXACTNESS=strict` and `tolerant` (which at concurrency 1 reads
 * exactly as the engine did before strict had fixed shapes: longest cached prefix, any batch of
 * two tokens or more), one request each in turn, and the median of the per-pair latency ratios.
 *
 *   npx tsx scripts/bench-strict.ts <model.gguf> [--requests 9] [--state-words 220] [--threads 0]
 *
 * Two kinds of request alternate: a new state each time (nothing cached: strict pays one spare
 * token per 256-token chunk and per question) and the previous state again with other questions
 * (the prefix cached: strict re-reads each question's last two tokens with every label-trie node).
 */
import { parseArgs } from "node:util";
import { createLlamaEngine, type LlamaEngine } from "../src/engine/llama/engine.js";
import { buildPrompt } from "../src/judgment/prompt.js";
import type { Question } from "../src/judgment/schema.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: "string", default: "9" }, "state-words": { type: "string", default: "220" }, threads: { type: "string", default: "0" } },
});
const model = positionals[0];
if (!model) throw new Error("usage: bench-strict.ts <model.gguf> [--requests 9] [--state-words 220] [--threads 0]");
const requests = Number(values.requests);
const words = Number(values["state-words"]);

const QUESTIONS: Question[] = [
  {
    type: "choice",
    instructions: "What is the ticket about?",
    criteria: { billing: "money, invoices", technical: "bugs, outages", account: "login, profile", other: null },
  },
  { type: "noul", instructions: "The customer is angry.", criteria: { true: "strong negative tone" } },
  { type: "score", instructions: "How urgent is it?", criteria: ["not urgent", "low", "medium", "high", "critical"] },
];
const OTHER: Question[] = [
  { type: "choice", instructions: "Which team should answer?", criteria: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`team ${i}`, null])) },
];
const VOCABULARY = "charge refund card bank account order delivery late twice again support agent week month invoice".split(" ");
const stateText = (variant: number) =>
  `Ticket ${variant}: ` + Array.from({ length: words }, (_, i) => VOCABULARY[(i * 7 + variant * 3) % VOCABULARY.length]).join(" ");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(engine: LlamaEngine, state: string, questions: Question[]): Promise<number> {
  const prepared = await engine.prepare(buildPrompt(state, questions));
  const started = performance.now();
  await engine.evaluate(prepared);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const open = (exactness: "strict" | "tolerant") =>
    createLlamaEngine({
      model,
      modelsDir: ".",
      contextSize: 4096,
      maxRequestTokens: 100_000,
      threads: Number(values.threads),
      gpu: "off",
      slots: 1,
      exactness,
    });
  const strict = open("strict");
  const tolerant = open("tolerant");
  await Promise.all([strict.ready, tolerant.ready]);
  const rows: Record<"fresh" | "cached", { strict: number[]; tolerant: number[]; ratio: number[] }> = {
    fresh: { strict: [], tolerant: [], ratio: [] },
    cached: { strict: [], tolerant: [], ratio: [] },
  };
  // A warm-up pair, not counted.
  await timed(strict, stateText(-1), QUESTIONS);
  await timed(tolerant, stateText(-1), QUESTIONS);
  for (let i = 0; i < requests; i++) {
    // Alternate which engine goes first, so a slower moment of a shared machine hits both.
    const order =
      i % 2 === 0
        ? ([
            ["strict", strict],
            ["tolerant", tolerant],
          ] as const)
        : ([
            ["tolerant", tolerant],
            ["strict", strict],
          ] as const);
    const times: Record<string, { fresh: number; cached: number }> = {};
    for (const [name, engine] of order) {
      const fresh = await timed(engine, stateText(i), QUESTIONS);
      const cached = await timed(engine, stateText(i), OTHER);
      times[name] = { fresh, cached };
    }
    for (const kind of ["fresh", "cached"] as const) {
      rows[kind].strict.push(times.strict[kind]);
      rows[kind].tolerant.push(times.tolerant[kind]);
      rows[kind].ratio.push(times.strict[kind] / times.tolerant[kind]);
    }
    console.error(
      `pair ${i + 1}/${requests}: fresh ${times.strict.fresh.toFixed(0)} / ${times.tolerant.fresh.toFixed(0)} ms, cached ${times.strict.cached.toFixed(0)} / ${times.tolerant.cached.toFixed(0)} ms`,
    );
  }
  const tokens = (await strict.prepare(buildPrompt(stateText(0), QUESTIONS))).inputTokens;
  console.log(`model ${model}; ${tokens} input tokens per new-state request; ${requests} pairs, concurrency 1, 1 slot`);
  for (const kind of ["fresh", "cached"] as const) {
    const r = rows[kind];
    console.log(
      `${kind === "fresh" ? "new state (3 questions)" : "cached state (30-option choice)"}: strict p50 ${median(r.strict).toFixed(0)} ms, tolerant (reads as before) p50 ${median(r.tolerant).toFixed(0)} ms, median ratio strict/tolerant ${median(r.ratio).toFixed(3)}`,
    );
  }
  await Promise.all([strict.close(), tolerant.close()]);
}

await main();
