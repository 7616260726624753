import { z } from "zod";
import { ENGINE_KINDS, GPU_CHOICES, type EngineSettings, type ModelConfig, type ModelEngineConfig, type ModelsConfig } from "./types.js";

/**
 * JUDGE_MODELS: the served models, read from a JSON file by environment.ts. Each model is one
 * engine's settings laid over the global ones (JUDGE_*), so a model names only what differs.
 * Secrets never come from the file: `key_env` names the environment variable holding the key,
 * resolved here (environment.ts passes the environment; nothing else reads it).
 */

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;
const name = z.string().regex(NAME, "must be 1-128 letters, digits or . _ : / @ - (starting with a letter or digit)");
const positiveInt = (max: number) => z.number().int().min(1).max(max);
/** -1 (or null) keeps a model loaded forever; otherwise seconds idle before it unloads. */
const keepAlive = z.union([z.literal(-1), z.null(), z.number().int().min(0).max(31_536_000)]);

const ModelEntrySchema = z
  .object({
    id: name,
    engine: z.enum(ENGINE_KINDS),
    model: z.string().min(1).optional(),
    url: z
      .string()
      .regex(/^https?:\/\/[^\s]+$/, "must be an http:// or https:// URL")
      .optional(),
    features_url: z
      .string()
      .regex(/^https?:\/\/[^\s]+$/, "must be an http:// or https:// URL")
      .optional(),
    key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable's name")
      .optional(),
    aliases: z.array(name).max(32).default([]),
    price_multiplier: z
      .number()
      .positive()
      .max(1000)
      .refine((m) => Number.isInteger(Math.round(m * 1000)) && Math.abs(m * 1000 - Math.round(m * 1000)) < 1e-9, "must have at most 3 decimals")
      .default(1),
    default: z.boolean().optional(),
    fallback: name.optional(),
    keep_alive_s: keepAlive.optional(),
    memory_mb: positiveInt(16_777_216).optional(),
    // The kind's own settings, named like JUDGE_* without the prefix; unset ones take the global value.
    slots: positiveInt(64).optional(),
    gpu: z.enum(GPU_CHOICES).optional(),
    context_size: z.number().int().min(256).max(131072).optional(),
    max_request_tokens: z.number().int().min(256).max(1_048_576).optional(),
    threads: z.number().int().min(0).max(512).optional(),
    timeout_ms: z.number().int().min(100).max(600_000).optional(),
    tokenizer_config: z.string().min(1).optional(),
    exactness: z.enum(["strict", "tolerant"]).optional(),
    exactness_bound: z.number().positive().max(1).optional(),
    upstream_max_options: z.number().int().min(2).max(255).optional(),
    upstream_max_levels: z.number().int().min(2).max(10).optional(),
    upstream_max_questions: positiveInt(1024).optional(),
  })
  .strict();

const FileSchema = z
  .object({
    default: name.optional(),
    keep_alive_s: keepAlive.default(300),
    max_loaded_mb: positiveInt(16_777_216).nullable().default(null),
    models: z.array(z.unknown()).min(1, "must list at least one model"),
  })
  .strict();

/** The file's text, parsed; every problem is one line naming the model and the field. */
export function parseModelsFile(source: string, text: string, base: ModelEngineConfig, env: Record<string, string | undefined>): ModelsConfig {
  const fail = (where: string, message?: string): never => {
    throw new Error(`Invalid configuration: JUDGE_MODELS=${source}: ${where}${message === undefined ? "" : `: ${message}`}`);
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    fail("not JSON", (error as Error).message);
  }
  const file = FileSchema.safeParse(json);
  if (!file.success) fail("the file", describe(file.error.issues[0]));
  const top = file.data!;
  const models: ModelConfig[] = [];
  const taken = new Map<string, string>();
  let defaultId = top.default;
  top.models.forEach((entry, index) => {
    const label = typeof (entry as { id?: unknown })?.id === "string" ? `model "${(entry as { id: string }).id}"` : `models[${index}]`;
    const parsed = ModelEntrySchema.safeParse(entry);
    if (!parsed.success) fail(label, describe(parsed.error.issues[0]));
    const m = parsed.data!;
    const at = `model "${m.id}"`;
    for (const n of [m.id, ...m.aliases]) {
      const other = taken.get(n);
      if (other) fail(`${at}: field "${n === m.id ? "id" : "aliases"}"`, `"${n}" is already the id or an alias of ${other}`);
      taken.set(n, at);
    }
    if (m.default) {
      if (defaultId !== undefined && defaultId !== m.id) fail(`${at}: field "default"`, `the default is already "${defaultId}"`);
      defaultId = m.id;
    }
    models.push(toModelConfig(m, at, top.keep_alive_s, base, env, fail));
  });
  defaultId ??= models[0].id;
  if (!models.some((m) => m.id === defaultId)) fail(`field "default"`, `no model has the id "${defaultId}"`);
  for (const m of models) {
    if (m.fallback === undefined) continue;
    if (m.fallback === m.id) fail(`model "${m.id}": field "fallback"`, "a model cannot be its own fallback");
    if (!models.some((o) => o.id === m.fallback)) fail(`model "${m.id}": field "fallback"`, `no model has the id "${m.fallback}"`);
  }
  return { source, defaultId, maxLoadedMb: top.max_loaded_mb, models };
}

type ModelEntry = z.infer<typeof ModelEntrySchema>;

function toModelConfig(
  m: ModelEntry,
  at: string,
  keepAliveS: number | null,
  base: ModelEngineConfig,
  env: Record<string, string | undefined>,
  fail: (where: string, message: string) => never,
): ModelConfig {
  const local = m.engine === "llama";
  if (local && !m.model) fail(`${at}: field "model"`, "required for engine llama (a GGUF path or hf: URI)");
  if (local && m.url) fail(`${at}: field "url"`, "engine llama runs in this process and has no URL");
  if (!local && !m.url) fail(`${at}: field "url"`, `required for engine ${m.engine}`);
  if (m.features_url && m.engine !== "llama-server" && m.engine !== "vllm") {
    fail(`${at}: field "features_url"`, "only engines llama-server and vllm read hidden states from a second server");
  }
  let key: string | undefined;
  if (m.key_env !== undefined) {
    key = env[m.key_env];
    if (!key) fail(`${at}: field "key_env"`, `the environment variable ${m.key_env} is not set`);
  }
  const exactness = m.exactness ?? (m.engine === "vllm" || m.engine === "sglang" ? "tolerant" : "strict");
  const engine: EngineSettings = {
    ...base.engine,
    kind: m.engine,
    url: m.url?.replace(/\/+$/, ""),
    featuresUrl: m.features_url?.replace(/\/+$/, ""),
    key,
    timeoutMs: m.timeout_ms ?? base.engine.timeoutMs,
    tokenizerConfigPath: m.tokenizer_config,
    // For a remote kind `model` is the name sent upstream; for llama it is the GGUF.
    upstreamModel: local ? undefined : m.model,
    upstreamLimits: {
      options: m.upstream_max_options ?? base.engine.upstreamLimits.options,
      levels: m.upstream_max_levels ?? base.engine.upstreamLimits.levels,
      questions: m.upstream_max_questions ?? base.engine.upstreamLimits.questions,
    },
    exactness,
    exactnessBound: m.exactness_bound ?? base.engine.exactnessBound,
  };
  const keepAlive = m.keep_alive_s === undefined ? keepAliveS : m.keep_alive_s;
  return {
    id: m.id,
    aliases: m.aliases,
    multiplierMilli: Math.round(m.price_multiplier * 1000),
    fallback: m.fallback,
    keepAliveMs: keepAlive === null || keepAlive === -1 ? null : keepAlive * 1000,
    memoryMb: m.memory_mb,
    engine: {
      engine,
      gpu: m.gpu ?? base.gpu,
      slots: m.slots ?? base.slots,
      model: local ? m.model! : base.model,
      modelsDir: base.modelsDir,
      modelId: m.id,
      contextSize: m.context_size ?? base.contextSize,
      maxRequestTokens: m.max_request_tokens ?? base.maxRequestTokens,
      threads: m.threads ?? base.threads,
    },
  };
}

/** `field "url": must be …`: the field at fault, then what is wrong with it. */
function describe(issue: z.ZodIssue): string {
  if (issue.code === "unrecognized_keys") return `field "${issue.keys[0]}": unknown field (secrets go in the environment variable named by key_env)`;
  return `field "${issue.path.join(".")}": ${issue.message}`;
}
