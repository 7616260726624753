import { statSync } from "node:fs";
import type { ModelConfig, ModelEngineConfig, ModelsConfig } from "../../config/types.js";
import type { JudgmentEngine } from "../../engine/types.js";
import { meterEngine, type Metrics } from "../metrics.js";
import { createKeepAlive, loadBudget, type KeepAliveState, type LoadBudget } from "./keep-alive.js";

/**
 * The served models: each its own engine (and so its own slots, queue and health), found by id
 * or alias. Without JUDGE_MODELS the registry holds the one engine the single-model settings
 * describe, under whatever id it reports, so everything above sees the same seam either way.
 */

export interface ServedModel {
  /** What responses name as `model`; a single model's engine may learn it from its server. */
  readonly id: string;
  readonly aliases: readonly string[];
  /** price_multiplier in thousandths: charges and allowance are scaled by it (services/billing.ts). */
  readonly multiplierMilli: number;
  /** The model that answers when this one is down. */
  readonly fallback?: string;
  /**
   * Where its weights come from: `file:<path>` for an in-process model, `<engine>:<url>` for a
   * server; absent where unknown (an engine handed in). A task's version is bound to it (services/tasks/).
   */
  readonly source?: string;
  /** Metered (judge_engine_* with a `model` label), and for in-process models loaded on demand. */
  readonly engine: JudgmentEngine;
  /** loaded / unloaded for models that load on demand; always "resident" otherwise. */
  residency(): KeepAliveState | "resident";
}

export interface ModelRegistry {
  readonly defaultModel: ServedModel;
  /** In the file's order (the default among them). */
  readonly models: readonly ServedModel[];
  /** Whether several models were declared (JUDGE_MODELS) rather than the single model. */
  readonly declared: boolean;
  /**
   * The model a request's `model` names: its id or an alias; a route's own aliases (the names
   * its SDKs send by default) mean the default model unless a model declares them. No name: the default.
   */
  resolve(name: string | undefined, routeAliases: readonly string[]): ServedModel | undefined;
  /** Every name a route accepts, for a refusal's message. */
  accepted(routeAliases: readonly string[]): string[];
  /** The model, then its fallbacks in turn (each once). */
  chain(model: ServedModel): ServedModel[];
  close(): Promise<void>;
}

export type CreateEngine = (config: ModelEngineConfig) => JudgmentEngine;

/** The single model: today's one engine, under the id it reports. */
export function singleModelRegistry(engine: JudgmentEngine, metrics: Metrics, config?: ModelEngineConfig): ModelRegistry {
  const metered = meterEngine(engine, metrics, undefined);
  const model: ServedModel = {
    get id() {
      return engine.modelId;
    },
    ...(config && { source: sourceOf(config) }),
    aliases: [],
    multiplierMilli: 1000,
    engine: metered,
    residency: () => "resident",
  };
  return registryOf([model], model, false, async () => engine.close());
}

/**
 * Every declared model, each built through the engine factory. In-process ones load on first use
 * and unload when idle or when loading another would pass max_loaded_mb; the default loads at
 * start and stays loaded.
 */
export function declaredModelsRegistry(config: ModelsConfig, create: CreateEngine, metrics: Metrics): ModelRegistry {
  const budget = loadBudget(config.maxLoadedMb);
  const built = config.models.map((m) => buildModel(m, create, metrics, budget, m.id === config.defaultId));
  const defaultModel = built.find((m) => m.id === config.defaultId)!;
  return registryOf(built, defaultModel, true, async () => {
    await Promise.all(built.map((m) => m.engine.close().catch(() => undefined)));
  });
}

function buildModel(m: ModelConfig, create: CreateEngine, metrics: Metrics, budget: LoadBudget, isDefault: boolean): ServedModel {
  const base = { id: m.id, aliases: m.aliases, multiplierMilli: m.multiplierMilli, fallback: m.fallback, source: sourceOf(m.engine) };
  if (m.engine.engine.kind !== "llama") {
    return { ...base, engine: meterEngine(create(m.engine), metrics, m.id), residency: () => "resident" };
  }
  const lazy = createKeepAlive({
    id: m.id,
    create: () => create(m.engine),
    keepAliveMs: m.keepAliveMs,
    memoryMb: m.memoryMb ?? fileSizeMb(m.engine.model),
    budget,
    pinned: isDefault,
    kind: "llama",
  });
  return { ...base, engine: meterEngine(lazy.engine, metrics, m.id), residency: () => lazy.state() };
}

function registryOf(models: ServedModel[], defaultModel: ServedModel, declared: boolean, close: () => Promise<void>): ModelRegistry {
  const byName = (name: string) => models.find((m) => m.id === name || m.aliases.includes(name));
  return {
    defaultModel,
    models,
    declared,
    resolve(name, routeAliases) {
      if (name === undefined) return defaultModel;
      return byName(name) ?? (routeAliases.includes(name) ? defaultModel : undefined);
    },
    accepted(routeAliases) {
      const names = models.flatMap((m) => [m.id, ...m.aliases]);
      return [...names, ...routeAliases.filter((a) => !names.includes(a))];
    },
    chain(model) {
      const chain = [model];
      for (let next = model.fallback; next !== undefined; ) {
        const found = models.find((m) => m.id === next);
        if (!found || chain.includes(found)) break;
        chain.push(found);
        next = found.fallback;
      }
      return chain;
    },
    close,
  };
}

/** Never the server's key: only what names the weights. */
function sourceOf(config: ModelEngineConfig): string {
  return config.engine.kind === "llama" ? `file:${config.model}` : `${config.engine.kind}:${config.engine.url ?? ""}`;
}

/** A local GGUF's size in MB, what loading it costs at least; 0 for an `hf:` URI not yet downloaded. */
function fileSizeMb(path: string): number {
  try {
    return Math.ceil(statSync(path).size / 1_048_576);
  } catch {
    return 0;
  }
}
