import { serve, type ServerType } from "@hono/node-server";
import { fileURLToPath } from "node:url";
import { buildApp } from "./app.js";
import { loadConfig, type Config } from "./config.js";
import { createLlamaEngine } from "./engine/llama-engine.js";
import { loadCalibrationFile, temperaturesFor } from "./judgment/calibration.js";
import { createLogger, type Logger } from "./logger.js";
import type { JudgmentEngine } from "./engine/types.js";
import { buildServices, type Services } from "./services/build.js";
import type { BillingService } from "./services/billing.js";

export interface RunningService {
  server: ServerType;
  port: number;
  close(): Promise<void>;
}

/**
 * Builds every service once from the parsed config, then serves HTTP. `engine` replaces the
 * model only in tests of faults (an engine that stalls or fails).
 */
export async function start(config: Config, options: { engine?: JudgmentEngine } = {}): Promise<RunningService> {
  const log = createLogger(config.logLevel);
  const services = await buildServices(config);
  const engine = options.engine ?? createLlamaEngine({ ...config, showDownloadProgress: process.stdout.isTTY });
  const calibration = config.calibrationPath ? await loadCalibrationFile(config.calibrationPath) : undefined;
  const app = buildApp({
    services,
    engine,
    log,
    requestTimeoutMs: config.requestTimeoutMs,
    adminToken: config.adminToken,
    maxQuestions: config.maxQuestions,
    temperatures: temperaturesFor(calibration, engine.modelId),
    releaseDate: new Date().toISOString().slice(0, 10),
  });

  const sweeper = startSweeper(services.billing, log, config.sweepIntervalMs);
  const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port });
  const port = await listeningPort(server);
  log.info("listening", { url: `http://${config.host}:${port}`, model: engine.modelId, store: services.store.dialect, rate_limits: services.limiter.kind });
  await reportParts(services, log);
  if ((await services.keys.count()) === 0) printFirstKeyHelp(config);
  void Promise.resolve(engine.ready).then(async () => {
    const status = await engine.status();
    if (status.state === "ready") log.info("model ready", { model: engine.modelId });
    else log.error("model unavailable", { detail: status.state === "failed" ? status.detail : status.state });
  });

  return {
    server,
    port,
    async close() {
      clearInterval(sweeper);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
      await services.close();
    },
  };
}

/** Redis can be down at start (the database cannot: the store would not have opened); say what to fix. */
async function reportParts(services: Services, log: Logger): Promise<void> {
  const { rateLimiter } = await services.health.check();
  if (rateLimiter && !rateLimiter.ok) {
    log.error("rate limiter unavailable: requests get 502 rate_limiter_unavailable until Redis answers; start Redis or fix JUDGE_REDIS_URL", {
      redis: rateLimiter.name,
      detail: rateLimiter.detail,
    });
  }
}

/** Stale holds (a crashed process's, or one past its expiry) go back to their accounts. */
function startSweeper(billing: BillingService, log: Logger, intervalMs: number): NodeJS.Timeout {
  let running = false;
  const sweep = async () => {
    // A database that hangs must not pile sweeps up, one per interval.
    if (running) return;
    running = true;
    try {
      const swept = await billing.sweep();
      if (swept.reservations > 0) log.warn("released expired reservations", { count: swept.reservations });
    } catch (error) {
      log.error("sweep failed", { detail: String(error) });
    } finally {
      running = false;
    }
  };
  void sweep();
  return setInterval(() => void sweep(), intervalMs).unref();
}

function listeningPort(server: ServerType): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
}

function printFirstKeyHelp(config: Config): void {
  // A PostgreSQL URL may hold a password: point at the environment rather than print it.
  const db = config.db === "data/judge.db" || /^postgres/i.test(config.db) ? "" : ` --db ${config.db}`;
  process.stderr.write(
    [
      "",
      "No API keys exist yet. Create an account and its first key with:",
      `  npx judge accounts create --name "My team"${db}`,
      `  npx judge keys create --account <account id printed above>${db}`,
      "",
    ].join("\n"),
  );
}

/** Serves until SIGINT or SIGTERM, then stops taking requests and releases the model and database. */
export async function serveUntilSignalled(config: Config): Promise<void> {
  const running = await start(config);
  const shutdown = () => void running.close().then(() => process.exit(0));
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await serveUntilSignalled(loadConfig());
}
