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
  /** SQLite database file of accounts and keys; `:memory:` for a throwaway store. */
  JUDGE_DB: z.string().min(1).default("data/judge.db"),
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
  dbPath: string;
  model: string;
  modelsDir: string;
  modelId?: string;
  contextSize: number;
  maxQuestions: number;
  maxRequestTokens: number;
  threads: number;
  calibrationPath?: string;
  requestTimeoutMs: number;
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
    dbPath: raw.JUDGE_DB,
    model: raw.JUDGE_MODEL,
    modelsDir: raw.JUDGE_MODELS_DIR,
    modelId: raw.JUDGE_MODEL_ID,
    contextSize: raw.JUDGE_CONTEXT_SIZE,
    maxQuestions: raw.JUDGE_MAX_QUESTIONS,
    maxRequestTokens: raw.JUDGE_MAX_REQUEST_TOKENS,
    threads: raw.JUDGE_THREADS,
    calibrationPath: raw.JUDGE_CALIBRATION,
    requestTimeoutMs: raw.JUDGE_REQUEST_TIMEOUT_MS,
    adminToken: raw.JUDGE_ADMIN_TOKEN,
    logLevel: raw.JUDGE_LOG_LEVEL,
  };
}

/** The one read of the process environment. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}
