/**
 * A small HTTP client for route tests: every call keeps the whole response (status, headers and
 * body text) so an assertion message can print all of it.
 */
export interface CapturedResponse {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export async function call(baseUrl: string, path: string, init: RequestInit = {}): Promise<CapturedResponse> {
  const response = await fetch(baseUrl + path, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { method: init.method ?? "GET", path, status: response.status, headers: response.headers, text, json };
}

/** The whole response, for assertion messages. */
export function show(response: CapturedResponse, note = ""): string {
  const headers = [...response.headers].map(([name, value]) => `  ${name}: ${value}`).join("\n");
  return `${note ? note + "\n" : ""}${response.method} ${response.path} -> ${response.status}\n${headers}\n  body: ${response.text}`;
}

export interface Caller {
  url: string;
  key: string;
}

/**
 * POST `path` with a key. `body` is sent as-is when it is a string, JSON-encoded otherwise.
 * `key: null` sends no Authorization header; `authorization` sends that header verbatim.
 */
export function postWithKey(
  server: Caller,
  path: string,
  body: unknown,
  options: { key?: string | null; authorization?: string; headers?: Record<string, string> } = {},
): Promise<CapturedResponse> {
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  const key = options.key === undefined ? server.key : options.key;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (key !== null) headers.authorization = `Bearer ${key}`;
  return call(server.url, path, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
}

/** POST /v1/systemone (see postWithKey). */
export const postJudgment = (server: Caller, body: unknown, options?: Parameters<typeof postWithKey>[3]) => postWithKey(server, "/v1/systemone", body, options);

/** Reference confidence of a choice answer (jev-compat.md): (m − 1/n) / (1 − 1/n). */
export function referenceChoiceConfidence(p: number[]): number {
  const n = p.length;
  return (Math.max(...p) - 1 / n) / (1 - 1 / n);
}

/**
 * Reference confidence of a score answer (jev-compat.md): max(0, 1 − Σ pᵢ·|i − k| / D),
 * k the most likely level, D = (1/n)·Σᵢ |i − (n−1)/2|.
 */
export function referenceScoreConfidence(p: number[]): number {
  const n = p.length;
  const k = p.indexOf(Math.max(...p));
  const spread = p.reduce((sum, pi, i) => sum + pi * Math.abs(i - k), 0);
  const d = p.reduce((sum, _, i) => sum + Math.abs(i - (n - 1) / 2), 0) / n;
  return Math.max(0, 1 - spread / d);
}
