import { z } from "zod";
import { DEBIAS_MODES } from "../judgment/debias.js";
import { ENGINE_KINDS, GPU_CHOICES, LOG_LEVELS } from "./types.js";

/**
 * Every setting, once: its name, how its value is checked, its default, and what
 * docs/operations/configuration.md says of it (generated from here by `npm run docs:settings`;
 * the one-line `judge serve --help` texts are SETTING_HELP in help.ts). Descriptions are
 * Markdown, their links relative to docs/operations/.
 */

export interface SettingDoc {
  description: string;
  /** Said after the default (or instead of it, where unset means off or asked elsewhere). */
  defaultNote?: string;
}

export const SETTING_DOCS = z.registry<SettingDoc>();

function setting<T extends z.ZodType>(schema: T, description: string, defaultNote?: string): T {
  SETTING_DOCS.add(schema as z.ZodType, defaultNote === undefined ? { description } : { description, defaultNote });
  return schema;
}

/** Qwen2.5-1.5B-Instruct at Q4_K_M: see docs/engines/llama.md, "The default model, and why". */
export const DEFAULT_MODEL = "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf";

const integer = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);
const text = () => z.string().min(1);
const httpUrl = () => z.string().regex(/^https?:\/\/[^\s]+$/, "must be an http:// or https:// URL");

export const ConfigSchema = z.object({
  JUDGE_HOST: setting(text().default("127.0.0.1"), "address to listen on"),
  JUDGE_PORT: setting(integer(8080, 0, 65535), "port to listen on (0: any free port)"),
  JUDGE_ADMIN_TOKEN: setting(
    z.string().min(24, "must be at least 24 characters (e.g. openssl rand -hex 24)").optional(),
    "bearer token of the console and the admin API, at least 24 characters",
    "none (console and admin API off)",
  ),
  JUDGE_LOG_LEVEL: setting(
    z.enum(LOG_LEVELS).default("info"),
    "`debug`…`silent`; logs are JSON lines (pino) on stderr, written at once, each request's lines with its `request_id`; " +
      "never keys, tokens, states or bodies",
  ),
  JUDGE_METRICS_PORT: setting(
    z.coerce.number().int().min(1).max(65535).optional(),
    "also serve `GET /metrics` without a token on `127.0.0.1:<port>` (on the main port it needs the admin token)",
  ),
  // 6 s, then at most 3 s more: within the 10 s orchestrators allow before they kill.
  JUDGE_SHUTDOWN_GRACE_MS: setting(
    integer(6_000, 0, 600_000),
    "on SIGTERM/SIGINT, how long requests in flight may finish; then they are aborted (holds released, nothing charged), " +
      "the rest takes at most 3 s more, and the process exits 0 (within 9 s by default); the same signal again within 2 s " +
      "is the same stop, a later one exits at once with 1 ([Stopping](shutdown.md))",
  ),
  JUDGE_HEADERS_TIMEOUT_MS: setting(integer(10_000, 1_000, 600_000), "longest the request line and headers may take to arrive; past it, 408 `request_timeout`"),
  JUDGE_BODY_TIMEOUT_MS: setting(integer(30_000, 1_000, 3_600_000), "longest the whole request (headers and body) may take to arrive; past it, 408"),

  JUDGE_DB: setting(text().default("data/judge.db"), "SQLite file (`:memory:` for a throwaway one), or a `postgres://user:password@host:5432/db` URL"),
  JUDGE_DB_SCHEMA: setting(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, "must be a plain SQL identifier (letters, digits, _)")
      .default("public"),
    "PostgreSQL: the schema holding the tables, created if missing (several deployments can share a database)",
  ),
  JUDGE_DB_POOL_SIZE: setting(integer(10, 1, 1000), "PostgreSQL: connections per instance"),
  JUDGE_DB_STATEMENT_TIMEOUT_MS: setting(
    integer(5_000, 100, 600_000),
    "PostgreSQL: longest one statement may run before a 502 `database_unavailable` " +
      "(waiting for a free pooled connection is bounded by the request timeout instead)",
  ),
  JUDGE_REDIS_URL: setting(
    z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional(),
    "`redis://[:password@]host:6379[/db]` or `rediss://`: rate-limit windows in Redis; it must be reachable once set",
    "none (limits counted in the database)",
  ),
  JUDGE_REDIS_PREFIX: setting(
    z.string().min(1).max(100).default("judge:rl:"),
    "prefix of every Redis key the service writes, so deployments can share a Redis",
  ),
  JUDGE_RESERVATION_GRACE_MS: setting(integer(60_000, 0, 3_600_000), "a hold lives the request timeout plus this, then any instance's sweeper gives it back"),
  JUDGE_SWEEP_INTERVAL_MS: setting(integer(10_000, 100, 3_600_000), "how often each instance releases expired holds"),

  JUDGE_MODEL: setting(text().default(DEFAULT_MODEL), "local GGUF path or `hf:` URI", "Qwen2.5-1.5B-Instruct Q4_K_M"),
  JUDGE_MODELS: setting(
    text().optional(),
    "a JSON file declaring several served models: see [Many models](../engines/many-models.md)",
    "none (one model: the settings of this page)",
  ),
  JUDGE_MODELS_DIR: setting(text().default("models"), "where downloaded models are cached"),
  JUDGE_MODEL_ID: setting(text().optional(), "the model id reported as `model` in responses", "the file name without `.gguf`"),
  JUDGE_CONTEXT_SIZE: setting(integer(8192, 256, 131072), "tokens one question may use: system text, state, question and answer label"),
  JUDGE_MAX_QUESTIONS: setting(integer(64, 1, 1024), "questions per request"),
  JUDGE_TASKS_PER_ACCOUNT: setting(
    integer(20, 1, 10_000),
    "tasks an account may hold at once (see [Tasks](../concepts/tasks.md)); creating one more is refused with 409 `task_quota_exceeded`",
  ),
  JUDGE_READ_CACHE_MB: setting(
    integer(0, 0, 65_536),
    "memory for reads kept per account and prompt: the same prompt asked again by the same account, on a strict engine, is answered " +
      "without running the model, and billed the same (see [Read cache](../concepts/read-cache.md)); 0 keeps none",
  ),
  JUDGE_MAX_REQUEST_TOKENS: setting(
    integer(16384, 256, 1_048_576),
    "input tokens per request: the tokens one request may make the model read in total (the prefix once, then every question)",
  ),
  JUDGE_REQUEST_TIMEOUT_MS: setting(
    integer(30_000, 100, 3_600_000),
    "one deadline over the whole request: waiting for a model to load, tokenising, the hold, answering, every debiasing round " +
      "and every fallback; past it a 502 `model_timeout`, not charged",
  ),
  JUDGE_DEBIAS: setting(
    z.enum(DEBIAS_MODES).default("none"),
    "option-order debiasing when a request has no `x_debias`: `none`, `canonical` or `shift` " + "(see [Option-order debiasing](../concepts/debiasing.md))",
  ),
  JUDGE_PROMPT_CUES: setting(
    z.enum(["auto", "full", "short", "compact"]).default("auto"),
    "the prompt's answer cues: `auto` takes what the A/B measured for the model's chat template (short for ChatML, compact " +
      "for Gemma, full for any other format); `full`, `short` or `compact` fix them for every model " +
      "(see [Prompt and readout A/B](../evaluation/prompt-ab.md))",
  ),
  JUDGE_CALIBRATION: setting(text().optional(), "calibration profile (JSON): temperatures per question type", "none"),
  JUDGE_THREADS: setting(
    integer(0, 0, 512),
    "inference threads. llama.cpp's threads spin at every barrier, so a thread per core collapses when another process takes " +
      "a core (2 threads on 2 cores beside a load of 1.3 cores: 2.6× slower; 1 thread: unchanged). On a host with nothing " +
      "else running, the math cores read fastest (on 2 cores 1.9× faster than 1 thread); set it to the cores the service " +
      "can count on ([threads](../engines/llama.md#threads))",
    "one fewer than the math cores, at least 1",
  ),

  JUDGE_ENGINE: setting(
    z.enum(ENGINE_KINDS).default("llama"),
    "which engine reads the probabilities: `llama` | `llama-server` | `vllm` | `sglang` | `systemone` | `decisions` " + "([Engines](../engines/README.md))",
  ),
  JUDGE_ENGINE_URL: setting(
    httpUrl()
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
    "the server's base URL (`http://gpu-1:8081`); for `systemone`, the root that serves `/v1/systemone`; for `decisions`, " +
      "the root that serves `/v1/decisions` or the SDKs' base URL ending in `/v1`",
    "none (required for every engine but `llama`)",
  ),
  JUDGE_ENGINE_FEATURES_URL: setting(
    httpUrl()
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
    "`llama-server`, `vllm`: a second server on the same model that level-2 task heads read hidden states from: a llama-server " +
      "started with `--embeddings --pooling last` and a batch as large as its context, a vLLM run as a pooling model " +
      "([Tasks](../concepts/tasks.md#which-engines-give-level-2)); it gets the same key",
    "none (level 2 is left out on remote engines)",
  ),
  JUDGE_ENGINE_KEY: setting(text().optional(), "bearer key sent to the server (for `systemone`, `decisions`: the upstream API key); never logged", "none"),
  JUDGE_ENGINE_TIMEOUT_MS: setting(integer(10_000, 100, 600_000), "longest one call to the server may take; past it, 502 and nothing charged"),
  JUDGE_ENGINE_MODEL: setting(
    text().optional(),
    "`vllm`: the `model` field; `systemone`, `decisions`: the model name sent upstream",
    "asked of the server (`decisions`: `gpt-6-luna`)",
  ),
  JUDGE_ENGINE_TOKENIZER_CONFIG: setting(
    text().optional(),
    "`vllm`/`sglang`: the model's Hugging Face `tokenizer_config.json` (chat template, BOS/EOS, control tokens), as the server reads it",
    "ChatML, no BOS",
  ),
  JUDGE_UPSTREAM_MAX_OPTIONS: setting(
    integer(255, 2, 255),
    "`systemone`, `decisions`: the upstream's options per choice; a request over it is a 400 `over_upstream_limit` " + "before anything is sent or held",
  ),
  JUDGE_UPSTREAM_MAX_LEVELS: setting(integer(10, 2, 10), "`systemone`, `decisions`: the upstream's levels per score, checked as the options are"),
  JUDGE_UPSTREAM_MAX_QUESTIONS: setting(
    integer(64, 1, 1024),
    "`systemone`: the upstream's questions per request, checked as the options are; `decisions`: the size of one upstream " +
      "call (more questions are split over several)",
  ),
  JUDGE_EXACTNESS: setting(
    z.enum(["strict", "tolerant"]).optional(),
    "`strict`: answers independent of caching and other traffic by construction (fixed shapes, one request at a time); " +
      "`tolerant`: parallel and batched, refused at start-up when the probe measures more than `JUDGE_EXACTNESS_BOUND` " +
      "(see [Exactness: strict and tolerant](../concepts/exactness.md))",
    "`strict` (`tolerant` for `vllm`, `sglang`)",
  ),
  JUDGE_EXACTNESS_BOUND: setting(
    z.coerce.number().positive().max(1).optional(),
    "the largest max |Δp| the start-up probe accepts; raising strict's is for a GPU, where fixed shapes narrow the " +
      "cached-vs-fresh gap but may not close it",
    "1e-3 (tolerant), 1e-9 (strict)",
  ),
  JUDGE_GPU: setting(
    z.enum(GPU_CHOICES).default("auto"),
    "`llama`: `auto` | `cuda` | `vulkan` | `metal` | `off`; node-llama-cpp's prebuilt GPU binaries where the machine has " + "a GPU, CPU otherwise",
  ),
  JUDGE_SLOTS: setting(
    integer(4, 1, 64),
    "`llama`: states kept cached at once (sequences of one context); a request goes to the slot sharing its longest prefix",
  ),
});

export type RawConfig = z.infer<typeof ConfigSchema>;
export type SettingName = keyof RawConfig;

/** Every setting's name, in the schema's order. */
export const SETTING_NAMES = Object.keys(ConfigSchema.shape) as SettingName[];

/** Each setting's default as text ("" where there is none: unset means off or asked elsewhere). */
export function settingDefaults(): Record<SettingName, string> {
  const defaults = ConfigSchema.parse({}) as Record<string, unknown>;
  return Object.fromEntries(SETTING_NAMES.map((name) => [name, defaults[name] === undefined ? "" : String(defaults[name])])) as Record<SettingName, string>;
}

export const settingDoc = (name: SettingName): SettingDoc | undefined => SETTING_DOCS.get(ConfigSchema.shape[name]);
