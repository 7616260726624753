import { parseConfig } from "../config/environment.js";
import { createLlamaEngine } from "../engine/llama/engine.js";
import type { JudgmentEngine } from "../engine/types.js";
import { createLogger } from "../logger.js";
import { start } from "../composition.js";
import { buildServices, type Services } from "../services/build.js";
import { isStoreError } from "../record-errors.js";
import type { PlanInput, Store } from "../store/types.js";
import { newTestDatabase, REDIS_TEST_URL, type StoreEngine, type TestDatabase } from "./databases.js";
import { tinyFixturePath } from "./fixture.js";

export interface TestServer {
  url: string;
  /** A valid key of `accountId`. */
  key: string;
  accountId: string;
  services: Services;
  store: Store;
  /** The database the server runs on, for dumps and tampering. */
  database: TestDatabase;
  engine: JudgmentEngine;
  /** Every log line the server wrote, to check nothing secret leaks. */
  logLines: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Fault injection only (failing, stalled, loading); the real engine on the tiny model otherwise. */
  engine?: JudgmentEngine;
  maxQuestions?: number;
  /** An injectable clock for the services: rate windows, periods and reservation expiry. */
  now?: () => number;
  /** The test account's plan; by default one too generous to get in the way. */
  plan?: Partial<PlanInput>;
  /** Prepaid balance of the test account, in micro-euros. */
  balanceMicro?: number;
  requestTimeoutMs?: number;
  /** How long a hold outlives the request timeout (JUDGE_RESERVATION_GRACE_MS). */
  reservationGraceMs?: number;
  /** Which database engine, on a fresh database dropped on close: SQLite unless given. */
  store?: StoreEngine;
  /** An existing database to share with other servers or processes (not dropped on close). */
  database?: TestDatabase;
  /** Rate limits in the real Redis, under this key prefix; in the database otherwise. */
  redisPrefix?: string;
  /** Another Redis than the real one (with `redisPrefix`), e.g. through a proxy a test can cut. */
  redisUrl?: string;
  /** JUDGE_DB_STATEMENT_TIMEOUT_MS: how long a PostgreSQL query or connection may take before a 502. */
  statementTimeoutMs?: number;
  /** JUDGE_DEBIAS: the server's option-order debiasing for requests without `x_debias`. */
  debias?: string;
  /** The admin API and console are on with this token (TEST_ADMIN_TOKEN by default); null turns them off. */
  adminToken?: string | null;
  /** More settings, as the environment would give them (e.g. JUDGE_MODELS and the variables its key_env names). */
  env?: Record<string, string>;
}

export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789abcdef";

/** So tests that are not about limits never meet one. */
export const UNLIMITED_PLAN: PlanInput = {
  name: "test unlimited",
  requestsPerMinute: 1_000_000,
  allowanceQuestions: 1_000_000_000,
  pricePerMillion: 50_000,
};

/** The configuration a test server runs with: the real parser, on the test's database. */
export function testConfig(database: TestDatabase, options: TestServerOptions = {}) {
  return parseConfig({
    JUDGE_DB: database.location,
    JUDGE_DB_SCHEMA: database.schema,
    JUDGE_REDIS_URL: options.redisPrefix === undefined ? undefined : (options.redisUrl ?? REDIS_TEST_URL),
    JUDGE_REDIS_PREFIX: options.redisPrefix,
    JUDGE_DB_STATEMENT_TIMEOUT_MS: options.statementTimeoutMs === undefined ? undefined : String(options.statementTimeoutMs),
    JUDGE_REQUEST_TIMEOUT_MS: String(options.requestTimeoutMs ?? 30_000),
    JUDGE_RESERVATION_GRACE_MS: options.reservationGraceMs === undefined ? undefined : String(options.reservationGraceMs),
    JUDGE_DEBIAS: options.debias,
    JUDGE_LOG_LEVEL: "debug",
    JUDGE_HOST: "127.0.0.1",
    JUDGE_PORT: "0",
    JUDGE_MAX_QUESTIONS: String(options.maxQuestions ?? 64),
    JUDGE_ADMIN_TOKEN: options.adminToken === null ? undefined : (options.adminToken ?? TEST_ADMIN_TOKEN),
    ...options.env,
  });
}

/**
 * An account on `plan` (merged over the unlimited plan) with a balance and a key. The first
 * plan on a database is named "test unlimited" (tests refer to it by name); plan names are
 * unique, so further accounts on the same database get plans of their own names.
 */
export async function addTestAccount(services: Services, options: { plan?: Partial<PlanInput>; planId?: string; balanceMicro?: number } = {}) {
  const planId = options.planId ?? (await createTestPlan(services, options.plan)).id;
  const { account } = await services.accounts.create({ name: "test account", plan: planId });
  if (options.balanceMicro) await services.accounts.topUp(account.id, options.balanceMicro, "test balance");
  const { key } = await services.keys.create({ accountId: account.id, name: "test key" });
  return { accountId: account.id, key, planId };
}

async function createTestPlan(services: Services, plan: Partial<PlanInput> = {}) {
  try {
    return await services.plans.create({ ...UNLIMITED_PLAN, ...plan });
  } catch (error) {
    if (!isStoreError(error, "plan_exists") || plan.name !== undefined) throw error;
    return services.plans.create({ ...UNLIMITED_PLAN, name: `test plan ${Math.random().toString(36).slice(2)}`, ...plan });
  }
}

/**
 * The real service on a free port, started through composition.ts's `start` as `npm start`
 * does (the production HTTP server, its timeouts and shutdown included), on services built by
 * buildServices from a parsed configuration: a real database (SQLite unless `store` or
 * `database` says PostgreSQL), and by default the real engine on the tiny fixture model.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const database = options.database ?? newTestDatabase(options.store ?? "sqlite");
  const config = testConfig(database, options);
  const services = await buildServices(config, { now: options.now });
  const { accountId, key } = await addTestAccount(services, options);
  // With JUDGE_MODELS the server builds its own models, as in production.
  const injected = config.models ? undefined : (options.engine ?? (await readyTinyEngine()));
  const logLines: string[] = [];
  const running = await start(config, {
    services,
    engine: injected,
    // An injected engine is the test's to close.
    ownsEngine: !options.engine,
    log: createLogger("debug", (line) => logLines.push(line)),
    // Tests of expiry sweep when they choose; a background sweep would race them.
    sweeper: false,
    releaseDate: "2026-01-01",
  });
  return {
    url: `http://127.0.0.1:${running.port}`,
    key,
    accountId,
    services,
    store: services.store,
    database,
    engine: injected ?? running.models.defaultModel.engine,
    logLines,
    async close() {
      await running.close();
      if (!options.database) await database.drop();
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
