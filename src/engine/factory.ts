import type { Config } from "../config/types.js";
import { createLlamaEngine } from "./llama/engine.js";
import { createLlamaServerEngine } from "./llama-server/engine.js";
import type { RemoteEngineOptions } from "./remote/options.js";
import { createSglangEngine } from "./hf/sglang/engine.js";
import { createSystemOneEngine } from "./gateways/systemone/engine.js";
import { createDecisionsEngine } from "./gateways/decisions/engine.js";
import type { JudgmentEngine } from "./types.js";
import { createVllmEngine } from "./hf/vllm/engine.js";

export type EngineConfig = Pick<Config, "engine" | "gpu" | "slots" | "model" | "modelsDir" | "modelId" | "contextSize" | "maxRequestTokens" | "threads">;

/** The one place an engine is chosen: JUDGE_ENGINE picks it, and everything above sees a JudgmentEngine. */
export function createEngine(config: EngineConfig, options: { showDownloadProgress?: boolean } = {}): JudgmentEngine {
  const { engine } = config;
  if (engine.kind === "llama") {
    return createLlamaEngine({
      model: config.model,
      modelsDir: config.modelsDir,
      modelId: config.modelId,
      contextSize: config.contextSize,
      maxRequestTokens: config.maxRequestTokens,
      threads: config.threads,
      gpu: config.gpu,
      slots: config.slots,
      exactness: engine.exactness,
      exactnessBound: engine.exactnessBound,
      showDownloadProgress: options.showDownloadProgress,
    });
  }
  // parseConfig refuses a remote engine without a URL, so this only guards a hand-built config.
  if (!engine.url) throw new Error(`JUDGE_ENGINE_URL is required when JUDGE_ENGINE is ${engine.kind}`);
  const remote: RemoteEngineOptions = {
    server: { url: engine.url, key: engine.key, timeoutMs: engine.timeoutMs },
    ...(engine.featuresUrl && { featuresServer: { url: engine.featuresUrl, key: engine.key, timeoutMs: engine.timeoutMs } }),
    modelId: config.modelId,
    upstreamModel: engine.upstreamModel,
    tokenizerConfigPath: engine.tokenizerConfigPath,
    upstreamLimits: engine.upstreamLimits,
    maxRequestTokens: config.maxRequestTokens,
    contextSize: config.contextSize,
    exactness: engine.exactness,
    exactnessBound: engine.exactnessBound,
  };
  switch (engine.kind) {
    case "llama-server":
      return createLlamaServerEngine(remote);
    case "vllm":
      return createVllmEngine(remote);
    case "sglang":
      return createSglangEngine(remote);
    case "systemone":
      return createSystemOneEngine(remote);
    case "decisions":
      return createDecisionsEngine(remote);
  }
}
