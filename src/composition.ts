import { serve, type ServerType } from "@hono/node-server";
import { buildApp } from "./app.js";
import { firstKeyHelp } from "./cli/follow-up.js";
import { modelHelp } from "./config/help.js";
import type { Config } from "./config/types.js";
import type { JudgmentEngine } from "./engine/types.js";
import { messageOf } from "./error-message.js";
import { startHttpServer } from "./http/node-server.js";
import { temperaturesFor } from "./judgment/calibration.js";
import { promptStyleFor } from "./judgment/prompt.js";
import { createLogger, type Logger } from "./logger.js";
import { buildMetricsApp } from "./routes/metrics/route.js";
import { buildServices, type Services } from "./services/build.js";
import { loadCalibrationFile } from "./services/calibration-file.js";
import { declaredModelsRegistry, singleModelRegistry, type CreateEngine, type ModelRegistry } from "./services/served-models/registry.js";

/**
 * The one composition root: from a parsed Config it builds the services (store, rate limiter,
 * billing, metrics), the served models and their registry, the calibration profile and the app,
 * and serves them on the production HTTP server. npm start and `judge serve` (through main.ts,
 * which owns the process: signals, exit codes) and the tests' servers all start here, so what
 * a test serves is wired as production is.
 */

export interface RunningService {
  server: ServerType;
  port: number;
  services: Services;
  /** The served models (one without JUDGE_MODELS). */
  models: ModelRegistry;
  /**
   * Stops taking connections, lets the requests in flight finish for up to `graceMs`
   * (JUDGE_SHUTDOWN_GRACE_MS), aborts the rest (their holds are released), then closes the
   * model and the stores.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** A start that failed for a reason the operator fixes from the message alone: printed as one line. */
export class StartupError extends Error {
  override name = "StartupError";
}

/** What only tests replace; everything else a test serves is built as in production. */
export interface StartOptions {
  /** Replaces the model: an engine that stalls or fails, or a test file's shared tiny model. */
  engine?: JudgmentEngine;
  /** Whether close() closes the engine too; not when the caller shares it. */
  ownsEngine?: boolean;
  /** Services built by the caller (a test that seeds accounts first or injects a clock); closed by close(). */
  services?: Services;
  log?: Logger;
  /** The sweeper of expired holds (on unless false): tests of expiry drive it themselves. */
  sweeper?: boolean;
  /** GET /v1/models's release date; the day of the start unless given. */
  releaseDate?: string;
}

/** Builds every service once from the parsed config, then serves HTTP. */
export async function start(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const log = options.log ?? createLogger(config.logLevel);
  // A serving process checkpoints SQLite's WAL off the event loop (store/sqlite-checkpointer.ts).
  const services = options.services ?? (await buildServices(config, { backgroundCheckpoints: true }));
  let models: ModelRegistry | undefined;
  try {
    models = await startupStep("cannot set up the engine", () => buildModels(config, services, { engine: options.engine }));
    const calibration = await loadCalibration(config);
    return await serveWith(config, log, services, models, calibration, options);
  } catch (error) {
    await closeQuietly(options.ownsEngine === false ? undefined : models, services, Date.now() + TEARDOWN_MS);
    throw error;
  }
}

/**
 * The served models and their registry, as the config describes them (JUDGE_MODELS, or the one
 * model of the single-model settings); an engine handed in (tests) replaces them. start() and
 * the CLI's fits (`judge tasks … --wait`) build them here, so a fit reads through the models a
 * server would serve. The caller closes the registry.
 */
export async function buildModels(
  config: Config,
  services: Pick<Services, "metrics">,
  options: { engine?: JudgmentEngine; showDownloadProgress?: boolean } = {},
): Promise<ModelRegistry> {
  if (options.engine) return singleModelRegistry(options.engine, services.metrics);
  // Loaded only when needed: the engines' modules load node-llama-cpp, which takes seconds.
  const { createEngine } = await import("./engine/factory.js");
  const showDownloadProgress = options.showDownloadProgress ?? process.stdout.isTTY;
  const create: CreateEngine = (engineConfig) => createEngine(engineConfig, { showDownloadProgress });
  return config.models ? declaredModelsRegistry(config.models, create, services.metrics) : singleModelRegistry(create(config), services.metrics, config);
}

/** The calibration profile of JUDGE_CALIBRATION, if one is set; a StartupError naming the file otherwise. */
export async function loadCalibration(config: Pick<Config, "calibrationPath">): Promise<Calibration | undefined> {
  const path = config.calibrationPath;
  return path ? await startupStep(`cannot use the calibration profile JUDGE_CALIBRATION=${path}`, () => loadCalibrationFile(path)) : undefined;
}

type Calibration = Awaited<ReturnType<typeof loadCalibrationFile>>;

/**
 * How long a running fit's instance may say nothing before a sweep fails it as stopped: it writes
 * progress after every example, each read within one request timeout. The server's sweeper and
 * the CLI (before it fits or deletes a task, so that a killed `judge tasks fit` blocks nothing) use it.
 */
export const fitQuietMs = (requestTimeoutMs: number) => 2 * requestTimeoutMs + 10_000;

async function serveWith(
  config: Config,
  log: Logger,
  services: Services,
  models: ModelRegistry,
  calibration: Calibration | undefined,
  wiring: StartOptions,
): Promise<RunningService> {
  const engine = models.defaultModel.engine;
  const app = buildApp({
    services,
    models,
    log,
    adminToken: config.adminToken,
    maxQuestions: config.maxQuestions,
    // By the id at the time of the request: a remote engine learns its model's id from its server once ready.
    temperaturesOf: (modelId) => temperaturesFor(calibration, modelId),
    debias: config.debias,
    releaseDate: wiring.releaseDate ?? new Date().toISOString().slice(0, 10),
  });

  const http = await startupStep(`cannot listen on ${config.host}:${config.port}`, () =>
    startHttpServer(app.fetch, {
      hostname: config.host,
      port: config.port,
      headersTimeoutMs: config.headersTimeoutMs,
      bodyTimeoutMs: config.bodyTimeoutMs,
      log,
      // No route matched (none could), and no method is known for sure: counted apart, never lost.
      onRefused: (status) => services.metrics.httpRequest({ method: "unknown", route: "refused_by_http_server", status, seconds: 0 }),
    }),
  );
  const { server, port } = http;
  const sweeper = wiring.sweeper === false ? undefined : startSweeper(services, log, config.sweepIntervalMs, config.requestTimeoutMs);
  const { kind, backend, slots } = engine.description;
  log.info("listening", {
    url: `http://${config.host}:${port}`,
    model: engine.modelId,
    ...(models.declared && { models: models.models.map((m) => m.id).join(",") }),
    engine: kind,
    backend,
    slots,
    store: services.store.dialect,
    rate_limits: services.limiter.kind,
  });
  // The operator's way in: printed only when the console exists (an admin token is set), never the token.
  if (config.adminToken) log.info("console", { url: consoleUrl(config.host, port) });
  const metricsPort = config.metricsPort;
  const metricsServer =
    metricsPort === undefined
      ? undefined
      : await startupStep(`cannot serve metrics on 127.0.0.1:${metricsPort}`, () => serveMetrics(services, metricsPort, log));
  await reportParts(services, log);
  if ((await services.keys.count()) === 0) process.stderr.write(firstKeyHelp(config.db, `http://${config.host}:${port}`));
  void Promise.resolve(engine.ready).then(async () => {
    const status = await engine.status();
    if (status.state === "ready") {
      const { exactness, ...described } = engine.description;
      log.info("model ready", {
        model: engine.modelId,
        ...described,
        ...(exactness && {
          exactness: exactness.mode,
          exactness_bound: exactness.bound,
          exactness_measured: exactness.measured,
          exactness_backend: exactness.backendMode,
        }),
        calibrated: calibration !== undefined && Object.hasOwn(calibration.models, engine.modelId),
        // What the prompt is styled for, so an operator can tell which A/B row applies to this model.
        ...(engine.templateFamily && { template_family: engine.templateFamily, prompt_cues: promptStyleFor(engine.templateFamily, config.promptCues).cues }),
      });
    } else {
      log.error("model unavailable", { detail: status.state === "failed" ? status.detail : status.state });
      if (config.engine.kind === "llama") process.stderr.write(modelHelp(status.state === "failed" ? status.detail : status.state));
    }
  });

  return {
    server,
    port,
    services,
    models,
    async close(options = {}) {
      const graceMs = options.graceMs ?? config.shutdownGraceMs;
      // Everything after the grace has a fixed budget, so the default ends within 10 s of the signal.
      const deadline = Date.now() + graceMs + TEARDOWN_MS;
      clearInterval(sweeper);
      log.info("shutting down", { grace_ms: graceMs });
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
      const { aborted } = await http.shutdown(graceMs);
      if (aborted > 0) log.warn("aborted requests still running at the shutdown deadline; their holds were released", { count: aborted });
      const closed = await closeQuietly(wiring.ownsEngine === false ? undefined : models, services, deadline);
      if (!closed) log.warn("the model was still closing at the shutdown deadline; exiting without waiting (the system frees its memory)");
      log.info("stopped");
    },
  };
}

/** Runs one step of the start; its failure becomes a StartupError that says what failed and why. */
async function startupStep<T>(what: string, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new StartupError(`${what}: ${explainStartupError(error)}`, { cause: error });
  }
}

function explainStartupError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE") return "the port is in use by another process (set JUDGE_PORT)";
  if (code === "EACCES") return "permission denied (ports below 1024 need privileges; set JUDGE_PORT)";
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") return "no such address on this machine (check JUDGE_HOST)";
  return messageOf(error);
}

/**
 * After the grace: aborted requests release their holds (at most SETTLE_AFTER_ABORT_MS of
 * http/node-server.ts), then the model and the stores close. With the default 6 s grace the
 * process has exited 9 s after the signal at the latest, inside the 10 s orchestrators allow.
 */
const TEARDOWN_MS = 3_000;
/** Kept for the stores (a pool's close, a WAL checkpoint) out of what is left for the model. */
const STORES_CLOSE_MS = 500;

/**
 * The model may still be loading or slow to free (it cannot be interrupted): closing it must not
 * hold the exit past the deadline; the process's exit frees what it holds. False when it was cut.
 */
async function closeQuietly(engine: { close(): Promise<void> } | undefined, services: Services, deadline: number): Promise<boolean> {
  const engineClosed = await within(
    engine?.close().catch(() => undefined),
    deadline - STORES_CLOSE_MS - Date.now(),
  );
  await within(
    services.close().catch(() => undefined),
    Math.max(STORES_CLOSE_MS, deadline - Date.now()),
  );
  return engineClosed;
}

/** Whether `work` finished within `ms`. */
async function within(work: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms)).unref()));
  const done = await Promise.race([Promise.resolve(work).then(() => true), limit]);
  clearTimeout(timer);
  return done;
}

/**
 * GET /metrics without a token, for a scraper on this host only: bound to the loopback
 * interface whatever JUDGE_HOST is. From elsewhere, scrape the main port with the admin token.
 */
async function serveMetrics(services: Services, port: number, log: Logger): Promise<ServerType> {
  const server = serve({ fetch: buildMetricsApp(services.metrics).fetch, hostname: "127.0.0.1", port });
  log.info("metrics", { url: `http://127.0.0.1:${await listeningPort(server)}/metrics` });
  return server;
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

/**
 * Stale holds (a crashed process's, or one past its expiry) go back to their accounts, and a fit
 * whose instance has said nothing for two request timeouts (it writes progress after every
 * example, each within one) is failed so that its task can be fitted again.
 */
function startSweeper(services: Pick<Services, "billing" | "tasks">, log: Logger, intervalMs: number, requestTimeoutMs: number): NodeJS.Timeout {
  let running = false;
  const sweep = async () => {
    // A database that hangs must not pile sweeps up, one per interval.
    if (running) return;
    running = true;
    try {
      const swept = await services.billing.sweep();
      if (swept.reservations > 0) log.warn("released expired reservations", { count: swept.reservations });
      const fits = await services.tasks.sweep(fitQuietMs(requestTimeoutMs), Date.now());
      if (fits > 0) log.warn("failed fits whose instance stopped", { count: fits });
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

/** The console's address for a browser: a wildcard host (every interface) is reached as localhost. */
export function consoleUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" || host === "" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${reachable}:${port}/console`;
}
