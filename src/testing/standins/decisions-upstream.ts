import { startSystemOneStandIn, type ReceivedRequest, type SystemOneStandIn } from "./systemone-upstream.js";

/**
 * A stand-in for a server of OpenAI's Decisions format (`POST /v1/decisions`), for the decisions
 * gateway's tests. Its numbers are real: every request it takes is answered by a real instance
 * of this service (the tiny model) through that instance's own /v1/decisions route, which
 * speaks the format exactly (tested against the official SDK: routes/decisions/sdk.test.ts).
 * It checks its own key, as a hosted server does, and can be broken one way at a time (`fault`):
 * a refused key (OpenAI's 401, echoing the key), any status, a body that is not JSON, the real
 * answer changed (bad probabilities, wrong order, no usage…), or an answer that comes too late.
 */

export type DecisionsFault =
  | { kind: "none" }
  /** OpenAI's 401 for a wrong key, quoting the key it was sent (the gateway must scrub it). */
  | { kind: "refuse-key" }
  | { kind: "status"; status: number; body: unknown }
  /** 200 with this text as the body (malformed JSON, NaN as Python writes it). */
  | { kind: "text"; text: string }
  /** The real answer, changed in place by `mutate` (or replaced by what it returns). */
  | { kind: "mutate"; mutate: (body: any) => unknown }
  /** The real answer, after this long. */
  | { kind: "delay"; ms: number };

export interface DecisionsStandIn {
  /** Its root: /v1/decisions is below it. */
  url: string;
  /** The key it takes (any other gets the 401 of a wrong key). */
  key: string;
  fault: DecisionsFault;
  readonly requests: ReceivedRequest[];
  /** The judgments it was asked: POSTs to /v1/decisions with questions (the gateway's probe has none). */
  decisions(): ReceivedRequest[];
  close(): Promise<void>;
}

export const STAND_IN_KEY = "sk-standin-decisions-5e8c1a9f";

/** In front of `upstream` (a running instance of this service and a key of it). */
export async function startDecisionsStandIn(upstream: { url: string; key: string }, options: { prefix?: string } = {}): Promise<DecisionsStandIn> {
  let server: SystemOneStandIn | undefined;
  const standIn: DecisionsStandIn = {
    url: "",
    key: STAND_IN_KEY,
    fault: { kind: "none" },
    get requests() {
      return server!.requests;
    },
    decisions: () => server!.requests.filter((r) => r.method === "POST" && r.path === "/v1/decisions" && "questions" in (parsed(r.body) ?? {})),
    close: () => server!.close(),
  };
  server = await startSystemOneStandIn(
    async (request) => {
      if (request.path !== "/v1/decisions") return undefined;
      const fault = standIn.fault;
      if (request.headers.authorization !== `Bearer ${STAND_IN_KEY}` || fault.kind === "refuse-key") {
        const sent = (request.headers.authorization ?? "").replace(/^Bearer /, "");
        return { status: 401, body: openAIError(`Incorrect API key provided: ${sent}.`, "invalid_api_key") };
      }
      if (fault.kind === "status") return { status: fault.status, body: fault.body };
      if (fault.kind === "text") return { body: fault.text };
      const real = await fetch(`${upstream.url}/v1/decisions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${upstream.key}` },
        body: request.body,
      });
      const body = await real.json();
      if (fault.kind === "mutate" && real.status === 200) {
        const changed = fault.mutate(body);
        return { body: changed === undefined ? body : changed };
      }
      return { status: real.status, body, delayMs: fault.kind === "delay" ? fault.ms : undefined };
    },
    { prefix: options.prefix },
  );
  standIn.url = server.url;
  return standIn;
}

/** OpenAI's error shape. */
export function openAIError(message: string, code: string | null, param: string | null = null, type = "invalid_request_error") {
  return { error: { message, type, param, code } };
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
