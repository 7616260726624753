// The same fixed request set through two running services (a reference, e.g. the in-process CPU
// engine, and a candidate, e.g. llama-server on a GPU): max and mean |Δp| over every probability,
// and the argmax flips, each flip with the reference's top-two gap (a flip within the measured
// tolerance is a near-tie, not an error). Prints one JSON line.
// With a cache file the reference's answers are read from it when it exists and written to it
// otherwise (one reference, several candidates: a GPU lease is short).
//   npx tsx scripts/gpu-check-compare.ts <reference-url> <reference-key-file> <candidate-url> <candidate-key-file> [requests=16] [state-tokens=300] [reference-cache]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequestGenerator } from "../src/bench/requests.js";
import { endpointUrl } from "../src/clients/judgment-endpoint.js";

const [refUrl, refKeyFile, candUrl, candKeyFile, countArg, stateArg, cacheFile] = process.argv.slice(2);
if (!candKeyFile)
  throw new Error("usage: gpu-check-compare.ts <reference-url> <reference-key-file> <candidate-url> <candidate-key-file> [requests] [state-tokens]");
const count = Number(countArg ?? 16);
const next = createRequestGenerator({ stateTokens: Number(stateArg ?? 300), questions: 3, options: 4 }, { seed: 7, tokensPerWord: 1.3 });

async function ask(url: string, keyFile: string, body: string): Promise<Record<string, { probabilities: Record<string, number> }>> {
  const response = await fetch(endpointUrl(url), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${readFileSync(keyFile, "utf8").trim()}` },
    body,
  });
  const json = (await response.json()) as any;
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(json)}`);
  return json.answers ?? json.judgments ?? json;
}

type Answers = Record<string, { probabilities: Record<string, number> }>;
const cached: Answers[] = cacheFile && existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : [];
const references: Answers[] = [];

let worst = 0;
let sum = 0;
let n = 0;
let questions = 0;
const flips: Array<{ request: number; question: string; gap: number }> = [];
for (let i = 0; i < count; i++) {
  const { body } = next();
  const ref = cached[i] ?? (await ask(refUrl, refKeyFile, body));
  references.push(ref);
  const cand = await ask(candUrl, candKeyFile, body);
  for (const [name, answer] of Object.entries(ref)) {
    const p = answer?.probabilities;
    const q = (cand as any)[name]?.probabilities;
    if (!p || !q) continue;
    questions++;
    for (const key of Object.keys(p)) {
      const d = Math.abs(p[key] - q[key]);
      worst = Math.max(worst, d);
      sum += d;
      n++;
    }
    const top = (x: Record<string, number>) => Object.keys(x).sort((a, b) => x[b] - x[a]);
    const [r1, r2] = top(p);
    if (r1 !== top(q)[0]) flips.push({ request: i, question: name, gap: p[r1] - p[r2] });
  }
}
if (cacheFile && cached.length < references.length) writeFileSync(cacheFile, JSON.stringify(references));
console.log(JSON.stringify({ requests: count, questions, maxAbsDp: worst, meanAbsDp: n ? sum / n : 0, flips }));
