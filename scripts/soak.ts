/**
 * Soak test: keeps the service saturated (closed loop: `--concurrency` requests always in
 * flight) for `--duration` seconds and prints, every `--interval` seconds, throughput, errors,
 * latency and the server's memory (RSS, V8 heap), CPU and engine queue, read from its /metrics.
 *
 *   npx tsx scripts/soak.ts [--duration 600] [--concurrency 4] [--interval 10] [--model file.gguf] [--threads N]
 *       starts `judge serve` itself (the tiny fixture model unless --model) on a fresh database
 *   npx tsx scripts/soak.ts --url http://host:8080 --key tjs_… [--metrics-url http://127.0.0.1:9464/metrics | --admin-token …]
 *       soaks a running server; memory comes from its /metrics when one of the two is given
 *
 * Requests are realistic (src/bench/requests.ts): a new random state each time, 3 questions.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createBenchClient } from "../src/bench/http-client.js";
import type { Outcome } from "../src/bench/load.js";
import { createRequestGenerator } from "../src/bench/requests.js";
import { parseExposition, sampleValue, type Sample } from "../src/testing/prometheus.js";
import { tinyFixturePath } from "../src/testing/fixture.js";
import { freePort } from "../src/testing/instances.js";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    key: { type: "string" },
    "metrics-url": { type: "string" },
    "admin-token": { type: "string" },
    model: { type: "string" },
    threads: { type: "string" },
    duration: { type: "string", default: "60" },
    concurrency: { type: "string", default: "4" },
    interval: { type: "string", default: "10" },
    "state-tokens": { type: "string", default: "200" },
    questions: { type: "string", default: "3" },
    seed: { type: "string", default: "1" },
  },
});
const durationMs = Number(values.duration) * 1000;
const intervalMs = Number(values.interval) * 1000;
const concurrency = Number(values.concurrency);
for (const [name, value] of [
  ["duration", durationMs],
  ["interval", intervalMs],
  ["concurrency", concurrency],
] as const) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
}

interface Target {
  url: string;
  key: string;
  scrape?: () => Promise<Sample[]>;
  stop?: () => Promise<string>;
}

const target = values.url ? remoteTarget() : await startOwnServer();
const generate = createRequestGenerator(
  { stateTokens: Number(values["state-tokens"]), questions: Number(values.questions), options: 4 },
  { seed: Number(values.seed), tokensPerWord: 1.3 },
);
const client = createBenchClient({ url: target.url, key: target.key, maxSockets: concurrency });

interface Window {
  startedAt: number;
  ok: number;
  errors: Map<string, number>;
  latencies: number[];
}
const newWindow = (): Window => ({ startedAt: performance.now(), ok: 0, errors: new Map(), latencies: [] });
let window = newWindow();
const totals = { ok: 0, errors: new Map<string, number>() };

function record(outcome: Outcome): void {
  window.latencies.push(outcome.latencyMs);
  if (outcome.status === 200 && !outcome.error) return void window.ok++;
  const kind = `${outcome.status} ${outcome.error ?? ""}`.trim();
  window.errors.set(kind, (window.errors.get(kind) ?? 0) + 1);
}

const started = performance.now();
const deadline = started + durationMs;
const worker = async () => {
  while (performance.now() < deadline) {
    const outcome = await client.send(generate());
    record(outcome);
    // A limited key: wait as told rather than measure the limit (the server still sees load).
    if (outcome.status === 429) await sleep(Math.min(outcome.retryAfterMs ?? 1000, Math.max(0, deadline - performance.now())));
  }
};

const memory: { at: number; rss: number; heap: number }[] = [];
let lastCpu: { at: number; seconds: number } | undefined;
console.log(`soak: ${target.url}, ${concurrency} in flight, ${durationMs / 1000} s, a line every ${intervalMs / 1000} s`);
console.log(["time", "requests", "req/s", "errors", "p50 ms", "p99 ms", "RSS MB", "heap MB", "CPU %", "queue"].map((h) => h.padStart(9)).join(""));
const workers = Array.from({ length: concurrency }, worker);
const ticker = setInterval(() => void report(), intervalMs);
await Promise.all(workers);
clearInterval(ticker);
if (window.latencies.length > 0) await report();
client.close();
await summarise();

async function report(): Promise<void> {
  const current = window;
  window = newWindow();
  const elapsed = performance.now() - started;
  totals.ok += current.ok;
  for (const [kind, n] of current.errors) totals.errors.set(kind, (totals.errors.get(kind) ?? 0) + n);
  const errors = [...current.errors.values()].reduce((a, b) => a + b, 0);
  const requests = current.ok + errors;
  const sorted = current.latencies.sort((a, b) => a - b);
  const server = await serverFigures(elapsed);
  const cells = [
    `${Math.round(elapsed / 1000)}s`,
    String(requests),
    (requests / ((performance.now() - current.startedAt) / 1000)).toFixed(1),
    String(errors),
    quantile(sorted, 0.5),
    quantile(sorted, 0.99),
    server.rss,
    server.heap,
    server.cpu,
    server.queue,
  ];
  console.log(cells.map((c) => c.padStart(9)).join(""));
}

async function serverFigures(elapsedMs: number) {
  const none = { rss: "-", heap: "-", cpu: "-", queue: "-" };
  if (!target.scrape) return none;
  const samples = await target.scrape().catch(() => undefined);
  if (!samples) return none;
  const rss = sampleValue(samples, "process_resident_memory_bytes");
  const heap = sampleValue(samples, "nodejs_heap_size_used_bytes");
  memory.push({ at: elapsedMs, rss, heap });
  const cpuSeconds = sampleValue(samples, "process_cpu_seconds_total");
  const cpu = lastCpu ? ((100 * (cpuSeconds - lastCpu.seconds)) / ((elapsedMs - lastCpu.at) / 1000)).toFixed(0) : "-";
  lastCpu = { at: elapsedMs, seconds: cpuSeconds };
  const queue = samples.filter((s) => s.name === "judge_engine_queue_depth").reduce((sum, s) => sum + s.value, 0);
  return { rss: mb(rss), heap: mb(heap), cpu, queue: String(queue) };
}

async function summarise(): Promise<void> {
  const errors = [...totals.errors.values()].reduce((a, b) => a + b, 0);
  const seconds = (performance.now() - started) / 1000;
  console.log(`\ntotal: ${totals.ok + errors} requests in ${seconds.toFixed(0)} s (${((totals.ok + errors) / seconds).toFixed(1)}/s), ${errors} errors`);
  for (const [kind, n] of totals.errors) console.log(`  ${n} × ${kind}`);
  if (memory.length > 1) {
    const [first, last] = [memory[0], memory[memory.length - 1]];
    const peak = (key: "rss" | "heap") => Math.max(...memory.map((m) => m[key]));
    console.log(`RSS ${mb(first.rss)} → ${mb(last.rss)} MB (peak ${mb(peak("rss"))}); heap ${mb(first.heap)} → ${mb(last.heap)} MB (peak ${mb(peak("heap"))})`);
    const half = memory.slice(Math.floor(memory.length / 2));
    if (half.length > 1)
      console.log(
        `RSS trend over the second half: ${signed(slopePerMinute(half, "rss") / 2 ** 20)} MB/min, heap ${signed(slopePerMinute(half, "heap") / 2 ** 20)} MB/min`,
      );
  }
  if (target.stop) console.log(await target.stop());
}

function remoteTarget(): Target {
  if (!values.key) throw new Error("--key is required with --url");
  const metricsUrl = values["metrics-url"] ?? (values["admin-token"] ? `${values.url!.replace(/\/+$/, "")}/metrics` : undefined);
  const headers: Record<string, string> = values["admin-token"] ? { authorization: `Bearer ${values["admin-token"]}` } : {};
  return { url: values.url!, key: values.key, scrape: metricsUrl ? () => scrapeUrl(metricsUrl, headers) : undefined };
}

/** `judge serve` in its own process (so its memory is its own), on a fresh database, with a key of an unlimited plan. */
async function startOwnServer(): Promise<Target> {
  const repoRoot = fileURLToPath(new URL("../", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "judge-soak-"));
  const logPath = join(dir, "server.log");
  const log = openSync(logPath, "w");
  const adminToken = randomBytes(24).toString("hex");
  const metricsPort = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("JUDGE_")));
  const child: ChildProcess = spawn(process.execPath, ["bin/judge.js", "serve"], {
    cwd: repoRoot,
    stdio: ["ignore", log, log],
    env: {
      ...env,
      JUDGE_DB: join(dir, "soak.db"),
      JUDGE_MODEL: values.model ?? (await tinyFixturePath()),
      JUDGE_HOST: "127.0.0.1",
      JUDGE_PORT: String(await freePort()),
      JUDGE_METRICS_PORT: String(metricsPort),
      JUDGE_ADMIN_TOKEN: adminToken,
      ...(values.threads ? { JUDGE_THREADS: values.threads } : {}),
    },
  });
  closeSync(log);
  // Whatever ends this script (an error, Ctrl-C) ends the server it started.
  process.once("exit", () => child.kill("SIGKILL"));
  process.once("SIGINT", () => process.exit(130));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await untilListening(logPath, child);
  for (
    let tries = 0;
    (await fetch(`${url}/health`).then(
      (r) => r.status,
      () => 0,
    )) !== 200;
    tries++
  ) {
    if (tries > 600) throw new Error(`the server never became healthy:\n${readFileSync(logPath, "utf8")}`);
    await sleep(100);
  }
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { id: string; key?: string };
  };
  await admin("/admin/v1/plans", { name: "soak", requests_per_minute: 1_000_000, allowance_questions: 1_000_000_000, price_per_million: "0.05" });
  const account = await admin("/admin/v1/accounts", { name: "soak", plan: "soak" });
  const { key } = await admin(`/admin/v1/accounts/${account.id}/keys`, { name: "soak" });
  return {
    url,
    key: key!,
    scrape: () => scrapeUrl(`http://127.0.0.1:${metricsPort}/metrics`, {}),
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      const logBytes = statSync(logPath).size;
      rmSync(dir, { recursive: true, force: true });
      return `server stopped on SIGTERM with exit code ${code}; it wrote ${(logBytes / 1024).toFixed(0)} KB of logs`;
    },
  };
}

async function untilListening(logPath: string, child: ChildProcess): Promise<string> {
  for (let tries = 0; tries < 600; tries++) {
    if (child.exitCode !== null) break;
    for (const line of readFileSync(logPath, "utf8").split("\n")) {
      if (line.includes('"message":"listening"')) return (JSON.parse(line) as { url: string }).url;
    }
    await sleep(100);
  }
  throw new Error(`the server did not start:\n${readFileSync(logPath, "utf8")}`);
}

async function scrapeUrl(url: string, headers: Record<string, string>): Promise<Sample[]> {
  const response = await fetch(url, { headers });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return parseExposition(await response.text());
}

/** Least-squares slope of `key` against time, per minute. */
function slopePerMinute(points: { at: number; rss: number; heap: number }[], key: "rss" | "heap"): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.at, 0) / n;
  const my = points.reduce((s, p) => s + p[key], 0) / n;
  const sxy = points.reduce((s, p) => s + (p.at - mx) * (p[key] - my), 0);
  const sxx = points.reduce((s, p) => s + (p.at - mx) ** 2, 0);
  return sxx === 0 ? 0 : (sxy / sxx) * 60_000;
}

function quantile(sorted: number[], q: number): string {
  return sorted.length === 0 ? "-" : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
}

function mb(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

function signed(x: number): string {
  return `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;
}
