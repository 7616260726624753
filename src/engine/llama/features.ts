import type { LlamaEmbeddingContext, LlamaModel } from "node-llama-cpp";
import { messageOf } from "../../error-message.js";
import type { PreparedTokens } from "../prepared-tokens.js";
import { EngineFailedError, RequestAbortedError, throwIfAborted, type EngineFeatures } from "../types.js";
import { STRICT_BATCH } from "../strict-shapes.js";
import { defaultThreads } from "./runtime.js";

/**
 * The final hidden state at each question's answer position, for task heads (issue 34), read
 * through node-llama-cpp's embedding context. For a causal model that context is llama.cpp's
 * with `embeddings` on and pooling `none` (the GGUF declares no pooling type), and its vector
 * is `llama_get_embeddings_ith(ctx, -1)`: the `result_norm` row (after the output norm, before
 * the LM head) of the last token evaluated, i.e. of the readout's last prompt token, whose
 * logits give the first label token. The real-weight test proves it against the readout.
 *
 * node-llama-cpp's public API erases the embedding context's only sequence before each input,
 * so every question is one fresh evaluation of prefix + question: one extra evaluation per
 * question, nothing cached between them, and so the same bits whatever ran before or beside.
 * Its own context (not the engine's slots): the readout's cached prefixes stay untouched.
 */
export interface FeatureReader {
  read(model: LlamaModel, prepared: PreparedTokens, signal?: AbortSignal): Promise<EngineFeatures>;
  /** Releases the embedding context (the model's disposal would too; this frees it first). */
  close(): Promise<void>;
}

export interface FeatureSettings {
  /** The engine's per-slot context size: every prefix + question the readout accepts fits. */
  contextSize: number;
  /** JUDGE_THREADS (0: the engine's default). */
  threads: number;
}

export function createFeatureReader(settings: FeatureSettings): FeatureReader {
  let opening: Promise<LlamaEmbeddingContext> | undefined;
  let closed = false;

  // Made on first use: an engine never asked for features spends no memory on a second cache.
  const contextFor = (model: LlamaModel): Promise<LlamaEmbeddingContext> => {
    if (!opening) {
      opening = openContext(model, settings);
      // A failed creation (memory) is retried by the next request rather than cached.
      opening.catch(() => (opening = undefined));
    }
    return opening;
  };

  return {
    async read(model, prepared, signal) {
      throwIfAborted(signal);
      if (closed) throw new EngineFailedError("the engine is closed");
      const started = performance.now();
      try {
        const context = await contextFor(model);
        const features: Float32Array[] = [];
        for (const question of prepared.questions) {
          throwIfAborted(signal);
          const tokens = [...prepared.prefixTokens, ...question.tokens];
          // It would prepend BOS or append EOS/SEP where the vocabulary asks: not the readout's tokens then.
          if (context.calculateInputLength(tokens) !== tokens.length) {
            throw new Error("node-llama-cpp would add a BOS or end token to the readout's tokens for this model");
          }
          const { vector } = await context.getEmbeddingFor(tokens);
          if (vector.length !== model.embeddingVectorSize)
            throw new Error(`the embedding has ${vector.length} values, not the model's ${model.embeddingVectorSize}`);
          const feature = Float32Array.from(vector);
          if (feature.some((value) => !Number.isFinite(value))) throw new Error("the model produced a non-finite hidden state");
          features.push(feature);
        }
        throwIfAborted(signal);
        return { features, timingMs: performance.now() - started };
      } catch (error) {
        if (error instanceof RequestAbortedError || error instanceof EngineFailedError) throw error;
        throw new EngineFailedError(`the model failed while reading hidden states: ${messageOf(error)}`, { cause: error });
      }
    },
    async close() {
      closed = true;
      const context = await opening?.catch(() => undefined);
      opening = undefined;
      await context?.dispose();
    },
  };
}

async function openContext(model: LlamaModel, settings: FeatureSettings): Promise<LlamaEmbeddingContext> {
  // A declared pooling (mean, cls, last, rank: embedding and reranking models) would return a
  // pooled or scored vector, not the answer position's row; llama.cpp defaults to none.
  const architecture = model.fileInfo.metadata.general.architecture;
  const pooling = (model.fileInfo.metadata as Record<string, { pooling_type?: number } | undefined>)[architecture]?.pooling_type;
  if (pooling !== undefined && pooling !== -1 && pooling !== 0) {
    throw new Error(`the model declares pooling type ${pooling}: its embedding is not the answer position's hidden state`);
  }
  return model.createEmbeddingContext({
    contextSize: settings.contextSize,
    batchSize: STRICT_BATCH,
    threads: settings.threads === 0 ? defaultThreads(model.llama.cpuMathCores) : settings.threads,
  });
}
