import { expect } from "vitest";
import type { EngineResult, JudgmentEngine, PreparedJudgment } from "../../engine/types.js";
import { call, show, type CapturedResponse, type Caller } from "../../testing/http-client.js";
import { openApiConformance, type OpenApiConformance } from "../../testing/openapi-conformance.js";

/** Route tests of /v1/tasks…: a client, the document's check of each response, and an engine a test can hold mid-fit. */

/** `method path` with the caller's key; a string body is sent as-is (JSON by default), anything else JSON-encoded. */
export function taskCall(
  server: Caller,
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string; contentType?: string } = {},
): Promise<CapturedResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? server.key}` };
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  return call(server.url, path, {
    method,
    headers,
    ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** The document's path of a concrete /v1/tasks… path: /v1/tasks/task_1/fits/fit_2 → /v1/tasks/{task}/fits/{fit}. */
export function templateOf(path: string): string {
  const bare = path.split("?")[0];
  return bare
    .replace(/^\/v1\/tasks\/[^/]+/, (all) => (all === "/v1/tasks" ? all : "/v1/tasks/{task}"))
    .replace(/\/fits\/[^/]+$/, "/fits/{fit}")
    .replace(/\/versions\/[^/]+$/, "/versions/{version}");
}

/** GET /openapi.json of `url`, and a check of responses of /v1/tasks… (whose paths are templated) and of the judging routes against it. */
export async function documentOf(url: string): Promise<{ document: any; check(response: CapturedResponse): CapturedResponse }> {
  const fetched = await call(url, "/openapi.json");
  expect(fetched.status, show(fetched)).toBe(200);
  const conformance: OpenApiConformance = openApiConformance(fetched.json);
  return {
    document: fetched.json,
    check(response) {
      conformance.check({ ...response, path: templateOf(response.path) });
      return response;
    },
  };
}

/** Polls the fit at `location` until it is no longer running; returns its last view. */
export async function settledFit(server: Caller, location: string, timeoutMs = 60_000): Promise<CapturedResponse> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const response = await taskCall(server, "GET", location);
    expect(response.status, show(response)).toBe(200);
    if (response.json.state !== "running") return response;
    if (performance.now() > deadline) throw new Error(`the fit is still running after ${timeoutMs} ms\n${show(response)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface GatedEngine extends JudgmentEngine {
  /** From now on, evaluations past the `after`-th (counted from now) wait until `release()`. */
  holdAfter(after: number): { readonly entered: Promise<void>; release(): void };
  /** Opens every gate: for clean-up. */
  releaseAll(): void;
  readonly evaluations: number;
}

/**
 * Fault injection only: the real engine (hidden states included), whose evaluations can be held
 * after the first few, so a fit stays running after its 202 (its first example is read before).
 */
export function gatedEngine(inner: JudgmentEngine): GatedEngine {
  let evaluations = 0;
  let gate: { from: number; opened: Promise<void>; enter(): void } | undefined;
  const opens = new Set<() => void>();
  return {
    get modelId() {
      return inner.modelId;
    },
    get description() {
      return inner.description;
    },
    get templateFamily() {
      return inner.templateFamily;
    },
    status: () => inner.status(),
    prepare: (prompt, signal) => inner.prepare(prompt, signal),
    async evaluate(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult> {
      evaluations++;
      const current = gate;
      if (current && evaluations > current.from) {
        current.enter();
        await current.opened;
      }
      return inner.evaluate(prepared, signal);
    },
    ...(inner.readFeatures && { readFeatures: (prepared: PreparedJudgment, signal?: AbortSignal) => inner.readFeatures!(prepared, signal) }),
    close: () => inner.close(),
    holdAfter(after) {
      let open!: () => void;
      let entered!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      const entering = new Promise<void>((resolve) => (entered = resolve));
      const thisGate = { from: evaluations + after, opened, enter: entered };
      gate = thisGate;
      const release = () => {
        if (gate === thisGate) gate = undefined;
        opens.delete(release);
        open();
      };
      opens.add(release);
      return { entered: entering, release };
    },
    releaseAll() {
      for (const release of [...opens]) release();
    },
    get evaluations() {
      return evaluations;
    },
  };
}
