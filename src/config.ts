import { z } from "zod";
import { readFileSync } from "node:fs";
import { DEBIAS_MODES, type DebiasMode } from "./judgment/debias.js";
import type { PromptCuesSetting } from "./judgment/prompt.js";
import { parseModelsFile, type ModelsConfig } from "./config-models.js";

/**
 * The service's whole configuration, parsed once from the environment.
 * This module is the only place that reads `process.env`; everything else receives a `Config`.
 */

/** Qwen2.5-1.5B-Instruct at Q4_K_M: see docs/engines/llama.md, "The default model, and why". */
export const DEFAULT_MODEL =
  "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf";

export const ENGINE_KINDS = ["llama", "llama-server", "vllm", "sglang", "systemone", "decisions"] as const;
export type EngineChoice = (typeof ENGINE_KINDS)[number];
export type GpuChoice = "auto" | "cuda" | "vulkan" | "metal" | "off";

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
  /** Which engine reads the probabilities: in-process llama.cpp, or a server (docs/engines/README.md). */
  JUDGE_ENGINE: z.enum(ENGINE_KINDS).default("llama"),
  /** The engine server's base URL (every engine but `llama`); may carry a path, e.g. an upstream's /v1 root. */
  JUDGE_ENGINE_URL: z
    .string()
    .regex(/^https?:\/\/[^\s]+$/, "must be an http:// or https:// URL")
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /** Bearer key sent to the engine server (an upstream API key for `systemone`). */
  JUDGE_ENGINE_KEY: z.string().min(1).optional(),
  /** Longest one call to the engine server may take; past it the request gets 502, uncharged. */
  JUDGE_ENGINE_TIMEOUT_MS: integer(10_000, 100, 600_000),
  /** vllm/sglang: the model's tokenizer_config.json (chat template, BOS/EOS), as the server reads it; ChatML without it. */
  JUDGE_ENGINE_TOKENIZER_CONFIG: z.string().min(1).optional(),
  /** The model name sent to the engine server (vllm's `model`, the upstream's `model`); asked of the server when unset. */
  JUDGE_ENGINE_MODEL: z.string().min(1).optional(),
  /**
   * systemone and decisions gateways: the upstream's limits; a request over them is a 400 before
   * anything is sent or held (decisions: more questions are split over several calls instead).
   */
  JUDGE_UPSTREAM_MAX_OPTIONS: integer(255, 2, 255),
  JUDGE_UPSTREAM_MAX_LEVELS: integer(10, 2, 10),
  JUDGE_UPSTREAM_MAX_QUESTIONS: integer(64, 1, 1024),
  /**
   * strict: answers independent of caching and other traffic by construction (fixed shapes, one
   * request at a time); tolerant: parallel and batched, refused at start-up when the probe
   * measures more than JUDGE_EXACTNESS_BOUND (docs/concepts/exactness.md).
   * Default: strict, except tolerant for vllm and sglang (GPU servers that batch continuously).
   */
  JUDGE_EXACTNESS: z.enum(["strict", "tolerant"]).optional(),
  /**
   * The largest max |Δp| the start-up probe accepts: default 1e-3 in tolerant, 1e-9 in strict. Raising
   * strict's is for a GPU, where fixed shapes narrow but may not close the gap (docs/concepts/exactness.md).
   */
  JUDGE_EXACTNESS_BOUND: z.coerce.number().positive().max(1).optional(),
  /** In-process: which llama.cpp backend; `auto` uses a GPU when node-llama-cpp finds one. */
  JUDGE_GPU: z.enum(["auto", "cuda", "vulkan", "metal", "off"]).default("auto"),
  /** In-process: states kept cached at once (sequences of the context); a request goes to the slot sharing its longest prefix. */
  JUDGE_SLOTS: integer(4, 1, 64),
  /** A local GGUF path or an `hf:` URI. */
  JUDGE_MODEL: z.string().min(1).default(DEFAULT_MODEL),
  /** A JSON file declaring several served models (docs/engines/many-models.md); unset, the single model of JUDGE_ENGINE/JUDGE_MODEL. */
  JUDGE_MODELS: z.string().min(1).optional(),
  /** Where downloaded models are cached. */
  JUDGE_MODELS_DIR: z.string().min(1).default("models"),
  /** The model id reported in responses; defaults to the model file's name. */
  JUDGE_MODEL_ID: z.string().min(1).optional(),
  /** Tokens one question may occupy: system text + state + question + answer label. */
  JUDGE_CONTEXT_SIZE: integer(8192, 256, 131072),
  JUDGE_MAX_QUESTIONS: integer(64, 1, 1024),
  /** Tokens one request may make the model read in total (prefix once + every question). */
  JUDGE_MAX_REQUEST_TOKENS: integer(16384, 256, 1_048_576),
  /** CPU threads for inference; 0: one fewer than the math cores, at least one. */
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
  /** Option-order debiasing of choice questions for requests without `x_debias` (docs/concepts/debiasing.md). */
  JUDGE_DEBIAS: z.enum(DEBIAS_MODES).default("none"),
  /** The prompt's answer cues: auto (measured per chat template family) or one style for every model (docs/evaluation/prompt-ab.md). */
  JUDGE_PROMPT_CUES: z.enum(["auto", "full", "short", "compact"]).default("auto"),
  /** Optional JSON calibration profile (temperatures per question type). */
  JUDGE_CALIBRATION: z.string().min(1).optional(),
  JUDGE_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  /**
   * On SIGTERM/SIGINT: how long requests in flight may take to finish; past it they are aborted,
   * their holds released, and the rest of the shutdown takes at most 3 s more (6 + 3 < the 10 s
   * orchestrators allow before they kill).
   */
  JUDGE_SHUTDOWN_GRACE_MS: integer(6_000, 0, 600_000),
  /** Longest the request line and headers may take to arrive before a 408. */ JUDGE_HEADERS_TIMEOUT_MS: integer(10_000, 1_000, 600_000),
  /** Longest a whole request (headers and body) may take to arrive before a 408. */ JUDGE_BODY_TIMEOUT_MS: integer(30_000, 1_000, 3_600_000),
  /** Serves GET /metrics without a token on 127.0.0.1:<port> (on the main port it needs the admin token). */
  JUDGE_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
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
  engine: EngineSettings;
  gpu: GpuChoice;
  slots: number;
  model: string;
  modelsDir: string;
  modelId?: string;
  /** JUDGE_MODELS: the served models; absent, the one model the settings above describe. */
  models?: ModelsConfig;
  contextSize: number;
  maxQuestions: number;
  maxRequestTokens: number;
  threads: number;
  calibrationPath?: string;
  debias: DebiasMode;
  promptCues: PromptCuesSetting;
  requestTimeoutMs: number;
  reservationGraceMs: number;
  sweepIntervalMs: number;
  adminToken?: string;
  logLevel: RawConfig["JUDGE_LOG_LEVEL"];
  shutdownGraceMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  metricsPort?: number;
}

/** How to reach a remote engine; `url` is set for every kind but `llama`. */
export interface EngineSettings {
  kind: EngineChoice;
  url?: string;
  key?: string;
  timeoutMs: number;
  tokenizerConfigPath?: string;
  upstreamModel?: string;
  upstreamLimits: { options: number; levels: number; questions: number };
  exactness: "strict" | "tolerant";
  exactnessBound?: number;
}

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
  const config = toConfig(raw);
  if (raw.JUDGE_MODELS !== undefined) config.models = parseModelsFile(raw.JUDGE_MODELS, readModelsFile(raw.JUDGE_MODELS), config, env, ENGINE_KINDS);
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
 * flags: config-settings.ts) take precedence over it.
 */
export function loadConfig(overrides: Record<string, string> = {}): Config {
  return parseConfig({ ...process.env, ...overrides });
}

/** Every setting's name, in the schema's order. */
export const SETTING_NAMES = Object.keys(ConfigSchema.shape) as (keyof RawConfig)[];

/** Each setting's default as text ("" where there is none: unset means off or asked elsewhere). */
export function settingDefaults(): Record<keyof RawConfig, string> {
  const defaults = ConfigSchema.parse({}) as Record<string, unknown>;
  return Object.fromEntries(SETTING_NAMES.map((name) => [name, defaults[name] === undefined ? "" : String(defaults[name])])) as Record<keyof RawConfig, string>;
}
