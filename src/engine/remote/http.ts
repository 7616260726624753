import { EngineFailedError, EngineUnavailableError, RequestAbortedError } from "../types.js";
import { messageOf } from "../../error-message.js";

/** A server this engine talks to: its base URL, an optional bearer key, and how long one call may take. */
export interface RemoteServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:8081. */
  url: string;
  key?: string;
  timeoutMs: number;
}

export interface JsonReply {
  status: number;
  body: unknown;
}

/**
 * One JSON call to an inference server. A server that cannot be reached or does not answer in
 * time is `EngineUnavailableError`; a reply that is not JSON is `EngineFailedError`; the client
 * leaving is `RequestAbortedError`. Any status is returned: what it means is the caller's call.
 */
export async function callJson(server: RemoteServer, path: string, body: unknown, signal?: AbortSignal, method: "GET" | "POST" = "POST"): Promise<JsonReply> {
  const timeout = AbortSignal.timeout(server.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: "application/json" };
  if (method === "POST") headers["content-type"] = "application/json";
  if (server.key) headers.authorization = `Bearer ${server.key}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(server.url + path, {
      method,
      headers,
      body: method === "POST" ? JSON.stringify(body) : undefined,
      signal: combined,
    });
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw new RequestAbortedError("the client closed the request before it was answered");
    if (timeout.aborted) throw new EngineUnavailableError(`${describe(server)}${path} did not answer within ${server.timeoutMs} ms`);
    throw new EngineUnavailableError(`cannot reach ${describe(server)}${path}: ${causeOf(error)}`);
  }
  try {
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
  } catch {
    throw new EngineFailedError(`${describe(server)}${path} answered ${response.status} with a body that is not JSON`);
  }
}

/** The server's origin and path without credentials (a URL may carry user:password). */
export function describe(server: Pick<RemoteServer, "url">): string {
  try {
    const url = new URL(server.url);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, "")}`;
  } catch {
    return "the engine server";
  }
}

function causeOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: string } | undefined)?.code;
  const message = messageOf(cause);
  return code && !message.includes(code) ? `${code} ${message}` : message;
}

/** A short, safe quote of what a server said, for error messages. */
export function quote(body: unknown, max = 300): string {
  const text = typeof body === "string" ? body : (JSON.stringify(body) ?? "");
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
