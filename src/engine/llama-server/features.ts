import { remoteFeaturesReader, type RemoteFeaturesReader } from "../remote/features.js";
import { callJson, describe, quote, type RemoteServer } from "../remote/http.js";
import { EngineFailedError } from "../types.js";
import { checkStatus } from "./completion.js";
import { getJson } from "./server-facts.js";

/**
 * The final hidden state at each question's answer position, for level-2 task heads, read from a
 * second llama-server on the same GGUF started with `--embeddings --pooling last` (the one that
 * answers serves no embeddings). Its `/embedding` with pooling `last` and `embd_normalize: -1`
 * returns the `result_norm` row of the last token, unnormalised: the vector the in-process engine
 * reads, bit for bit on the same CPU library (features.real-models.test.ts). Each question is one
 * evaluation of the readout's own token ids, prefix and question.
 *
 * llama-server cannot say which pooling it runs: `none` (one vector per token) and `cls` (the
 * first token's) are refused at the first read; `mean` cannot be told from `last` by its API,
 * which is why the docs name the flags.
 */
/** What must be equal on both servers for them to hold the same weights: /v1/models' meta. */
const SAME_MODEL = ["n_vocab", "n_embd", "n_params", "size", "ftype", "n_ctx_train"] as const;

export function createFeaturesReader(answering: RemoteServer, features: RemoteServer): RemoteFeaturesReader {
  const where = `${describe(features)}/embedding`;

  const embed = async (tokens: readonly number[], signal?: AbortSignal): Promise<number[][]> => {
    const reply = await callJson(features, "/embedding", { content: tokens, embd_normalize: -1 }, signal);
    checkStatus(reply, where);
    const vectors = (Array.isArray(reply.body) ? reply.body[0] : reply.body)?.embedding;
    if (!Array.isArray(vectors) || vectors.length === 0) throw new EngineFailedError(`${where} answered without an embedding: ${quote(reply.body)}`);
    // Pooled, it is one vector, wrapped in a list or not.
    return (Array.isArray(vectors[0]) ? vectors : [vectors]) as number[][];
  };

  // Once per engine: the same model on both, and a pooling that gives the last token's state.
  const check = async (signal?: AbortSignal): Promise<number> => {
    const [mine, theirs] = await Promise.all([modelMeta(answering, signal), modelMeta(features, signal)]);
    const differs = SAME_MODEL.filter((key) => mine[key] !== theirs[key]);
    if (differs.length > 0) {
      throw new EngineFailedError(
        `the features server ${describe(features)} serves another model than ${describe(answering)} (${differs
          .map((key) => `${key} ${JSON.stringify(theirs[key])}, not ${JSON.stringify(mine[key])}`)
          .join("; ")})`,
      );
    }
    const width = mine.n_embd;
    if (typeof width !== "number") throw new EngineFailedError(`${describe(answering)}/v1/models names no n_embd`);
    const two = await embed([1, 2], signal);
    if (two.length !== 1) throw new EngineFailedError(`${where} answered ${two.length} vectors for 2 tokens: start it with --pooling last`);
    const [first] = await embed([1], signal);
    if (first!.every((value, i) => value === two[0]![i])) throw new EngineFailedError(`${where} pools the first token (cls): start it with --pooling last`);
    return width;
  };

  return remoteFeaturesReader({
    server: features,
    where,
    check,
    // Pooled: one vector.
    vector: async (_width, tokens, signal) => (await embed(tokens, signal))[0]!,
    width: (width) => width,
  });
}

async function modelMeta(server: RemoteServer, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const models = (await getJson(server, "/v1/models", signal)) as { data?: Array<{ meta?: Record<string, unknown> }> } | undefined;
  const meta = models?.data?.[0]?.meta;
  if (typeof meta !== "object" || meta === null) throw new EngineFailedError(`${describe(server)}/v1/models names no model meta: ${quote(models)}`);
  return meta;
}
