import type { Context } from "hono";
import type { JudgmentEngine } from "../engine/types.js";
import { ApiError } from "../errors.js";
import type { KeyAuthenticator } from "../http/authenticate.js";
import type { AppEnv } from "../http/context.js";
import type { JsonBody } from "../http/read-body.js";
import { billingHeaders } from "../http/standing-headers.js";
import type { DebiasMode } from "../judgment/debias.js";
import { judge, type JudgingDeps, type JudgmentAsked, type RenderAnswers } from "../services/judging/judge.js";
import type { LimitsService } from "../services/limits.js";

/**
 * What POST /v1/systemone and POST /v1/decisions share at the edge: the judging service
 * (services/judging/) called with what the request says, its outcome written as a response.
 */

export interface JudgingRouteDeps extends JudgingDeps {
  engine: JudgmentEngine;
  keys: KeyAuthenticator;
  limits: LimitsService;
  maxQuestions: number;
  /** Option-order debiasing for requests that do not say (JUDGE_DEBIAS). */
  debias: DebiasMode;
}

export interface ParsedJudgment extends JudgmentAsked {
  /** The body as read: an Idempotency-Key compares its digest. */
  body: JsonBody;
}

export async function answerQuestions(c: Context<AppEnv>, deps: JudgingDeps, parsed: ParsedJudgment, render: RenderAnswers): Promise<Response> {
  const { body, ...judgment } = parsed;
  const outcome = await judge(
    deps,
    {
      ...judgment,
      caller: c.get("caller"),
      requestId: c.get("requestId"),
      idempotencyKey: idempotencyKeyOf(c),
      bodyDigest: body.digest,
      signal: c.req.raw.signal,
    },
    render,
  );
  const headers = { ...JSON_TYPE, ...billingHeaders(outcome) };
  return c.body(outcome.text, 200, outcome.replayed ? { ...headers, "idempotent-replayed": "true" } : headers);
}

const JSON_TYPE = { "content-type": "application/json" };

/** Printable ASCII without spaces, as Stripe and the IETF draft use; long enough for a UUID or a hash. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

function idempotencyKeyOf(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError("invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces");
  }
  return key;
}

/**
 * Why a request's model name is refused, or undefined when it names the served model or one of
 * the route's aliases (the names its SDKs send by default). Each route raises it in its own shape.
 */
export function unknownModel(model: string, servedId: string, aliases: readonly string[]): string | undefined {
  if (model === servedId || aliases.includes(model)) return undefined;
  return `unknown model "${model}"; this server answers with "${servedId}" (also accepted: ${aliases.join(", ")})`;
}
