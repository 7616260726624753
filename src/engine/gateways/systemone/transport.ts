import http from "node:http";
import https from "node:https";
import { describe, type RemoteServer } from "../../remote/http.js";
import { EngineFailedError, EngineUnavailableError, RequestAbortedError } from "../../types.js";

/**
 * The gateway's HTTP client: node:http with a keep-alive pool. The gateway makes one upstream
 * call per request on its hot path, and node:http costs a fraction of the CPU of the global
 * fetch (see src/bench/http-client.ts). Statuses are returned as they are; what one means is
 * the engine's call. The key never appears in an error.
 */

export interface UpstreamReply {
  status: number;
  text: string;
}

/** An upstream answer larger than this is refused rather than buffered (ours are at most a few hundred KB). */
export const MAX_REPLY_BYTES = 16 * 1024 * 1024;

export interface Transport {
  call(method: "GET" | "POST", path: string, body: string | undefined, options: { signal?: AbortSignal; timeoutMs: number }): Promise<UpstreamReply>;
  close(): void;
}

export function createTransport(server: RemoteServer): Transport {
  const base = server.url.replace(/\/+$/, "");
  const secure = base.startsWith("https:");
  const agent = new (secure ? https : http).Agent({ keepAlive: true, scheduling: "lifo" });
  const request = secure ? https.request : http.request;
  const authorization = server.key ? `Bearer ${server.key}` : undefined;

  const once = (method: string, path: string, body: string | undefined, signal: AbortSignal | undefined, timeoutMs: number) =>
    new Promise<UpstreamReply>((resolve, reject) => {
      const where = `${describe(server)}${path}`;
      const headers: Record<string, string | number> = { accept: "application/json" };
      if (authorization) headers.authorization = authorization;
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(body);
      }
      let settled = false;
      const finish = (error: Error | undefined, reply?: UpstreamReply) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve(reply!);
      };
      const req = request(base + path, { method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_REPLY_BYTES) {
            finish(new EngineFailedError(`${where} answered with more than ${MAX_REPLY_BYTES} bytes`));
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => finish(undefined, { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (error) => finish(unreachable(where, error)));
      });
      const onAbort = () => {
        finish(new RequestAbortedError("the client closed the request before it was answered"));
        req.destroy();
      };
      const timer = setTimeout(() => {
        finish(new EngineUnavailableError(`${where} did not answer within ${timeoutMs} ms`));
        req.destroy();
      }, timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (error) => finish(Object.assign(unreachable(where, error), { reusedSocket: req.reusedSocket, code: codeOf(error) })));
      req.end(body);
    });

  return {
    async call(method, path, body, { signal, timeoutMs }) {
      try {
        return await once(method, path, body, signal, timeoutMs);
      } catch (error) {
        // An idle keep-alive connection the upstream closed as we sent: the request never
        // reached it (Node's documented pattern), so sending it again cannot bill twice.
        const e = error as { reusedSocket?: boolean; code?: string };
        if (e.reusedSocket && e.code === "ECONNRESET") return once(method, path, body, signal, timeoutMs);
        throw error;
      }
    },
    close: () => agent.destroy(),
  };
}

function unreachable(where: string, error: Error): EngineUnavailableError {
  const code = codeOf(error);
  const message = code && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
  return new EngineUnavailableError(`cannot reach ${where}: ${message}`);
}

const codeOf = (error: unknown) => (error as { code?: string } | undefined)?.code;
