import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Token } from "node-llama-cpp";
import { tinyFixturePath } from "../fixture.js";
import { loadFixtureOracle, logSoftmax, topTokens, type FixtureOracle } from "./fixture-oracle.js";

/**
 * Ways a stand-in misbehaves, switchable while it runs. All but "loading" touch only the
 * generation endpoint (vLLM's /v1/completions, SGLang's /generate), so an engine gets as far
 * as its probe:
 * - loading: every endpoint answers 503 (a server still loading its model);
 * - slow: generation answers after `slowMs`;
 * - failing: generation answers 500;
 * - not-json / wrong-shape: a body that is not JSON, or JSON without the logprobs;
 * - partial: the last requested id is missing; extra-id: one id nobody asked for is added;
 * - invalid-value: the first value is +0.5 (not a log-probability);
 * - ignores-ids: the candidate field is ignored and the natural top-k returned (an old server);
 * - processed-temperature: values are log-softmax(logits / T), T the request's or 0.7 for 0;
 * - processed-renormalised: values are renormalised over the requested ids.
 */
export type StandinFault =
  | "loading"
  | "slow"
  | "failing"
  | "not-json"
  | "wrong-shape"
  | "partial"
  | "extra-id"
  | "invalid-value"
  | "ignores-ids"
  | "processed-temperature"
  | "processed-renormalised";

export interface StandinOptions {
  /** A GGUF model; the tiny fixture by default. */
  modelPath?: string;
  servedModelName?: string;
  /** Bearer key the server requires (vLLM's and SGLang's --api-key). */
  apiKey?: string;
  slowMs?: number;
  /** Reports a batch-invariant / deterministic mode (SGLang's /get_server_info, vLLM's /server_info). */
  deterministic?: boolean;
}

export interface Standin {
  url: string;
  oracle: FixtureOracle;
  servedModelName: string;
  /** The fault now in effect (undefined: behaves). */
  fault: StandinFault | undefined;
  /** Every request, in arrival order. */
  calls: { path: string; body: unknown }[];
  /** Whether it reports a deterministic mode (StandinOptions.deterministic). */
  deterministic: boolean;
  close(): Promise<void>;
}

export interface StandinReply {
  status: number;
  /** A JSON body, or raw text. */
  json?: unknown;
  text?: string;
}

export type StandinHandler = (request: { method: string; path: string; body: unknown }, standin: Standin) => Promise<StandinReply>;

/** Serves `handler` on a free port of 127.0.0.1; `generatePath` is where slow/failing/not-json apply. */
export async function startStandin(handler: StandinHandler, generatePath: string, options: StandinOptions = {}): Promise<Standin> {
  const oracle = await loadFixtureOracle(options.modelPath ?? (await tinyFixturePath()));
  const standin: Standin = {
    url: "",
    oracle,
    servedModelName: options.servedModelName ?? "tiny-fixture",
    fault: undefined,
    calls: [],
    deterministic: options.deterministic ?? false,
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    void respond(req, res).catch((error: unknown) => send(res, { status: 500, json: { error: { message: String(error), code: 500 } } }));
  });
  const respond = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      return send(res, { status: 400, json: { error: { message: "the body is not JSON", code: 400 } } });
    }
    standin.calls.push({ path, body });
    if (options.apiKey !== undefined && path !== "/health" && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return send(res, { status: 401, json: { error: "Unauthorized" } });
    }
    if (standin.fault === "loading") return send(res, { status: 503, json: { error: { message: "the model is loading", code: 503 } } });
    if (path === generatePath) {
      if (standin.fault === "slow") await new Promise((resolve) => setTimeout(resolve, options.slowMs ?? 2_000));
      if (standin.fault === "failing") return send(res, { status: 500, json: { error: { message: "CUDA error: an illegal memory access", code: 500 } } });
      if (standin.fault === "not-json") return send(res, { status: 200, text: "<html>Internal proxy error</html>" });
    }
    send(res, await handler({ method: req.method ?? "GET", path, body }, standin));
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  standin.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standin.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await oracle.close();
  };
  return standin;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, reply: StandinReply): void {
  if (res.headersSent) return;
  const text = reply.text ?? JSON.stringify(reply.json);
  res.writeHead(reply.status, { "content-type": reply.text === undefined ? "application/json" : "text/html" });
  res.end(text);
}

/** What the server's tokenizer endpoints share: HF tokenisation of `prompt`. */
export function tokenizeReply(standin: Standin, body: unknown): StandinReply {
  const { prompt, add_special_tokens } = (body ?? {}) as { prompt?: unknown; add_special_tokens?: unknown };
  if (typeof prompt !== "string") return badRequest("prompt must be a string");
  const tokens = standin.oracle.tokenize(prompt, add_special_tokens !== false);
  return { status: 200, json: { tokens, count: tokens.length, max_model_len: standin.oracle.contextSize } };
}

export function modelsReply(standin: Standin, ownedBy: string): StandinReply {
  const card = {
    id: standin.servedModelName,
    object: "model",
    created: 0,
    owned_by: ownedBy,
    root: standin.servedModelName,
    parent: null,
    max_model_len: standin.oracle.contextSize,
  };
  return { status: 200, json: { object: "list", data: [card] } };
}

export function badRequest(message: string, status = 400): StandinReply {
  return { status, json: { error: { message, type: "BadRequestError", param: null, code: status } } };
}

/** The default temperature a "processed-temperature" server substitutes for a greedy request. */
const SUBSTITUTED_TEMPERATURE = 0.7;

/**
 * The (id, log-probability) pairs a server returns for `requested` ids (or its natural top
 * `naturalK` when there are none, or when it ignores them), under the stand-in's fault. A
 * server that `scalesByTemperature` (SGLang) reports log-softmax(logits / T), greedy counting
 * as T = 1; one that does not (vLLM's raw mode) reports the plain log-softmax.
 */
export function candidateLogProbs(
  logits: Float64Array,
  requested: Token[] | undefined,
  sampling: { temperature: number; scalesByTemperature: boolean },
  naturalK: number,
  fault: StandinFault | undefined,
): [Token, number][] {
  const values = logSoftmax(logits, temperatureScale(sampling, fault));
  let ids = requested === undefined || fault === "ignores-ids" ? topTokens(values, naturalK) : [...requested];
  if (fault === "partial") ids = ids.slice(0, -1);
  // Not the most likely token: vLLM returns the sampled one besides those asked for.
  if (fault === "extra-id")
    ids.push(
      topTokens(values, ids.length + 2)
        .slice(1)
        .find((id) => !ids.includes(id))!,
    );
  let entries: [Token, number][] = ids.map((id) => [id, values[id]]);
  if (fault === "processed-renormalised") {
    const max = Math.max(...entries.map(([, v]) => v));
    const total = max + Math.log(entries.reduce((sum, [, v]) => sum + Math.exp(v - max), 0));
    entries = entries.map(([id, v]) => [id, v - total]);
  }
  if (fault === "invalid-value" && entries.length > 0) entries[0] = [entries[0][0], 0.5];
  return entries;
}

/** The temperature the reported values are computed at. */
export function temperatureScale(sampling: { temperature: number; scalesByTemperature: boolean }, fault: StandinFault | undefined): number {
  const greedy = sampling.temperature < 1e-5;
  if (fault === "processed-temperature") return greedy ? SUBSTITUTED_TEMPERATURE : sampling.temperature;
  return sampling.scalesByTemperature && !greedy ? sampling.temperature : 1;
}
