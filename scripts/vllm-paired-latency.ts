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
  const reply = (await response.json()) as { timing_ms?: number; usage?: { input_tokens?: number } };
  if (!response.ok) throw new Error(`${target}: ${response.status} ${JSON.stringify(reply).slice(0, 300)}`);
  return { ms: performance.now() - started, timingMs: reply.timing_ms ?? Number.NaN, inputTokens: reply.usage?.input_tokens ?? Number.NaN };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// One unmeasured pair first: connections open, the servers' first-request work done.
await ask("native", JSON.parse(next().body));
await ask("ours", JSON.parse(next().body));
type Target = "native" | "ours";
// Each request with the target of the one just before it: alternating the order puts half of a
// target's requests after its own kind and half after the other's.
const records: { target: Target; after: Target; ms: number; timingMs: number; inputTokens: number }[] = [];
let previous: Target = "ours";
for (let i = 0; i < pairs; i++) {
  const order: Target[] = i % 2 ? ["native", "ours"] : ["ours", "native"];
  for (const target of order) {
    const result = await ask(target, JSON.parse(next().body));
    records.push({ target, after: previous, ...result });
    previous = target;
  }
}
const of = (target: Target, after?: Target) => records.filter((r) => r.target === target && (after === undefined || r.after === after));
const nativeMs = of("native").map((r) => r.ms);
const oursMs = of("ours").map((r) => r.ms);
const ratios = oursMs.map((ms, i) => ms / nativeMs[i]);
const p50 = (rows: typeof records, key: "ms" | "timingMs" | "inputTokens") => median(rows.map((r) => r[key])).toFixed(0);
console.log(`Paired latency at concurrency 1, ${pairs} pairs (3 questions of 4 options, ~300-token states, a new state per request):\n`);
console.log("| Target | p50 ms | after native, p50 ms | after ours, p50 ms | Our engine's timing_ms, p50 | Input tokens, p50 |");
console.log("|---|---|---|---|---|---|");
for (const [target, name] of [
  ["native", "vLLM native /v1/systemone"],
  ["ours", "ours on vLLM"],
] as const) {
  const timing = target === "ours" ? p50(of(target), "timingMs") : "—";
  console.log(
    `| ${name} | ${p50(of(target), "ms")} | ${p50(of(target, "native"), "ms")} | ${p50(of(target, "ours"), "ms")} | ${timing} | ${p50(of(target), "inputTokens")} |`,
  );
}
console.log(`\nMedian of per-pair ratios (ours ÷ native): ${median(ratios).toFixed(2)}; ratio of medians ${(median(oursMs) / median(nativeMs)).toFixed(2)}.`);
