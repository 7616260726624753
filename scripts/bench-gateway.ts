/**
 * Billed requests per second through the System One gateway (JUDGE_ENGINE=systemone) on SQLite,
 * in front of an upstream that answers at once: what the gateway itself costs per request (keys,
 * rate limit, hold, the upstream call, validation, settle). The gateway runs as its own process
 * through composition.ts's start() with JUDGE_ENGINE=systemone (the engine factory's path); the instant
 * upstream and the load (node:http, keep-alive) share this process. With --profile the gateway's measured phase (not its start-up) runs under the V8
 * CPU profiler and its top self-time functions and modules are printed.
 *
 *   npx tsx scripts/bench-gateway.ts [--duration 10] [--concurrency 32] [--rate N] [--questions 1|3] [--log-level warn|info] [--upstream-process] [--profile] [--baseline]
 *
 * Without --rate the 32 clients send as fast as answers come back (closed loop: the throughput
 * ceiling, latency at saturation). With --rate N requests start N times a second (open loop, at
 * most --concurrency in flight); a start delayed by busy clients counts in its latency.
 *
 * --baseline serves the same requests from an in-process engine that answers at once (no
 * upstream call): what the service costs without the gateway, for comparison.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createBenchClient } from "../src/bench/http-client.js";
import { runLoad } from "../src/bench/load.js";
import { summarizeLatencies } from "../src/bench/stats.js";
import { loadConfig } from "../src/config/environment.js";
import type { JudgmentEngine } from "../src/engine/types.js";
import { start } from "../src/composition.js";
import { buildServices } from "../src/services/build.js";
import { newTestDatabase } from "../src/testing/databases.js";
import { cleanEnv, freePort } from "../src/testing/instances.js";
import { addTestAccount, testConfig } from "../src/testing/server.js";
import { fixedAnswerFor, startSystemOneStandIn } from "../src/testing/standins/systemone-upstream.js";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    concurrency: { type: "string", default: "32" },
    rate: { type: "string" },
    questions: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    role: { type: "string" },
    "profile-out": { type: "string" },
    baseline: { type: "boolean", default: false },
    "log-level": { type: "string", default: "warn" },
    "upstream-process": { type: "boolean", default: false },
  },
});

/** The instant upstream: the same valid answer for the same forwarded request, computed once. */
function startInstantUpstream() {
  const answers = new Map<string, string>();
  return startSystemOneStandIn(
    (request) => {
      if (request.path !== "/v1/systemone") return undefined;
      if (request.headers.authorization !== `Bearer ${UPSTREAM_KEY}`) return { status: 401, body: { error: "invalid key" } };
      let answer = answers.get(request.body);
      if (!answer) answers.set(request.body, (answer = fixedAnswerFor(request.body, UPSTREAM_TOKENS)));
      return { body: answer };
    },
    { record: false },
  );
}

/** The same upstream in a process of its own (--upstream-process): the clients' event loop no longer delays its answers. */
async function startUpstreamProcess() {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--role", "upstream"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once("data", (chunk) => resolve(String(chunk).trim()));
    child.once("exit", (code) => reject(new Error(`the upstream process exited (${code})`)));
  });
  return {
    url,
    close: async () => {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

/** The child's role: the gateway as `judge serve` builds it (composition.ts's start(), the engine from the factory). */
async function serveGateway(): Promise<void> {
  const config = loadConfig();
  const running = await start(config, { engine: args.baseline ? instantEngine() : undefined });
  // Profiled only between SIGUSR2 (after the warm-up) and SIGTERM, so start-up is not in it.
  const session = args["profile-out"] ? new Session() : undefined;
  const post = (method: string) => new Promise<any>((resolve, reject) => session!.post(method, (e, r) => (e ? reject(e) : resolve(r))));
  if (session) {
    session.connect();
    process.on("SIGUSR2", () => void post("Profiler.enable").then(() => post("Profiler.start")));
  }
  const stop = async () => {
    if (session) {
      const { profile } = await post("Profiler.stop").catch(() => ({ profile: undefined }));
      if (profile) writeFileSync(args["profile-out"]!, JSON.stringify(profile));
    }
    await running.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
}

/** The baseline: answers every question at once with fixed log-probabilities, read from no model. */
function instantEngine(): JudgmentEngine {
  return {
    modelId: "instant",
    description: { kind: "llama", backend: "none (bench baseline)" },
    status: () => ({ state: "ready" }),
    prepare: async (prompt) => Object.assign({ inputTokens: 40, inputTokensExact: true }, { labels: prompt.questions.map((q) => q.labels.length) }),
    evaluate: async (prepared) => ({
      labelLogProbs: (prepared as unknown as { labels: number[] }).labels.map((n) => Array.from({ length: n }, (_, i) => -0.5 - i)),
      inputTokens: 40,
      timingMs: 0,
    }),
    close: async () => undefined,
  };
}

const UPSTREAM_KEY = "sk-bench-upstream-key";
const UPSTREAM_TOKENS = 40;
/** bench-scale's minimal request (one yes/no question), or a choice/noul/score mix. */
function requestBody(questions: number): string {
  const all = {
    dup: { type: "noul", instructions: "Charged twice?" },
    topic: { type: "choice", instructions: "What is it about?", criteria: { billing: "money", shipping: null, account: "login", other: "else" } },
    urgency: { type: "score", instructions: "How urgent?", criteria: ["none", "low", "some", "high", "critical"] },
  };
  return JSON.stringify({ state: "Order 1234 was charged twice.", questions: Object.fromEntries(Object.entries(all).slice(0, questions)) });
}

async function main(): Promise<void> {
  const durationMs = Number(args.duration) * 1000;
  const concurrency = Number(args.concurrency);
  const body = requestBody(Number(args.questions));

  const upstream = args["upstream-process"] ? await startUpstreamProcess() : await startInstantUpstream();
  const database = newTestDatabase("sqlite");
  const services = await buildServices(testConfig(database));
  // Paid from the balance: the heavier path (a conditional debit and a charge entry per request).
  const plan = { requestsPerMinute: 1_000_000, allowanceQuestions: 0, pricePerMillion: 50_000 };
  const { key, accountId } = await addTestAccount(services, { plan, balanceMicro: 1_000_000_000_000 });
  const profileDir = args.profile ? mkdtempSync(join(tmpdir(), "gateway-profile-")) : undefined;
  const profileFile = profileDir ? join(profileDir, "gateway.cpuprofile") : undefined;
  const gateway = await startGateway(
    args.baseline,
    {
      JUDGE_DB: database.location,
      JUDGE_ENGINE: "systemone",
      JUDGE_ENGINE_URL: upstream.url,
      JUDGE_ENGINE_KEY: UPSTREAM_KEY,
      // warn: no access line per request (info writes one JSON line per request to stderr).
      JUDGE_LOG_LEVEL: args["log-level"],
    },
    profileFile,
  );
  const client = createBenchClient({ url: gateway.url, key, maxSockets: concurrency });
  try {
    await runLoad({ send: client.send, next: () => ({ body, questions: 1 }), concurrency, limit: { requests: concurrency * 20 } });
    if (profileFile) gateway.signal("SIGUSR2");
    const before = await services.accounts.summary(accountId);
    const cpuBefore = processCpuMs(gateway.pid);
    const ratePerSecond = args.rate ? Number(args.rate) : undefined;
    const result = await runLoad({ send: client.send, next: () => ({ body, questions: 1 }), concurrency, limit: { durationMs }, ratePerSecond });
    const gatewayCpuMs = processCpuMs(gateway.pid) - cpuBefore;
    const after = await services.accounts.summary(accountId);
    const charged = before!.usage.balanceMicro - after!.usage.balanceMicro;
    const latency = summarizeLatencies(result.latenciesMs);
    const seconds = result.elapsedMs / 1000;
    const check = await services.ledger.check();
    const what = args.baseline ? "Baseline (in-process instant engine, no upstream)" : "System One gateway";
    const pace = ratePerSecond ? `, paced at ${ratePerSecond} requests/s` : "";
    console.log(`\n${what} on SQLite, ${concurrency} concurrent keep-alive clients${pace}, ${seconds.toFixed(1)} s, ${args.questions} question(s) per request`);
    console.log(`  billed requests/s  ${(result.answered / seconds).toFixed(0)}  (${result.answered} answered, ${result.sent} sent)`);
    console.log(`  latency            p50 ${latency?.p50.toFixed(2)} ms, p99 ${latency?.p99.toFixed(2)} ms, max ${latency?.max.toFixed(2)} ms`);
    console.log(`  errors             ${JSON.stringify(result.errors)} ${result.errorSamples.join(" | ")}`);
    console.log(
      `  charged            ${charged} µ€ (${(charged / Math.max(1, result.answered)).toFixed(2)} µ€ per answered request; ledger ${check.ok ? "consistent" : JSON.stringify(check)})`,
    );
    console.log(
      `  gateway CPU        ${(gatewayCpuMs / Math.max(1, result.answered)).toFixed(3)} ms per request (${((100 * gatewayCpuMs) / result.elapsedMs).toFixed(0)}% of one core); this process ${(result.clientCpuMs / Math.max(1, result.answered)).toFixed(3)} ms per request (load + upstream)`,
    );
  } finally {
    client.close();
    await gateway.stop();
    await upstream.close();
    await services.close();
    await database.drop();
  }
  if (profileDir && profileFile) {
    if (!existsSync(profileFile)) console.log("(no profile written)");
    else {
      printProfile(profileFile);
      console.log(`\nprofile kept at ${profileFile} (open it in Chrome DevTools)`);
    }
  }
}

async function startGateway(baseline: boolean, settings: Record<string, string>, profileFile: string | undefined) {
  const port = await freePort();
  const script = fileURLToPath(import.meta.url);
  const profiling = [...(profileFile ? ["--profile-out", profileFile] : []), ...(baseline ? ["--baseline"] : [])];
  const child = spawn(process.execPath, ["--import", "tsx", script, "--role", "gateway", ...profiling], {
    env: cleanEnv({ ...settings, JUDGE_HOST: "127.0.0.1", JUDGE_PORT: String(port) }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (
    let tries = 0;
    (await fetch(`${url}/health`).then(
      (r) => r.status,
      () => 0,
    )) !== 200;
    tries++
  ) {
    if (tries > 300 || child.exitCode !== null) throw new Error(`the gateway never became healthy; stderr:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid!,
    signal: (name: NodeJS.Signals) => child.kill(name),
    async stop() {
      child.kill("SIGTERM");
      await exit;
    },
  };
}

/** user + system CPU of a process so far (Linux /proc), in ms. */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The top 15 self-time functions and modules of a .cpuprofile. */
function printProfile(file: string): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)!.callFrame;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const fn = `${frame.functionName || "(anonymous)"} ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    const module = moduleOf(frame);
    byModule.set(module, (byModule.get(module) ?? 0) + dt);
  });
  const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, 15);
  console.log(`\nGateway CPU profile (${(total / 1e6).toFixed(1)} s sampled): top 15 self time by function`);
  for (const [name, us] of top(byFunction)) console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
  console.log("\nby module");
  for (const [name, us] of top(byModule)) console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}

function shortUrl(url: string): string {
  return url.replace(/^file:\/\/.*?\/(node_modules|src)\//, "$1/");
}

function moduleOf(frame: { functionName: string; url: string }): string {
  if (!frame.url) return frame.functionName.startsWith("(") ? frame.functionName : `native: ${frame.functionName || "(anonymous)"}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return `npm: ${pkg[1]}`;
  if (frame.url.startsWith("node:")) return `node: ${frame.url.slice(5).split("/").slice(0, 2).join("/")}`;
  const src = /\/src\/(.+)$/.exec(frame.url);
  return src ? `ours: ${src[1]}` : frame.url;
}

if (args.role === "gateway") await serveGateway();
else if (args.role === "upstream") console.log((await startInstantUpstream()).url);
else await main();
