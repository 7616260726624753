import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EngineStats, ExactnessReport, JudgmentEngine } from "../engine/types.js";

/**
 * The service's Prometheus metrics, built once per process (buildServices) and fed by the HTTP
 * edge (requests, billing outcomes, rate-limit refusals), the engine seam (meterEngine) and the
 * store boundary (storeObserver). Served as text by GET /metrics (src/routes/metrics/route.ts).
 */
export interface Metrics {
  /** Content type and text of the exposition, for a scrape. */
  render(): Promise<{ contentType: string; text: string }>;
  /** One HTTP request answered (or abandoned: status 499), `route` being its pattern, never the raw path. */
  httpRequest(request: { method: string; route: string; status: number; seconds: number }): void;
  /** A request billed to its plan allowance or its prepaid balance, or refused with 402. */
  billingOutcome(outcome: BillingOutcome, model?: string): void;
  /** A request refused with 429. */
  rateLimited(): void;
  /** What the store calls after every repository method (see StoreObserver in store.ts). */
  storeObserver: (operation: string, seconds: number, errorCode?: string) => void;
  /**
   * Counts an engine call in the queue depth while it is in flight, and times it. `model` (the
   * served model's id) labels every engine series; without it the series carry no model label.
   */
  engineCall<T>(phase: EnginePhase, call: () => Promise<T>, model?: string): Promise<T>;
  /** What one evaluation read and how long the model itself was busy with it. */
  engineEvaluated(result: { inputTokens: number; timingMs: number }, model?: string): void;
  /** Reads an engine's own cumulative prefix-cache counters at each scrape (one source per model). */
  readPrefixCacheFrom(stats: () => PrefixCacheStats | undefined, model?: string): void;
  /** Reads the engine's exactness contract (mode, bound, measured figure) at each scrape (one source per model). */
  readExactnessFrom(report: () => ExactnessReport | undefined, model?: string): void;
}

export type BillingOutcome = "plan" | "balance" | "insufficient_funds" | "key_budget_exhausted";
export type EnginePhase = "prepare" | "evaluate";

/** Cumulative since the engine started: prefix tokens taken from the cache, and evaluated afresh. */
export type PrefixCacheStats = EngineStats;

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Process memory (RSS, heap), CPU, event-loop lag, GC, handles: prom-client's standard set.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: "judge_http_requests_total",
    help: "HTTP requests by route pattern, method and status (499: the client closed the connection first).",
    labelNames: ["method", "route", "status"] as const,
    registers,
  });
  const latency = new Histogram({
    name: "judge_http_request_duration_seconds",
    help: "Time from the request's arrival to its response, by route pattern and method.",
    labelNames: ["method", "route"] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const billing = new Counter({
    name: "judge_billing_outcomes_total",
    help: "Judgments billed to the plan allowance or the prepaid balance, and refused with 402 (insufficient_funds, or key_budget_exhausted: the key's own budget).",
    labelNames: ["outcome", "model"] as const,
    registers,
  });
  const rateLimited = new Counter({ name: "judge_rate_limit_rejections_total", help: "Requests refused with 429 by the per-minute rate limit.", registers });
  const queueDepth = new Gauge({
    name: "judge_engine_queue_depth",
    help: "Engine calls (prepare, evaluate) waiting for or in the engine, including abandoned ones it has not yet let go.",
    labelNames: ["phase", "model"] as const,
    registers,
  });
  const engineLatency = new Histogram({
    name: "judge_engine_call_duration_seconds",
    help: "Wall time of an engine call, waiting for the engine included, by phase and outcome.",
    labelNames: ["phase", "outcome", "model"] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const busy = new Counter({
    name: "judge_engine_busy_seconds_total",
    help: "Time the model spent evaluating, as the engine reports it (waiting excluded).",
    labelNames: ["model"] as const,
    registers,
  });
  const tokens = new Counter({ name: "judge_engine_input_tokens_total", help: "Input tokens the model read.", labelNames: ["model"] as const, registers });
  const storeLatency = new Histogram({
    name: "judge_store_operation_duration_seconds",
    help: "Time of one store (database) operation, by repository.method.",
    labelNames: ["operation"] as const,
    buckets: STORE_BUCKETS,
    registers,
  });
  const storeErrors = new Counter({
    name: "judge_store_errors_total",
    help: "Store operations that threw, by operation and code (database_unavailable: the database failed; others: refusals such as plan_exists).",
    labelNames: ["operation", "code"] as const,
    registers,
  });
  const prefixCache = prefixCacheCounter(registers);
  const exactness = new Map<string, () => ExactnessReport | undefined>();
  new Gauge({
    name: "judge_engine_exactness_max_dp",
    help: "The engine's exactness contract: bound = the largest max |Δp| its start-up probe accepts, measured = what it measured (cached vs fresh, alone vs beside other traffic); labelled by mode (strict, tolerant).",
    labelNames: ["mode", "figure", "model"] as const,
    registers,
    collect() {
      this.reset();
      for (const [model, read] of exactness) {
        const report = read();
        if (!report) continue;
        this.set(withModel({ mode: report.mode, figure: "bound" }, model), report.bound);
        if (report.measured !== undefined) this.set(withModel({ mode: report.mode, figure: "measured" }, model), report.measured);
      }
    },
  });

  return {
    async render() {
      return { contentType: registry.contentType, text: await registry.metrics() };
    },
    httpRequest({ method, route, status, seconds }) {
      requests.inc({ method, route, status: String(status) });
      latency.observe({ method, route }, seconds);
    },
    billingOutcome: (outcome, model) => billing.inc(withModel({ outcome }, model)),
    rateLimited: () => rateLimited.inc(),
    storeObserver(operation, seconds, errorCode) {
      storeLatency.observe({ operation }, seconds);
      if (errorCode !== undefined) storeErrors.inc({ operation, code: errorCode });
    },
    async engineCall(phase, call, model) {
      const started = performance.now();
      queueDepth.inc(withModel({ phase }, model));
      let outcome = "error";
      try {
        const result = await call();
        outcome = "ok";
        return result;
      } finally {
        queueDepth.dec(withModel({ phase }, model));
        engineLatency.observe(withModel({ phase, outcome }, model), (performance.now() - started) / 1000);
      }
    },
    engineEvaluated({ inputTokens, timingMs }, model) {
      tokens.inc(withModel({}, model), inputTokens);
      busy.inc(withModel({}, model), timingMs / 1000);
    },
    readPrefixCacheFrom: (stats, model) => prefixCache.readFrom(stats, model),
    readExactnessFrom: (report, model) => void exactness.set(model ?? "", report),
  };
}

/** Counters whose totals the engine keeps; copied at each scrape rather than incremented here. */
function prefixCacheCounter(registers: Registry[]) {
  const sources = new Map<string, () => PrefixCacheStats | undefined>();
  const counter = new Counter({
    name: "judge_engine_prefix_tokens_total",
    help: "Prefix (system text + state) tokens taken from the engine's cache (reused) or evaluated afresh (evaluated); absent when the engine does not say.",
    labelNames: ["outcome", "model"] as const,
    registers,
    collect() {
      this.reset();
      for (const [model, read] of sources) {
        const stats = read();
        if (!stats) continue;
        this.inc(withModel({ outcome: "reused" }, model), stats.prefixTokensReused);
        this.inc(withModel({ outcome: "evaluated" }, model), stats.prefixTokensEvaluated);
      }
    },
  });
  return { counter, readFrom: (stats: () => PrefixCacheStats | undefined, model?: string) => void sources.set(model ?? "", stats) };
}

/** The labels, with `model` when there is one (a single engine metered without a name has none). */
function withModel<T extends Record<string, string>>(labels: T, model: string | undefined): T & { model?: string } {
  return model ? { ...labels, model } : labels;
}

/**
 * The engine as the routes see it, with every prepare and evaluate counted and timed. A Proxy,
 * so whatever else the engine has (its getters, members added to the seam later) passes through.
 * An engine that offers `stats()` feeds the prefix-cache counters.
 */
export function meterEngine(engine: JudgmentEngine, metrics: Metrics, model?: string): JudgmentEngine {
  if (engine.stats) metrics.readPrefixCacheFrom(() => engine.stats?.(), model);
  metrics.readExactnessFrom(() => engine.description.exactness, model);
  const prepare: JudgmentEngine["prepare"] = (prompt, signal) => metrics.engineCall("prepare", () => engine.prepare(prompt, signal), model);
  const evaluate: JudgmentEngine["evaluate"] = async (prepared, signal) => {
    const result = await metrics.engineCall("evaluate", () => engine.evaluate(prepared, signal), model);
    metrics.engineEvaluated(result, model);
    return result;
  };
  return new Proxy(engine, {
    get(target, property) {
      if (property === "prepare") return prepare;
      if (property === "evaluate") return evaluate;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
