/**
 * The real app (buildServices, buildApp) in its own OS process, on a shared database, with an
 * engine that never answers: a request reserves its charge and then waits forever, so the test
 * can SIGKILL this process between reserve and settle. Run as
 * `node --import tsx server-process.ts '<json options>'`; prints one JSON line
 * { url, key, accountId } once it listens. Driven by worker-pool.ts.
 *
 * It starts through composition.ts's start() like startTestServer, without importing that (which
 * loads node-llama-cpp for the tiny model: seconds this process does not need).
 */
import { parseConfig } from "../config/environment.js";
import { createLogger } from "../logger.js";
import { start } from "../composition.js";
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
  JUDGE_HOST: "127.0.0.1",
  JUDGE_PORT: "0",
});
const services = await buildServices(config);
const plan = await services.plans.create(options.plan);
const { account } = await services.accounts.create({ name: "killed server's account", plan: plan.id });
if (options.balanceMicro) await services.accounts.topUp(account.id, options.balanceMicro, "test balance");
const { key } = await services.keys.create({ accountId: account.id });
try {
  const running = await start(config, {
    services,
    engine: hangingEngine({ inputTokens: options.inputTokens }),
    log: createLogger("silent"),
    sweeper: false,
    releaseDate: "2026-01-01",
  });
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${running.port}`, key, accountId: account.id }) + "\n");
} catch (error) {
  process.stderr.write(String(error));
  process.exit(1);
}
