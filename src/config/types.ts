import type { DebiasMode } from "../judgment/debias.js";
import type { PromptCuesSetting } from "../judgment/prompt.js";

/**
 * What the rest of the service receives of the configuration, and the value lists the schema
 * (schema.ts) and the models file (models-file.ts) both check against. Both import this module
 * and neither imports the other's types back, so the configuration has no import cycle.
 */

export const ENGINE_KINDS = ["llama", "llama-server", "vllm", "sglang", "systemone", "decisions"] as const;
export type EngineChoice = (typeof ENGINE_KINDS)[number];
export const GPU_CHOICES = ["auto", "cuda", "vulkan", "metal", "off"] as const;
export type GpuChoice = (typeof GPU_CHOICES)[number];
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
  /** JUDGE_TASKS_PER_ACCOUNT: the quota of tasks per account. */
  tasksPerAccount: number;
  /** JUDGE_READ_CACHE_MB: 0, no read cache. */
  readCacheMb: number;
  maxRequestTokens: number;
  threads: number;
  calibrationPath?: string;
  debias: DebiasMode;
  promptCues: PromptCuesSetting;
  requestTimeoutMs: number;
  reservationGraceMs: number;
  sweepIntervalMs: number;
  adminToken?: string;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  metricsPort?: number;
}

/** How to reach a remote engine; `url` is set for every kind but `llama`. */
export interface EngineSettings {
  kind: EngineChoice;
  url?: string;
  /** llama-server, vllm: a second server on the same model, serving embeddings, that level-2 task heads read hidden states from. */
  featuresUrl?: string;
  key?: string;
  timeoutMs: number;
  tokenizerConfigPath?: string;
  upstreamModel?: string;
  upstreamLimits: { options: number; levels: number; questions: number };
  exactness: "strict" | "tolerant";
  exactnessBound?: number;
}

/** What the engine factory needs of one model: the same fields as the single-model Config. */
export type ModelEngineConfig = Pick<Config, "engine" | "gpu" | "slots" | "model" | "modelsDir" | "modelId" | "contextSize" | "maxRequestTokens" | "threads">;

export interface ModelConfig {
  id: string;
  /** Names a request's `model` may give instead of the id (both judging routes). */
  aliases: string[];
  /** price_multiplier in thousandths (1.5 → 1500): money stays integer arithmetic. */
  multiplierMilli: number;
  /** The model that answers when this one is down. */
  fallback?: string;
  /** In-process models: idle time before unloading (null: never). */
  keepAliveMs: number | null;
  /** In-process models: what it counts against max_loaded_mb (default: the GGUF file's size). */
  memoryMb?: number;
  engine: ModelEngineConfig;
}

export interface ModelsConfig {
  /** The file's path, for messages. */
  source: string;
  defaultId: string;
  /** In-process models loaded together may count at most this much (memory_mb); null: no bound. */
  maxLoadedMb: number | null;
  models: ModelConfig[];
}
