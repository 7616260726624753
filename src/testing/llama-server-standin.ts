import http from "node:http";

/**
 * Fault injection for the llama-server engine: an HTTP stand-in in front of a real llama-server
 * that forwards everything (so the numbers are the real model's) and, for `/completion`, can
 * misbehave the way a wrong build, a proxy or a broken server would. It records every
 * `/completion` exchange so tests can see slots and cache reuse.
 */
export type StandInMode =
  /** Forward unchanged. */
  | "pass"
  /** Flips post_sampling_probs upstream: processed lists where raw ones were asked (`prob`/`top_probs`) and raw where processed, as from a server that ignores the field. */
  | "post-sampling"
  /** Post-sampling values under the raw names (`logprob` = log of the processed probability). */
  | "processed-as-logprobs"
  /** The top list's entries lose their `id`. */
  | "missing-ids"
  /** Drops logit_bias: nothing is forced or lifted. */
  | "ignores-bias"
  /** A 200 whose body is cut off mid-JSON. */
  | "malformed-json"
  /** A 500 with llama-server's error shape. */
  | "error-500"
  /** Every route answers 503 as llama-server does while it loads the model. */
  | "loading";

export interface Exchange {
  request: Record<string, any>;
  status: number;
  reply: any;
  /** Bytes of the request and reply bodies, as sent over the wire. */
  bytes: { request: number; reply: number };
}

export interface LlamaServerStandIn {
  url: string;
  mode: StandInMode;
  /** Added before relaying each /completion call: a server that takes this long per call (a slow or remote GPU). */
  delayMs: number;
  /** Every /completion exchange relayed from the real server so far. */
  readonly exchanges: Exchange[];
  /** Every call it received, in order (`/completion`, `/tokenize`, `/props`...), with its JSON body. */
  readonly calls: Array<{ route: string; body: any }>;
  /** The most /completion calls it held at once (delay and relay) since the last reset. */
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startLlamaServerStandIn(upstream: string, mode: StandInMode = "pass"): Promise<LlamaServerStandIn> {
  const exchanges: Exchange[] = [];
  const calls: Array<{ route: string; body: any }> = [];
  const state = { mode, delayMs: 0, inFlight: 0, maxInFlight: 0 };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = await readBody(req);
    const route = req.url ?? "/";
    calls.push({ route, body: parseOrText(body) });
    const authorization = req.headers.authorization;
    if (state.mode === "loading") {
      return void relay(res, { status: 503, text: JSON.stringify({ error: { code: 503, message: "Loading model", type: "unavailable_error" } }) });
    }
    if (route !== "/completion") return void relay(res, await forward(upstream, req.method ?? "GET", route, body, authorization));
    const request = JSON.parse(body) as Record<string, any>;
    const current = state.mode;
    if (current === "error-500") {
      return void relay(res, { status: 500, text: JSON.stringify({ error: { code: 500, message: "injected failure", type: "server_error" } }) });
    }
    state.maxInFlight = Math.max(state.maxInFlight, ++state.inFlight);
    let upstreamReply: Awaited<ReturnType<typeof forward>>;
    try {
      if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      const sent = { ...request };
      if (current === "post-sampling") sent.post_sampling_probs = !request.post_sampling_probs;
      if (current === "processed-as-logprobs") sent.post_sampling_probs = true;
      if (current === "ignores-bias") delete sent.logit_bias;
      upstreamReply = await forward(upstream, "POST", route, JSON.stringify(sent), authorization);
    } finally {
      state.inFlight--;
    }
    let reply = JSON.parse(upstreamReply.text);
    // A call with several prompts answers with a list of replies.
    const each = (change: (one: any) => any) => (reply = Array.isArray(reply) ? reply.map(change) : change(reply));
    if (current === "processed-as-logprobs") each(renameProcessed);
    if (current === "missing-ids") {
      each((one) => {
        for (const entry of one.completion_probabilities ?? []) for (const top of entry.top_logprobs ?? entry.top_probs ?? []) delete top.id;
        return one;
      });
    }
    const text = JSON.stringify(reply);
    exchanges.push({ request, status: upstreamReply.status, reply, bytes: { request: Buffer.byteLength(body), reply: Buffer.byteLength(text) } });
    relay(res, { status: upstreamReply.status, text: current === "malformed-json" ? text.slice(0, Math.floor(text.length / 2)) : text });
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(value: StandInMode) {
      state.mode = value;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    exchanges,
    calls,
    get maxInFlight() {
      return state.maxInFlight;
    },
    set maxInFlight(value: number) {
      state.maxInFlight = value;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parseOrText(body: string): unknown {
  try {
    return body === "" ? undefined : JSON.parse(body);
  } catch {
    return body;
  }
}

function renameProcessed(reply: any): any {
  const toLog = (entry: any) => {
    const { prob, top_probs, ...rest } = entry;
    const out: any = { ...rest, logprob: Math.log(prob) };
    if (top_probs) out.top_logprobs = top_probs.map(toLog);
    return out;
  };
  return { ...reply, completion_probabilities: (reply.completion_probabilities ?? []).map(toLog) };
}

async function forward(upstream: string, method: string, route: string, body: string, authorization?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(upstream + route, {
    method,
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: method === "GET" ? undefined : body,
  });
  return { status: response.status, text: await response.text() };
}

function relay(res: http.ServerResponse, reply: { status: number; text: string }) {
  res.writeHead(reply.status, { "content-type": "application/json" });
  res.end(reply.text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}
