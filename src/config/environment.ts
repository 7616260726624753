import { readFileSync } from "node:fs";
import { parseModelsFile } from "./models-file.js";
import { ConfigSchema, type RawConfig } from "./schema.js";
import type { Config } from "./types.js";

/**
 * The service's whole configuration, parsed once from the environment (the settings are in
 * schema.ts). This module is the only place that reads `process.env`; everything else receives a
 * `Config`.
 */

export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = ConfigSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const raw = result.data;
  if (raw.JUDGE_ENGINE !== "llama" && !raw.JUDGE_ENGINE_URL) {
    throw new Error(`Invalid configuration:\n  JUDGE_ENGINE_URL: required when JUDGE_ENGINE is ${raw.JUDGE_ENGINE}`);
  }
  if (raw.JUDGE_ENGINE_FEATURES_URL && raw.JUDGE_ENGINE !== "llama-server" && raw.JUDGE_ENGINE !== "vllm") {
    throw new Error(`Invalid configuration:\n  JUDGE_ENGINE_FEATURES_URL: only engines llama-server and vllm read hidden states from a second server`);
  }
  const config = toConfig(raw);
  if (raw.JUDGE_MODELS !== undefined) config.models = parseModelsFile(raw.JUDGE_MODELS, readModelsFile(raw.JUDGE_MODELS), config, env);
  return config;
}

function readModelsFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(`Invalid configuration: JUDGE_MODELS=${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

function toConfig(raw: RawConfig): Config {
  const exactnessMode = raw.JUDGE_EXACTNESS ?? (raw.JUDGE_ENGINE === "vllm" || raw.JUDGE_ENGINE === "sglang" ? "tolerant" : "strict");
  return {
    host: raw.JUDGE_HOST,
    port: raw.JUDGE_PORT,
    db: raw.JUDGE_DB,
    dbSchema: raw.JUDGE_DB_SCHEMA,
    dbPoolSize: raw.JUDGE_DB_POOL_SIZE,
    dbStatementTimeoutMs: raw.JUDGE_DB_STATEMENT_TIMEOUT_MS,
    redisUrl: raw.JUDGE_REDIS_URL,
    redisPrefix: raw.JUDGE_REDIS_PREFIX,
    engine: {
      kind: raw.JUDGE_ENGINE,
      url: raw.JUDGE_ENGINE_URL,
      featuresUrl: raw.JUDGE_ENGINE_FEATURES_URL,
      key: raw.JUDGE_ENGINE_KEY,
      timeoutMs: raw.JUDGE_ENGINE_TIMEOUT_MS,
      tokenizerConfigPath: raw.JUDGE_ENGINE_TOKENIZER_CONFIG,
      upstreamModel: raw.JUDGE_ENGINE_MODEL,
      upstreamLimits: {
        options: raw.JUDGE_UPSTREAM_MAX_OPTIONS,
        levels: raw.JUDGE_UPSTREAM_MAX_LEVELS,
        questions: raw.JUDGE_UPSTREAM_MAX_QUESTIONS,
      },
      exactness: exactnessMode,
      exactnessBound: raw.JUDGE_EXACTNESS_BOUND,
    },
    gpu: raw.JUDGE_GPU,
    slots: raw.JUDGE_SLOTS,
    model: raw.JUDGE_MODEL,
    modelsDir: raw.JUDGE_MODELS_DIR,
    modelId: raw.JUDGE_MODEL_ID,
    contextSize: raw.JUDGE_CONTEXT_SIZE,
    maxQuestions: raw.JUDGE_MAX_QUESTIONS,
    tasksPerAccount: raw.JUDGE_TASKS_PER_ACCOUNT,
    readCacheMb: raw.JUDGE_READ_CACHE_MB,
    maxRequestTokens: raw.JUDGE_MAX_REQUEST_TOKENS,
    threads: raw.JUDGE_THREADS,
    calibrationPath: raw.JUDGE_CALIBRATION,
    debias: raw.JUDGE_DEBIAS,
    promptCues: raw.JUDGE_PROMPT_CUES,
    requestTimeoutMs: raw.JUDGE_REQUEST_TIMEOUT_MS,
    reservationGraceMs: raw.JUDGE_RESERVATION_GRACE_MS,
    sweepIntervalMs: raw.JUDGE_SWEEP_INTERVAL_MS,
    adminToken: raw.JUDGE_ADMIN_TOKEN,
    logLevel: raw.JUDGE_LOG_LEVEL,
    shutdownGraceMs: raw.JUDGE_SHUTDOWN_GRACE_MS,
    headersTimeoutMs: raw.JUDGE_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: raw.JUDGE_BODY_TIMEOUT_MS,
    metricsPort: raw.JUDGE_METRICS_PORT,
  };
}

/**
 * The one read of the process environment. `overrides` (JUDGE_* names, e.g. from `judge serve`'s
 * flags: help.ts) take precedence over it.
 */
export function loadConfig(overrides: Record<string, string> = {}): Config {
  return parseConfig({ ...process.env, ...overrides });
}
