import type { Context } from "hono";
import { RequestAbortedError } from "../engine/types.js";
import { ApiError } from "../errors.js";
import type { AppEnv } from "../http/context.js";
import type { JsonBody } from "../http/read-body.js";
import type { DebiasMode } from "../judgment/debias.js";
import type { Question } from "../judgment/schema.js";
import type { BillingService } from "../services/billing.js";
import { billingHeaders, claimIdempotencyKey, idempotencyKeyOf, reserveOrRefuse, type BillingDeps } from "./systemone.billing.js";
import { prepareJudgment, type JudgmentDeps, type Judged } from "./systemone.judgment.js";

/**
 * The one path below POST /v1/systemone and POST /v1/decisions, from parsed questions to the
 * response: idempotency claim or replay, prepare, hold the charge (402), run the model (502,
 * the hold released), settle. Each route only maps its own wire format in and out, so both
 * get the same engine, billing, idempotency and calibration.
 */

export interface PipelineDeps extends BillingDeps, JudgmentDeps {}

export interface PipelineRequest {
  state: unknown;
  /** The questions' ids, in order: named in a refusal's message. */
  ids: string[];
  questions: Question[];
  includeLogits: boolean;
  debias: DebiasMode;
  /** `x_diagnostics`: label mass and top token per answer. */
  diagnostics?: boolean;
  /** `x_calibration: "contextual"`. */
  contextual?: boolean;
  /** The body as read: an Idempotency-Key compares its digest. */
  body: JsonBody;
}

/**
 * The route's response text for what the model answered. It is also what a retry with the
 * same Idempotency-Key gets again, so it is rendered once, before the charge is settled.
 */
export type RenderAnswers = (judged: Judged) => string;

export async function answerQuestions(c: Context<AppEnv>, deps: PipelineDeps, request: PipelineRequest, render: RenderAnswers): Promise<Response> {
  const caller = c.get("caller");
  const requestId = c.get("requestId");
  const { ids, questions } = request;
  const idempotencyKey = idempotencyKeyOf(c);
  // Before the model is asked anything, so a stored answer is replayed even while it is unavailable.
  const claim = idempotencyKey && { accountId: caller.accountId, key: idempotencyKey, requestHash: request.body.digest, owner: requestId };
  const replay = claim ? await claimIdempotencyKey(deps.billing, claim) : undefined;
  if (replay) return c.body(replay.body, 200, { ...JSON_TYPE, ...billingHeaders(replay), "idempotent-replayed": "true" });
  try {
    const signal = c.req.raw.signal;
    const input = { state: request.state, ids, questions, includeLogits: request.includeLogits, diagnostics: request.diagnostics, contextual: request.contextual, signal };
    const judgment = await prepareJudgment(deps, input, request.debias);
    const reservation = await reserveOrRefuse(deps.billing, caller, {
      questions: questions.length,
      inputTokens: judgment.inputTokens,
      requestId,
    });
    let text: string;
    let actualInputTokens: number | undefined;
    try {
      const answered = await judgment.answer();
      ({ actualInputTokens } = answered);
      text = render(answered.judged);
      // A client gone by now would never receive the answer, so it must not pay for it.
      if (signal.aborted) throw new RequestAbortedError("the client closed the request before it was answered");
    } catch (error) {
      await releaseQuietly(deps.billing, reservation.id);
      throw error;
    }
    const settled = await deps.billing.settle(reservation, claim ? { key: claim.key, body: text } : undefined, actualInputTokens);
    if (!settled) throw new ApiError("model_timeout", "the request outlived its reservation; nothing was charged");
    return c.body(text, 200, { ...JSON_TYPE, ...billingHeaders(settled) });
  } catch (error) {
    if (claim) await deps.billing.abandonIdempotencyKey(claim).catch(() => undefined);
    throw error;
  }
}

const JSON_TYPE = { "content-type": "application/json" };

/**
 * Why a request's model name is refused, or undefined when it names the served model or one of
 * the route's aliases (the names its SDKs send by default). Each route raises it in its own shape.
 */
export function unknownModel(model: string, servedId: string, aliases: readonly string[]): string | undefined {
  if (model === servedId || aliases.includes(model)) return undefined;
  return `unknown model "${model}"; this server answers with "${servedId}" (also accepted: ${aliases.join(", ")})`;
}

/**
 * Gives a failed request's hold back. If the database is down too, the first error is what the
 * client hears; the hold then expires and the sweeper of some instance releases it.
 */
async function releaseQuietly(billing: BillingService, reservationId: string): Promise<void> {
  await billing.release(reservationId).catch(() => undefined);
}
