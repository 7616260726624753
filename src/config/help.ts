import { SETTING_NAMES, settingDefaults, type SettingName } from "./schema.js";

/**
 * `judge serve`'s flags: one per setting, `--host` for JUDGE_HOST and so on, each mapped to its
 * JUDGE_* name and parsed by environment.ts like the environment (a flag wins over the variable).
 * The secrets have no flag: a command line is visible to every user of the machine (`ps`).
 */

/** Read from the environment only. JUDGE_DB is the CLI's global --db. */
const NO_FLAG: readonly SettingName[] = ["JUDGE_ADMIN_TOKEN", "JUDGE_ENGINE_KEY", "JUDGE_DB"];

/** One line each, for `judge serve --help`; the settings page says more (SETTING_DOCS in schema.ts). */
export const SETTING_HELP: Record<SettingName, string> = {
  JUDGE_HOST: "address to listen on",
  JUDGE_PORT: "port to listen on (0: any free port)",
  JUDGE_DB: "SQLite file (:memory: for a throwaway store) or postgres:// URL (the global --db)",
  JUDGE_DB_SCHEMA: "PostgreSQL schema holding the tables",
  JUDGE_DB_POOL_SIZE: "PostgreSQL connections per instance",
  JUDGE_DB_STATEMENT_TIMEOUT_MS: "PostgreSQL: longest one statement may take before a 502",
  JUDGE_REDIS_URL: "redis:// URL: count rate limits in Redis instead of the database",
  JUDGE_REDIS_PREFIX: "prefix of every Redis key written",
  JUDGE_ENGINE: "llama | llama-server | vllm | sglang | systemone | decisions",
  JUDGE_ENGINE_URL: "the engine server's base URL (every engine but llama)",
  JUDGE_ENGINE_FEATURES_URL: "llama-server, vllm: a second server on the same model serving embeddings, for level-2 task heads",
  JUDGE_ENGINE_KEY: "bearer key sent to the engine server (environment only: never a flag)",
  JUDGE_ENGINE_TIMEOUT_MS: "longest one call to the engine server may take",
  JUDGE_ENGINE_TOKENIZER_CONFIG: "vllm/sglang: the model's tokenizer_config.json",
  JUDGE_ENGINE_MODEL: "model name sent to the engine server",
  JUDGE_UPSTREAM_MAX_OPTIONS: "systemone, decisions: the upstream's options per choice",
  JUDGE_UPSTREAM_MAX_LEVELS: "systemone, decisions: the upstream's levels per score",
  JUDGE_UPSTREAM_MAX_QUESTIONS: "systemone: the upstream's questions per request; decisions: questions per upstream call",
  JUDGE_EXACTNESS: "strict (fixed shapes, one request at a time) or tolerant (batched, probe-bounded); default strict, tolerant for vllm/sglang",
  JUDGE_EXACTNESS_BOUND: "the largest max |Δp| the start-up probe accepts (default 1e-3 tolerant, 1e-9 strict)",
  JUDGE_GPU: "in-process backend: auto | cuda | vulkan | metal | off",
  JUDGE_SLOTS: "in-process: states kept cached at once",
  JUDGE_MODEL: "local GGUF path or hf: URI",
  JUDGE_MODELS: "JSON file declaring several served models (docs/engines/many-models.md)",
  JUDGE_MODELS_DIR: "where downloaded models are cached",
  JUDGE_MODEL_ID: "model id reported in responses (default: the file's name)",
  JUDGE_CONTEXT_SIZE: "tokens one question may occupy",
  JUDGE_MAX_QUESTIONS: "questions per request",
  JUDGE_MAX_REQUEST_TOKENS: "input tokens per request",
  JUDGE_THREADS: "CPU threads for inference (0: one fewer than the math cores, at least 1, so a busy neighbour does not stall llama.cpp's spinning threads)",
  JUDGE_REQUEST_TIMEOUT_MS: "longest a request may wait for and use the model",
  JUDGE_RESERVATION_GRACE_MS: "how long past the request timeout a hold lives",
  JUDGE_SWEEP_INTERVAL_MS: "how often expired holds are released",
  JUDGE_ADMIN_TOKEN: "turns the console and admin API on (environment only: never a flag)",
  JUDGE_DEBIAS: "option-order debiasing: none | canonical | shift",
  JUDGE_PROMPT_CUES: "the prompt's answer cues: auto | full | short | compact",
  JUDGE_TASKS_PER_ACCOUNT: "tasks an account may hold at once",
  JUDGE_READ_CACHE_MB: "memory for strict reads kept per account and prompt (0: none)",
  JUDGE_CALIBRATION: "JSON calibration profile",
  JUDGE_LOG_LEVEL: "debug | info | warn | error | silent",
  JUDGE_SHUTDOWN_GRACE_MS: "on SIGTERM/SIGINT, how long requests in flight may finish",
  JUDGE_HEADERS_TIMEOUT_MS: "longest the request line and headers may take (408)",
  JUDGE_BODY_TIMEOUT_MS: "longest a whole request may take to arrive (408)",
  JUDGE_METRICS_PORT: "serve GET /metrics without a token on 127.0.0.1:<port>",
};

/** `--host` for JUDGE_HOST, `--engine-url` for JUDGE_ENGINE_URL. */
export const flagOf = (name: SettingName) => `--${name.slice("JUDGE_".length).toLowerCase().replace(/_/g, "-")}`;

/** commander's camelCase key of a flag's value: engineUrl for --engine-url. */
const keyOf = (name: SettingName) =>
  flagOf(name)
    .slice(2)
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export const FLAG_SETTINGS = SETTING_NAMES.filter((name) => !NO_FLAG.includes(name));

/** The flags given, as JUDGE_* overrides for loadConfig. */
export function overridesFromFlags(options: Record<string, unknown>): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const name of FLAG_SETTINGS) {
    const value = options[keyOf(name)];
    if (typeof value === "string") overrides[name] = value;
  }
  return overrides;
}

/** The table `judge serve --help` ends with: every setting, its flag, its default, what it does. */
export function settingsHelp(): string {
  const defaults = settingDefaults();
  const rows = SETTING_NAMES.map((name) => {
    const flag = FLAG_SETTINGS.includes(name) ? flagOf(name) : name === "JUDGE_DB" ? "--db (global)" : "(environment only)";
    return [name, flag, defaults[name] === "" ? "(unset)" : defaults[name], SETTING_HELP[name]];
  });
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i].length)));
  const lines = rows.map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell)).join("  "));
  return [
    "",
    "Settings (a flag wins over its environment variable; unset ones take the default):",
    `  ${["variable".padEnd(widths[0]), "flag".padEnd(widths[1]), "default".padEnd(widths[2]), "meaning"].join("  ")}`,
    ...lines.map((line) => `  ${line}`),
  ].join("\n");
}

/** What stderr says when the in-process model cannot load: the setting to fix, or the fixture to serve instead. */
export function modelHelp(detail: string): string {
  return [
    "",
    `The model could not be loaded: ${detail}`,
    "Point JUDGE_MODEL at a local GGUF file (JUDGE_MODEL=path/to/model.gguf npm start),",
    "or run `npm run start:fixture` to serve the tiny self-made model (meaningless answers, everything else real).",
    "",
  ].join("\n");
}
