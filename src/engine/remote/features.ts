import { messageOf } from "../../error-message.js";
import type { PreparedTokens } from "../prepared-tokens.js";
import { EngineFailedError, EngineUnavailableError, RequestAbortedError, throwIfAborted, type EngineFeatures } from "../types.js";
import { describe, type RemoteServer } from "./http.js";

/** Level 2's hidden states read from a second server beside the one that answers (llama-server, vLLM). */
export interface RemoteFeaturesReader {
  read(prepared: PreparedTokens, signal?: AbortSignal): Promise<EngineFeatures>;
}

export interface RemoteFeaturesProtocol<Checked> {
  /** The second server, for messages. */
  server: RemoteServer;
  /** Its route, for messages: `${server}/embedding`. */
  where: string;
  /** Made at the first read (the same model, a pooling that gives the last token's state); made again after a failure, never kept. */
  check(signal?: AbortSignal): Promise<Checked>;
  /** The hidden state after the last of `tokens`. */
  vector(checked: Checked, tokens: readonly number[], signal?: AbortSignal): Promise<readonly number[]>;
  /** The model's embedding length where the server says it; otherwise every question's vector must be as long as the first. */
  width?(checked: Checked): number;
}

/**
 * One vector per question, for the readout's own token ids (prefix and question), each checked
 * finite and of one length. Aborts, unavailability and failures pass through as the engine's
 * errors; anything else is a failure naming the server.
 */
export function remoteFeaturesReader<Checked>(protocol: RemoteFeaturesProtocol<Checked>): RemoteFeaturesReader {
  const { where } = protocol;
  let checked: Promise<Checked> | undefined;
  return {
    async read(prepared, signal) {
      throwIfAborted(signal);
      const started = performance.now();
      try {
        checked ??= protocol.check(signal);
        const done = await checked.catch((error: unknown) => {
          checked = undefined;
          throw error;
        });
        const width = protocol.width?.(done);
        const features: Float32Array[] = [];
        for (const question of prepared.questions) {
          const feature = Float32Array.from(await protocol.vector(done, [...prepared.prefixTokens, ...question.tokens], signal));
          if (width !== undefined && feature.length !== width)
            throw new EngineFailedError(`${where} answered ${feature.length} values, not the model's ${width}`);
          if (width === undefined && features.length > 0 && feature.length !== features[0]!.length) {
            throw new EngineFailedError(`${where} answered vectors of different lengths`);
          }
          if (feature.some((value) => !Number.isFinite(value))) throw new EngineFailedError(`${where} answered a non-finite hidden state`);
          features.push(feature);
        }
        return { features, timingMs: performance.now() - started };
      } catch (error) {
        if (error instanceof RequestAbortedError || error instanceof EngineFailedError || error instanceof EngineUnavailableError) throw error;
        throw new EngineFailedError(`reading hidden states from ${describe(protocol.server)} failed: ${messageOf(error)}`, { cause: error });
      }
    },
  };
}
