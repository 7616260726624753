import { call, type CapturedResponse } from "./http-client.js";
import { TEST_ADMIN_TOKEN } from "./server.js";

export interface AdminCallOptions {
  /** JSON-encoded unless a string, which is sent as-is. */
  body?: unknown;
  /** The bearer token; TEST_ADMIN_TOKEN by default, null for no Authorization header. */
  token?: string | null;
  /** Sent verbatim as the Authorization header, overriding `token`. */
  authorization?: string;
}

/** One admin API request with the whole response kept for assertion messages. */
export function adminCall(server: { url: string }, method: string, path: string, options: AdminCallOptions = {}): Promise<CapturedResponse> {
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? TEST_ADMIN_TOKEN : options.token;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (token !== null) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const body = options.body === undefined || typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  return call(server.url, path, { method, headers, body: body as string | undefined });
}

/** The smallest request POST /v1/systemone answers: one yes/no question. */
export const TINY_JUDGMENT = { state: "The invoice was paid twice.", questions: { paid: { type: "noul", instructions: "Was it paid?" } } };
