import { serve, type ServerType } from "@hono/node-server";
import { fileURLToPath } from "node:url";
import { buildApp } from "./app.js";
import { loadConfig, type Config } from "./config.js";
import { createLlamaEngine } from "./engine/llama-engine.js";
import { loadCalibrationFile, temperaturesFor } from "./judgment/calibration.js";
import { createLogger, type Logger } from "./logger.js";
import { createStore, type Store } from "./store/store.js";

export interface RunningService {
  server: ServerType;
  port: number;
  close(): Promise<void>;
}

/** Builds every service once from the parsed config, then serves HTTP. */
export async function start(config: Config): Promise<RunningService> {
  const log = createLogger(config.logLevel);
  // A hold must outlive any request still running, or the sweeper would release a live one.
  const store = createStore({ path: config.dbPath, reservationTtlMs: config.requestTimeoutMs + 60_000 });
  const engine = createLlamaEngine({ ...config, showDownloadProgress: process.stdout.isTTY });
  const calibration = config.calibrationPath ? await loadCalibrationFile(config.calibrationPath) : undefined;
  const app = buildApp({
    engine,
    keys: store.keys,
    rateLimits: store.rateLimits,
    billing: store.billing,
    idempotency: store.idempotency,
    requestTimeoutMs: config.requestTimeoutMs,
    admin: config.adminToken ? { token: config.adminToken, store } : undefined,
    log,
    maxQuestions: config.maxQuestions,
    temperatures: temperaturesFor(calibration, engine.modelId),
    releaseDate: new Date().toISOString().slice(0, 10),
  });

  const sweeper = startSweeper(store, log);
  const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port });
  const port = await listeningPort(server);
  log.info("listening", { url: `http://${config.host}:${port}`, model: engine.modelId });
  if (store.keys.count() === 0) printFirstKeyHelp(config);
  void engine.ready.then(() => {
    const status = engine.status();
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
      store.close();
    },
  };
}

/** Stale holds (a crashed process's, or one past its expiry) go back to their accounts. */
const SWEEP_INTERVAL_MS = 10_000;

function startSweeper(store: Store, log: Logger): NodeJS.Timeout {
  const sweep = () => {
    try {
      const swept = store.billing.sweep();
      if (swept.reservations > 0) log.warn("released expired reservations", { count: swept.reservations });
    } catch (error) {
      log.error("sweep failed", { detail: String(error) });
    }
  };
  sweep();
  return setInterval(sweep, SWEEP_INTERVAL_MS).unref();
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
  const db = config.dbPath === "data/judge.db" ? "" : ` --db ${config.dbPath}`;
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
