/**
 * Billed requests per second through whole instances (`judge serve` processes on the tiny
 * fixture), by data tier: SQLite; PostgreSQL; PostgreSQL + Redis with one and two instances; one
 * hot account against many accounts. Phases are interleaved over several rounds and medians
 * reported, so machine noise hits every configuration alike. With --profile, one PostgreSQL
 * instance also runs under the V8 CPU profiler and its time is broken down by module.
 *
 *   npx tsx scripts/bench-scale.ts [--duration 10] [--rounds 3] [--concurrency 16] [--profile] [--only <text>]
 *
 * Needs PostgreSQL and Redis as the tests use them (scripts/start-test-services.sh).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../src/bench/stats.js";
import { buildServices } from "../src/services/build.js";
import { deleteRedisKeys, newTestDatabase, REDIS_TEST_URL, type TestDatabase } from "../src/testing/databases.js";
import { tinyFixturePath } from "../src/testing/fixture.js";
import { startInstance, untilHealthy, type Instance } from "../src/testing/instances.js";
import { addTestAccount, testConfig } from "../src/testing/server.js";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "16" },
    profile: { type: "boolean", default: false },
    only: { type: "string" },
  },
});
const durationMs = Number(args.duration) * 1000;
const concurrency = Number(args.concurrency);

interface Phase {
  name: string;
  store: "sqlite" | "postgres";
  redis: boolean;
  instances: number;
  accounts: "one" | "many";
}

const PHASES: Phase[] = [
  { name: "SQLite, 1 instance, one account", store: "sqlite", redis: false, instances: 1, accounts: "one" },
  { name: "PostgreSQL, 1 instance, one account", store: "postgres", redis: false, instances: 1, accounts: "one" },
  { name: "PostgreSQL, 1 instance, many accounts", store: "postgres", redis: false, instances: 1, accounts: "many" },
  { name: "PostgreSQL + Redis, 1 instance, one account", store: "postgres", redis: true, instances: 1, accounts: "one" },
  { name: "PostgreSQL + Redis, 2 instances, one account", store: "postgres", redis: true, instances: 2, accounts: "one" },
  { name: "PostgreSQL + Redis, 2 instances, many accounts", store: "postgres", redis: true, instances: 2, accounts: "many" },
];

/** A minimal request (8-word state, one yes/no question), so the model's share stays small. */
const BODY = JSON.stringify({ state: "Order 1234 was charged twice.", questions: { dup: { type: "noul", instructions: "Charged twice?" } } });

async function runPhase(phase: Phase, model: string, nodeArgs?: string[]): Promise<{ rps: number; p50: number; errors: Record<string, number> }> {
  const database: TestDatabase = newTestDatabase(phase.store);
  const prefix = `bench:${process.pid}:${Date.now()}:`;
  const config = testConfig(database, phase.redis ? { redisPrefix: prefix } : {});
  const services = await buildServices(config);
  const instances: Instance[] = [];
  try {
    // Paid from the balance: the heavier path (a conditional debit and a charge entry per request).
    const plan = { requestsPerMinute: 1_000_000, allowanceQuestions: 0, pricePerMillion: 50_000 };
    const first = await addTestAccount(services, { plan, balanceMicro: 1_000_000_000 });
    const keys = [first.key];
    if (phase.accounts === "many") {
      for (let i = 1; i < concurrency; i++) keys.push((await addTestAccount(services, { planId: first.planId, balanceMicro: 1_000_000_000 })).key);
    }
    const settings: Record<string, string> = {
      JUDGE_DB: database.location,
      JUDGE_MODEL: model,
      JUDGE_THREADS: "1",
      JUDGE_LOG_LEVEL: "warn",
      ...(database.schema ? { JUDGE_DB_SCHEMA: database.schema } : {}),
      ...(phase.redis ? { JUDGE_REDIS_URL: REDIS_TEST_URL, JUDGE_REDIS_PREFIX: prefix } : {}),
    };
    for (let i = 0; i < phase.instances; i++) instances.push(await startInstance(settings, { nodeArgs }));
    for (const instance of instances) await untilHealthy(instance);
    const result = await load(
      instances.map((i) => i.url),
      keys,
    );
    const check = await services.ledger.check();
    if (!check.ok) throw new Error(`ledger check failed after ${phase.name}: ${JSON.stringify(check)}`);
    return result;
  } finally {
    for (const instance of instances) await instance.stop();
    await services.close();
    await database.drop();
    if (phase.redis) await deleteRedisKeys(prefix);
  }
}

/** Closed loop: each client sends its next request when the last is answered; clients spread over the URLs. */
async function load(urls: string[], keys: string[]) {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const send = async (url: string, key: string) => {
    const started = performance.now();
    const response = await fetch(`${url}/v1/systemone`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: BODY,
    });
    await response.arrayBuffer();
    if (response.status === 200) latencies.push(performance.now() - started);
    else errors[response.status] = (errors[response.status] ?? 0) + 1;
  };
  // Warm-up: every client once, unmeasured.
  await Promise.all(Array.from({ length: concurrency }, (_, c) => send(urls[c % urls.length], keys[c % keys.length])));
  latencies.length = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, c) => {
      while (performance.now() < deadline) await send(urls[c % urls.length], keys[c % keys.length]);
    }),
  );
  const elapsed = performance.now() - started;
  return { rps: (latencies.length / elapsed) * 1000, p50: median(latencies) ?? Number.NaN, errors };
}

/** Self time of a .cpuprofile, by where the code lives. */
function profileBreakdown(file: string): [string, number][] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: { id: number; callFrame: { functionName: string; url: string } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const where = new Map(profile.nodes.map((n) => [n.id, categorize(n.callFrame)]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => totals.set(where.get(id)!, (totals.get(where.get(id)!) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const sum = [...totals.values()].reduce((a, b) => a + b, 0);
  return [...totals.entries()].map(([k, v]) => [k, (100 * v) / sum] as [string, number]).sort((a, b) => b[1] - a[1]);
}

function categorize(frame: { functionName: string; url: string }): string {
  if (!frame.url) return frame.functionName.startsWith("(") ? frame.functionName : `native: ${frame.functionName || "(anonymous)"}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return `npm: ${pkg[1]}`;
  if (frame.url.startsWith("node:")) return `node: ${frame.url.slice(5).split("/").slice(0, 2).join("/")}`;
  const src = /\/src\/(.+)$/.exec(frame.url);
  return src ? `ours: ${src[1].split("/")[0]}` : frame.url;
}

const model = await tinyFixturePath();
const rounds = Number(args.rounds);
const results = new Map<string, { rps: number[]; p50: number[]; errors: Record<string, number>[] }>();
for (let round = 1; round <= rounds; round++) {
  for (const phase of PHASES.filter((p) => !args.only || p.name.includes(args.only))) {
    const r = await runPhase(phase, model);
    const entry = results.get(phase.name) ?? { rps: [], p50: [], errors: [] };
    entry.rps.push(r.rps);
    entry.p50.push(r.p50);
    entry.errors.push(r.errors);
    results.set(phase.name, entry);
    process.stderr.write(`round ${round}/${rounds}: ${phase.name}: ${r.rps.toFixed(0)} requests/s, p50 ${r.p50.toFixed(1)} ms ${JSON.stringify(r.errors)}\n`);
  }
}

console.log(
  `\nBilled requests/s, ${concurrency} concurrent clients, ${durationMs / 1000} s per phase, median of ${rounds} rounds (clients, instances, PostgreSQL and Redis share this machine's cores)\n`,
);
console.log("| configuration | requests/s | p50 latency | errors |\n|---|---|---|---|");
for (const [name, r] of results) {
  const errors = r.errors.reduce((n, e) => n + Object.values(e).reduce((a, b) => a + b, 0), 0);
  console.log(`| ${name} | ${median(r.rps)!.toFixed(0)} | ${median(r.p50)!.toFixed(1)} ms | ${errors} |`);
}
const rps = (name: string) => median(results.get(name)?.rps ?? []) ?? Number.NaN;
console.log(`\ntwo instances / one (PostgreSQL + Redis, one account): ${(rps(PHASES[4].name) / rps(PHASES[3].name)).toFixed(2)}`);
console.log(`many accounts / one account (PostgreSQL + Redis, 2 instances): ${(rps(PHASES[5].name) / rps(PHASES[4].name)).toFixed(2)}`);
console.log(`PostgreSQL / SQLite (1 instance, one account): ${(rps(PHASES[1].name) / rps(PHASES[0].name)).toFixed(2)}`);

if (args.profile) {
  const dir = mkdtempSync(join(tmpdir(), "judge-profile-"));
  const phase = PHASES[1];
  const r = await runPhase(phase, model, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  console.log(`\nCPU profile of one instance (${phase.name}, ${r.rps.toFixed(0)} requests/s): self time by module`);
  if (!file) console.log("(no profile written)");
  else for (const [what, share] of profileBreakdown(join(dir, file)).slice(0, 15)) console.log(`  ${share.toFixed(1).padStart(5)}%  ${what}`);
  rmSync(dir, { recursive: true, force: true });
}
