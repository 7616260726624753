import { serve, type ServerType } from "@hono/node-server";
import { buildApp } from "../app.js";
import { createLlamaEngine } from "../engine/llama-engine.js";
import type { JudgmentEngine } from "../engine/types.js";
import { NEUTRAL_TEMPERATURES } from "../judgment/answers.js";
import { createLogger } from "../logger.js";
import { createStore, type Store } from "../store/store.js";
import type { PlanInput } from "../store/types.js";
import { tinyFixturePath } from "./fixture.js";

export interface TestServer {
  url: string;
  /** A valid key of `accountId`. */
  key: string;
  accountId: string;
  store: Store;
  engine: JudgmentEngine;
  /** Every log line the server wrote, to check nothing secret leaks. */
  logLines: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Fault injection only (failing, stalled, loading); the real engine on the tiny model otherwise. */
  engine?: JudgmentEngine;
  maxQuestions?: number;
  /** An injectable clock for the store: rate windows, periods and reservation expiry. */
  now?: () => number;
  /** The test account's plan; by default one too generous to get in the way. */
  plan?: Partial<PlanInput>;
  /** Prepaid balance of the test account, in micro-euros. */
  balanceMicro?: number;
  requestTimeoutMs?: number;
  reservationTtlMs?: number;
  /** A file path to share the database with other processes; in memory by default. */
  dbPath?: string;
  /** The admin API and console are on with this token (TEST_ADMIN_TOKEN by default); null turns them off. */
  adminToken?: string | null;
}

export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

/** So tests that are not about limits never meet one. */
export const UNLIMITED_PLAN: PlanInput = {
  name: "test unlimited",
  requestsPerMinute: 1_000_000,
  allowanceQuestions: 1_000_000_000,
  pricePerMillion: 50_000,
};

/**
 * The real app on a free port: real SQLite store (in memory unless `dbPath`), and by default the
 * real engine on the tiny fixture model.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const store = createStore({ path: options.dbPath ?? ":memory:", now: options.now, reservationTtlMs: options.reservationTtlMs });
  const plan = store.plans.create({ ...UNLIMITED_PLAN, ...options.plan });
  const account = store.accounts.create({ name: "test account", plan: plan.id });
  if (options.balanceMicro) store.ledger.topUp(account.id, options.balanceMicro, "test balance");
  const { key } = store.keys.create({ accountId: account.id, name: "test key" });
  const engine = options.engine ?? (await readyTinyEngine());
  const logLines: string[] = [];
  const app = buildApp({
    engine,
    keys: store.keys,
    rateLimits: store.rateLimits,
    billing: store.billing,
    idempotency: store.idempotency,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    admin: options.adminToken === null ? undefined : { token: options.adminToken ?? TEST_ADMIN_TOKEN, store },
    log: createLogger("debug", (line) => logLines.push(line)),
    maxQuestions: options.maxQuestions ?? 64,
    temperatures: NEUTRAL_TEMPERATURES,
    releaseDate: "2026-01-01",
  });
  const server: ServerType = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    accountId: account.id,
    store,
    engine,
    logLines,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!options.engine) await engine.close();
      store.close();
    },
  };
}

export async function readyTinyEngine() {
  const engine = createLlamaEngine({
    model: await tinyFixturePath(),
    modelsDir: ".",
    contextSize: 8192,
    maxRequestTokens: 100_000,
    threads: 1,
  });
  await engine.ready;
  return engine;
}
