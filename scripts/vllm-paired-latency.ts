/**
 * vLLM's native /v1/systemone against our service on the same vLLM, request by request: pairs of
 * `judge bench`'s request shape (a new state each, so neither finds a prompt vLLM has cached),
 * the two targets alternating which goes first, at concurrency 1. Sequential benches of one
 * target after the other move with the machine's load between them; a pair shares it.
 *
 *   npx tsx scripts/vllm-paired-latency.ts --native <vLLM url> --model <served name> --ours <url> --key-file <file> [--pairs 20] [--seed 7]
 *
 * Prints a markdown table: median latency per target, the median of the per-pair ratios, and
 * our engine's own time (timing_ms).
 */
import { readFile } from "node:fs/promises";
import { createRequestGenerator, type RequestShape } from "../src/bench/requests.js";

const args = process.argv.slice(2);
const flag = (name: string, fallback?: string) => {
  const i = args.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < args.length) return args[i + 1];
  if (fallback === undefined) throw new Error(`--${name} is required`);
  return fallback;
};
const native = flag("native").replace(/\/$/, "");
const ours = flag("ours").replace(/\/$/, "");
const model = flag("model");
const key = (await readFile(flag("key-file"), "utf8")).trim();
const pairs = Number(flag("pairs", "20"));
const shape: RequestShape = { stateTokens: 300, questions: 3, options: 4 };
// About 1.3 tokens per generated word on SmolLM2's tokenizer: ~300-token states, as judge bench sends.
const next = createRequestGenerator(shape, { seed: Number(flag("seed", "7")), tokensPerWord: 1.3 });

async function ask(target: "native" | "ours", body: Record<string, unknown>) {
  const started = performance.now();
  const response = await fetch(`${target === "native" ? native : ours}/v1/systemone`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(target === "ours" && { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(target === "native" ? { ...body, model } : body),
  });
  const reply = (await response.json()) as { timing_ms?: number };
  if (!response.ok) throw new Error(`${target}: ${response.status} ${JSON.stringify(reply).slice(0, 300)}`);
  return { ms: performance.now() - started, timingMs: reply.timing_ms ?? Number.NaN };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// One unmeasured pair first: connections open, the servers' first-request work done.
await ask("native", JSON.parse(next().body));
await ask("ours", JSON.parse(next().body));
const nativeMs: number[] = [];
const oursMs: number[] = [];
const oursEngineMs: number[] = [];
for (let i = 0; i < pairs; i++) {
  const order: ("native" | "ours")[] = i % 2 ? ["native", "ours"] : ["ours", "native"];
  for (const target of order) {
    const result = await ask(target, JSON.parse(next().body));
    if (target === "native") nativeMs.push(result.ms);
    else {
      oursMs.push(result.ms);
      oursEngineMs.push(result.timingMs);
    }
  }
}
const ratios = oursMs.map((ms, i) => ms / nativeMs[i]);
console.log(`Paired latency at concurrency 1, ${pairs} pairs (3 questions of 4 options, ~300-token states, a new state per request):\n`);
console.log("| Target | p50 ms | Our engine's timing_ms, p50 |");
console.log("|---|---|---|");
console.log(`| vLLM native /v1/systemone | ${median(nativeMs).toFixed(0)} | — |`);
console.log(`| ours on vLLM | ${median(oursMs).toFixed(0)} | ${median(oursEngineMs).toFixed(0)} |`);
console.log(`\nMedian of per-pair ratios (ours ÷ native): ${median(ratios).toFixed(2)}; ratio of medians ${(median(oursMs) / median(nativeMs)).toFixed(2)}.`);
