import type { Config } from "../config/types.js";
import { createDatabaseLimiter } from "../limits/database-limiter.js";
import { createRedisLimiter } from "../limits/redis-limiter.js";
import type { RateLimiter } from "../limits/types.js";
import { createStore } from "../store/store.js";
import { redactUrl } from "../urls.js";
import type { ReportsRepository } from "../store/reports.js";
import type { AdminTokensRepository, AuditRepository, KeysRepository, LedgerCheck, PlansRepository, Store } from "../store/types.js";
import { createAccountsService, type AccountsService } from "./accounts.js";
import { createBillingService, type BillingService } from "./billing.js";
import { createHealthService, type HealthService } from "./health.js";
import { createLimitsService, type LimitsService } from "./limits.js";
import { createMetrics, type Metrics } from "./metrics.js";
import type { JudgingDeps } from "./judging/judge.js";
import { createReadCache } from "./judging/read-cache.js";
import { createTasksService, type TasksService } from "./tasks/service.js";

/** Everything the HTTP routes and the CLI call, built once from the configuration. */
export interface Services {
  accounts: AccountsService;
  billing: BillingService;
  /** What the judging flow needs besides the models (built once here: both judging routes and tasks' fits use it). */
  judging: JudgingDeps;
  /** Tenants' tasks: their examples, fits and versions (services/tasks/). */
  tasks: TasksService;
  limits: LimitsService;
  health: HealthService;
  /** Plans and keys need no policy of their own: their repositories are the service. */
  plans: PlansRepository;
  keys: KeysRepository;
  /** The console's reports and the server errors the edge records: the repository is the service. */
  reports: ReportsRepository;
  ledger: { check(): Promise<LedgerCheck> };
  /** Admin actions, newest first; every admin change writes one in its own transaction. */
  audit: AuditRepository;
  /** Named admin tokens, stored hashed, accepted beside JUDGE_ADMIN_TOKEN. */
  adminTokens: AdminTokensRepository;
  /** The store underneath, for what reports on it (the first-run hint, tests). */
  store: Store;
  limiter: RateLimiter;
  /** Prometheus metrics of this process: the store reports into them, the HTTP edge and /metrics use them. */
  metrics: Metrics;
  close(): Promise<void>;
}

export type ServicesConfig = Pick<
  Config,
  "db" | "dbSchema" | "dbPoolSize" | "dbStatementTimeoutMs" | "redisUrl" | "redisPrefix" | "requestTimeoutMs" | "reservationGraceMs"
> &
  Partial<Pick<Config, "promptCues" | "maxQuestions" | "tasksPerAccount" | "readCacheMb">>;

/**
 * The clock is injectable for tests of periods, windows and expiry; nothing else is. `mustExist`
 * opens only a database that is already this service's (the CLI's administration commands).
 */
export async function buildServices(
  config: ServicesConfig,
  options: { now?: () => number; mustExist?: boolean; backgroundCheckpoints?: boolean } = {},
): Promise<Services> {
  const now = options.now ?? Date.now;
  const metrics = createMetrics();
  const store = await createStore({
    location: config.db,
    schema: config.dbSchema,
    poolSize: config.dbPoolSize,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    // Queueing for a pooled connection is part of a request's wait, bounded like the rest of it.
    connectTimeoutMs: config.requestTimeoutMs,
    now,
    // A hold must outlive any request still running, or the sweeper would release a live one.
    reservationTtlMs: config.requestTimeoutMs + config.reservationGraceMs,
    observe: metrics.storeObserver,
    // Administration must not create a database that a mistyped location names.
    mustExist: options.mustExist,
    backgroundCheckpoints: options.backgroundCheckpoints,
  });
  const limiter = config.redisUrl
    ? await createRedisLimiter({ url: config.redisUrl, prefix: config.redisPrefix })
    : createDatabaseLimiter(store.rateWindows, { now, ping: () => store.ping() });
  const billing = createBillingService(store, now);
  const judging: JudgingDeps = {
    billing,
    requestTimeoutMs: config.requestTimeoutMs,
    promptCues: config.promptCues,
    ...(config.readCacheMb ? { readCache: createReadCache(config.readCacheMb * 1024 * 1024) } : {}),
  };
  const tasks = createTasksService({ tasks: store.tasks, judging, maxTasksPerAccount: config.tasksPerAccount ?? 20 });
  return {
    accounts: createAccountsService(store, now),
    billing,
    judging,
    tasks,
    limits: createLimitsService(limiter),
    health: createHealthService(store, limiter, config.redisUrl ? `Redis ${redactUrl(config.redisUrl)}` : "database"),
    plans: store.plans,
    keys: store.keys,
    reports: store.reports,
    ledger: { check: () => store.ledger.check() },
    audit: store.audit,
    adminTokens: store.adminTokens,
    store,
    limiter,
    metrics,
    async close() {
      // Fits running here end first (failed as interrupted), while the store can still record it.
      await tasks.close();
      await limiter.close();
      await store.close();
    },
  };
}
