import type { RemoteServer } from "./http.js";

/** What every remote engine is built from (the factory fills it from the parsed config). */
export interface RemoteEngineOptions {
  server: RemoteServer;
  /** llama-server, vllm: the second server, on the same model and serving embeddings, that hidden states are read from. */
  featuresServer?: RemoteServer;
  /** The model id our responses report (JUDGE_MODEL_ID); defaults to what the server names. */
  modelId?: string;
  /** The model name sent to the server (JUDGE_ENGINE_MODEL); asked of the server when unset. */
  upstreamModel?: string;
  /** vllm/sglang: path of the model's tokenizer_config.json (chat template, BOS/EOS). */
  tokenizerConfigPath?: string;
  /** systemone: the upstream's limits; over them is a 400 before anything is sent. */
  upstreamLimits: { options: number; levels: number; questions: number };
  /** Our per-request token budget (JUDGE_MAX_REQUEST_TOKENS). */
  maxRequestTokens: number;
  /** Our per-question context budget (JUDGE_CONTEXT_SIZE); the server's own, if smaller, wins. */
  contextSize: number;
  /** JUDGE_EXACTNESS (default strict) and JUDGE_EXACTNESS_BOUND (tolerant's refusal bound). */
  exactness?: "strict" | "tolerant";
  exactnessBound?: number;
}
