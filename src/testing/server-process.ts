/**
 * The real app (buildApp, the real store) in its own OS process, on a database file, with an
 * engine that never answers: a request reserves its charge and then waits forever, so the test
 * can SIGKILL this process between reserve and settle. Run as
 * `node --import tsx server-process.ts '<json options>'`; prints one JSON line
 * { url, key, accountId } once it listens. Driven by worker-pool.ts.
 *
 * It wires the app like startTestServer does, without importing it: that would load
 * node-llama-cpp, which takes seconds and is not needed here.
 */
import { serve } from "@hono/node-server";
import { buildApp } from "../app.js";
import { NEUTRAL_TEMPERATURES } from "../judgment/answers.js";
import { createLogger } from "../logger.js";
import { createStore } from "../store/store.js";
import type { PlanInput } from "../store/types.js";
import { hangingEngine } from "./hanging-engine.js";

interface ServerProcessOptions {
  dbPath: string;
  inputTokens: number;
  plan: PlanInput;
  balanceMicro?: number;
  reservationTtlMs?: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as ServerProcessOptions;
const store = createStore({ path: options.dbPath, reservationTtlMs: options.reservationTtlMs });
const plan = store.plans.create(options.plan);
const account = store.accounts.create({ name: "killed server's account", plan: plan.id });
if (options.balanceMicro) store.ledger.topUp(account.id, options.balanceMicro, "test balance");
const { key } = store.keys.create({ accountId: account.id });
const app = buildApp({
  engine: hangingEngine({ inputTokens: options.inputTokens }),
  keys: store.keys,
  rateLimits: store.rateLimits,
  billing: store.billing,
  idempotency: store.idempotency,
  requestTimeoutMs: 60_000,
  log: createLogger("silent"),
  maxQuestions: 64,
  temperatures: NEUTRAL_TEMPERATURES,
  releaseDate: "2026-01-01",
});
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${info.port}`, key, accountId: account.id }) + "\n");
});
server.on("error", (error) => {
  process.stderr.write(String(error));
  process.exit(1);
});
