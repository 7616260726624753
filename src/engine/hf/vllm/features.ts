import { remoteFeaturesReader, type RemoteFeaturesReader } from "../../remote/features.js";
import { callJson, describe, type RemoteServer } from "../../remote/http.js";
import { EngineFailedError } from "../../types.js";
import { malformed, okBody } from "../server.js";

/**
 * The final hidden state at each question's answer position, for level-2 task heads, from a
 * second vLLM on the same model folder run as a pooling model: `--runner pooling --convert embed
 * --pooler-config '{"pooling_type": "LAST", "use_activation": false}'` (a generating vLLM returns
 * no hidden states). Its `/pooling` with task `embed` then returns the last token's hidden state
 * after the model's final norm, unnormalised, for the readout's own token ids.
 *
 * At the first read it checks that the second server serves the same folder (`/v1/models`'
 * `root`) and that its vector is not normalised to length 1 (`use_activation` left on).
 */
export function createVllmFeaturesReader(answering: RemoteServer, features: RemoteServer): RemoteFeaturesReader {
  const where = `${describe(features)}/pooling`;

  const pool = async (model: string, tokens: readonly number[], signal?: AbortSignal): Promise<number[]> => {
    const reply = await callJson(features, "/pooling", { model, input: tokens, task: "embed", use_activation: false, add_special_tokens: false }, signal);
    const body = okBody(features, "/pooling", reply) as { data?: Array<{ data?: unknown }> };
    const vector = body?.data?.[0]?.data;
    if (!Array.isArray(vector) || vector.length === 0 || !vector.every((v) => typeof v === "number")) throw malformed(features, "/pooling", "no vector", body);
    return vector as number[];
  };

  const check = async (signal?: AbortSignal): Promise<string> => {
    const [mine, theirs] = await Promise.all([modelOf(answering, signal), modelOf(features, signal)]);
    if (mine.root !== theirs.root) {
      throw new EngineFailedError(`the features server ${describe(features)} serves ${JSON.stringify(theirs.root)}, not ${JSON.stringify(mine.root)}`);
    }
    const probe = await pool(theirs.id, [1, 2], signal);
    const length = Math.hypot(...probe);
    if (Math.abs(length - 1) < 1e-3) throw new EngineFailedError(`${where} normalises its vectors: start it with --pooler-config '{"use_activation": false}'`);
    return theirs.id;
  };

  return remoteFeaturesReader({ server: features, where, check, vector: pool });
}

/** GET /v1/models: the served name and the folder it was loaded from. */
async function modelOf(server: RemoteServer, signal?: AbortSignal): Promise<{ id: string; root: string }> {
  const reply = await callJson(server, "/v1/models", undefined, signal, "GET");
  const body = okBody(server, "/v1/models", reply) as { data?: Array<{ id?: unknown; root?: unknown }> };
  const model = body?.data?.[0];
  if (typeof model?.id !== "string" || typeof model.root !== "string") throw malformed(server, "/v1/models", "no model id and root", body);
  return { id: model.id, root: model.root };
}
