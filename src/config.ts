import { z } from "zod";

/**
 * The service's whole configuration, parsed once from the environment.
 * This module is the only place that reads `process.env`; everything else receives a `Config`.
 */

/** Qwen2.5-1.5B-Instruct at Q4_K_M: see the README ("Why this default model"). */
export const DEFAULT_MODEL =
  "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf";

const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const ConfigSchema = z.object({
  JUDGE_HOST: z.string().min(1).default("127.0.0.1"),
  JUDGE_PORT: integer(8080, 0, 65535),
  /** A SQLite file (`:memory:` for a throwaway store) or a `postgres://…` URL. */
  JUDGE_DB: z.string().min(1).default("data/judge.db"),
  /** PostgreSQL: the schema holding the tables (created if missing). */
  JUDGE_DB_SCHEMA: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, "must be a plain SQL identifier (letters, digits, _)")
    .default("public"),
  /** PostgreSQL: connections per instance. */
  JUDGE_DB_POOL_SIZE: integer(10, 1, 1000),
  /** PostgreSQL: longest one statement may take before a 502 (waiting for a pooled connection is bounded by the request timeout). */
  JUDGE_DB_STATEMENT_TIMEOUT_MS: integer(5_000, 100, 600_000),
  /** Counts rate-limit windows in Redis instead of the database; required to be reachable once set. */
  JUDGE_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional(),
  /** Prefix of every Redis key this service writes, so deployments can share a Redis. */
  JUDGE_REDIS_PREFIX: z.string().min(1).max(100).default("judge:rl:"),
  /** A local GGUF path or an `hf:` URI. */
  JUDGE_MODEL: z.string().min(1).default(DEFAULT_MODEL),
  /** Where downloaded models are cached. */
  JUDGE_MODELS_DIR: z.string().min(1).default("models"),
  /** The model id reported in responses; defaults to the model file's name. */
  JUDGE_MODEL_ID: z.string().min(1).optional(),
  /** Tokens one question may occupy: system text + state + question + answer label. */
  JUDGE_CONTEXT_SIZE: integer(8192, 256, 131072),
  JUDGE_MAX_QUESTIONS: integer(64, 1, 1024),
  /** Tokens one request may make the model read in total (prefix once + every question). */
  JUDGE_MAX_REQUEST_TOKENS: integer(16384, 256, 1_048_576),
  /** CPU threads for inference; 0 lets llama.cpp decide. */
  JUDGE_THREADS: integer(0, 0, 512),
  /** Longest a request may wait for and use the model; past it, 502 and nothing is charged. */
  JUDGE_REQUEST_TIMEOUT_MS: integer(30_000, 100, 3_600_000),
  /** How long past the request timeout a hold lives before the sweeper gives it back. */
  JUDGE_RESERVATION_GRACE_MS: integer(60_000, 0, 3_600_000),
  /** How often every instance releases expired holds. */
  JUDGE_SWEEP_INTERVAL_MS: integer(10_000, 100, 3_600_000),
  /** Bearer token of the console and the admin API; unset, both are switched off. */
  JUDGE_ADMIN_TOKEN: z
    .string()
    .min(24, "must be at least 24 characters (e.g. openssl rand -hex 24)")
    .optional(),
  /** Optional JSON calibration profile (temperatures per question type). */
  JUDGE_CALIBRATION: z.string().min(1).optional(),
  JUDGE_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
});

export type RawConfig = z.infer<typeof ConfigSchema>;

export interface Config {
  host: string;
  port: number;
  /** A SQLite file path or a PostgreSQL URL. */
  db: string;
  dbSchema: string;
  dbPoolSize: number;
  dbStatementTimeoutMs: number;
  redisUrl?: string;
  redisPrefix: string;
  model: string;
  modelsDir: string;
  modelId?: string;
  contextSize: number;
  maxQuestions: number;
  maxRequestTokens: number;
  threads: number;
  calibrationPath?: string;
  requestTimeoutMs: number;
  reservationGraceMs: number;
  sweepIntervalMs: number;
  adminToken?: string;
  logLevel: RawConfig["JUDGE_LOG_LEVEL"];
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = ConfigSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  const raw = result.data;
  return {
    host: raw.JUDGE_HOST,
    port: raw.JUDGE_PORT,
    db: raw.JUDGE_DB,
    dbSchema: raw.JUDGE_DB_SCHEMA,
    dbPoolSize: raw.JUDGE_DB_POOL_SIZE,
    dbStatementTimeoutMs: raw.JUDGE_DB_STATEMENT_TIMEOUT_MS,
    redisUrl: raw.JUDGE_REDIS_URL,
    redisPrefix: raw.JUDGE_REDIS_PREFIX,
    model: raw.JUDGE_MODEL,
    modelsDir: raw.JUDGE_MODELS_DIR,
    modelId: raw.JUDGE_MODEL_ID,
    contextSize: raw.JUDGE_CONTEXT_SIZE,
    maxQuestions: raw.JUDGE_MAX_QUESTIONS,
    maxRequestTokens: raw.JUDGE_MAX_REQUEST_TOKENS,
    threads: raw.JUDGE_THREADS,
    calibrationPath: raw.JUDGE_CALIBRATION,
    requestTimeoutMs: raw.JUDGE_REQUEST_TIMEOUT_MS,
    reservationGraceMs: raw.JUDGE_RESERVATION_GRACE_MS,
    sweepIntervalMs: raw.JUDGE_SWEEP_INTERVAL_MS,
    adminToken: raw.JUDGE_ADMIN_TOKEN,
    logLevel: raw.JUDGE_LOG_LEVEL,
  };
}

/** The one read of the process environment. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}
