/**
 * The real app (buildServices, buildApp) in its own OS process, on a shared database, with an
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
import { parseConfig } from "../config.js";
import { NEUTRAL_TEMPERATURES } from "../judgment/answers.js";
import { createLogger } from "../logger.js";
import { buildServices } from "../services/build.js";
import type { PlanInput } from "../store/types.js";
import { hangingEngine } from "./hanging-engine.js";

interface ServerProcessOptions {
  location: string;
  schema?: string;
  inputTokens: number;
  plan: PlanInput;
  balanceMicro?: number;
  /** The hold's life past the request timeout (of 60 s here). */
  reservationGraceMs?: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as ServerProcessOptions;
const config = parseConfig({
  JUDGE_DB: options.location,
  JUDGE_DB_SCHEMA: options.schema,
  JUDGE_REQUEST_TIMEOUT_MS: "60000",
  JUDGE_RESERVATION_GRACE_MS: String(options.reservationGraceMs ?? 60_000),
});
const services = await buildServices(config);
const plan = await services.plans.create(options.plan);
const { account } = await services.accounts.create({ name: "killed server's account", plan: plan.id });
if (options.balanceMicro) await services.accounts.topUp(account.id, options.balanceMicro, "test balance");
const { key } = await services.keys.create({ accountId: account.id });
const app = buildApp({
  services,
  engine: hangingEngine({ inputTokens: options.inputTokens }),
  requestTimeoutMs: config.requestTimeoutMs,
  log: createLogger("silent"),
  maxQuestions: 64,
  temperatures: () => NEUTRAL_TEMPERATURES,
  releaseDate: "2026-01-01",
});
const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${info.port}`, key, accountId: account.id }) + "\n");
});
server.on("error", (error) => {
  process.stderr.write(String(error));
  process.exit(1);
});
