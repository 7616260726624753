import { EngineUnavailableError, RequestAbortedError } from "../../engine/types.js";
import type { PromptCuesSetting } from "../../judgment/prompt.js";
import type { BillingService, IdempotencyInput, Payer } from "../billing.js";
import { IdempotencyKeyLostError } from "../errors.js";
import type { BilledTo, Reservation, Standing, StoredResponse } from "../types.js";
import { deadline } from "./deadline.js";
import { JudgingRefusal, judgingRefusalOf } from "./errors.js";
import { prepareJudgment, type Judged } from "./prepare.js";
import type { JudgmentRequest, ModelChoice } from "./request.js";
import type { ReadCache } from "./read-cache.js";

/**
 * The one judging flow below POST /v1/systemone and POST /v1/decisions, from the one request
 * to the response text: idempotency claim or replay, prepare, hold the charge, run the model
 * (the hold released on failure), settle. It knows no HTTP: it returns data and throws domain
 * errors (JudgingRefusal, the engine's mapped to one in errors.ts; InsufficientFundsError and
 * the store's as billing throws them), which the edge maps to statuses through the catalogue.
 * Each route only maps its own wire format in and out, so both get the same engine, billing,
 * idempotency and calibration.
 */

/** What judging needs besides the models a request names (the composition root builds it once). */
export interface JudgingDeps {
  billing: BillingService;
  /** JUDGE_REQUEST_TIMEOUT_MS: one deadline over a whole request, every model tried. */
  requestTimeoutMs: number;
  /** JUDGE_PROMPT_CUES; `auto` (the default) styles the prompt for the engine's template family. */
  promptCues?: PromptCuesSetting;
  /** JUDGE_READ_CACHE_MB: strict reads kept per account and prompt (read-cache.ts); none when 0. */
  readCache?: ReadCache;
}

/**
 * The route's response text for what the model answered. It is also what a retry with the
 * same Idempotency-Key gets again, so it is rendered once, before the charge is settled.
 */
export type RenderAnswers = (judged: Judged) => string;

/**
 * What a request came to: the response text, who paid and the standing after it, and which
 * model answered. The edge writes its headers and counts its metrics from this, never from the
 * response. `replayed` when it is a stored answer given again (billed the first time).
 */
export interface JudgingOutcome {
  text: string;
  billedTo: BilledTo;
  standing: Standing;
  replayed: boolean;
  /** What the model answered (answers, tokens billed, timing); absent on a replay, which is only the stored text. */
  judged?: Judged;
  /** Set when the model asked was down and this one answered instead: the one asked. */
  fallbackFrom?: string;
  /** The id of the model that answered; absent on a replay. */
  answeredBy?: string;
}

export async function judge(deps: JudgingDeps, request: JudgmentRequest, render: RenderAnswers): Promise<JudgingOutcome> {
  const { caller, requestId, questions, idempotencyKey, signal } = request;
  // Before the model is asked anything, so a stored answer is replayed even while it is unavailable.
  const claim = idempotencyKey && { accountId: caller.accountId, key: idempotencyKey, requestHash: request.bodyDigest, owner: requestId };
  const replay = claim ? await claimIdempotencyKey(deps.billing, claim) : undefined;
  if (replay) return { text: replay.body, billedTo: replay.billedTo, standing: replay.standing, replayed: true };
  // JUDGE_REQUEST_TIMEOUT_MS as its name says: one deadline over preparing, holding and answering, every model tried.
  const time = deadline(signal, deps.requestTimeoutMs);
  try {
    const chain = request.models;
    if (chain.length === 0) throw new Error("judge() needs the model asked: request.models is empty");
    for (const [i, model] of chain.entries()) {
      try {
        const outcome = await answerWith(model, claim);
        return i === 0 ? { ...outcome, answeredBy: model.id } : { ...outcome, answeredBy: model.id, fallbackFrom: chain[0].id };
      } catch (error) {
        // Down (not loaded, unreachable): nothing was held or charged, so the next model may answer.
        if (!(error instanceof EngineUnavailableError) || i === chain.length - 1 || time.signal.aborted) throw error;
      }
    }
    throw new Error("unreachable: the last model's failure is thrown");
  } catch (error) {
    if (claim) await deps.billing.abandonIdempotencyKey(claim).catch(() => undefined);
    throw judgingRefusalOf(error);
  } finally {
    time.dispose();
  }

  async function answerWith(model: ModelChoice, claim: IdempotencyInput | "" | undefined): Promise<JudgingOutcome> {
    const judgment = await prepareJudgment(model, request, time, deps.promptCues, deps.readCache);
    // Refused with InsufficientFundsError (and the standing that explains why); nothing is charged.
    const reservation = await reserve(deps.billing, caller, {
      questions: questions.length,
      inputTokens: judgment.inputTokens,
      requestId,
      idempotencyKey: claim ? claim.key : undefined,
      model: { id: model.id, multiplierMilli: model.multiplierMilli },
    });
    let text: string;
    let answered: Awaited<ReturnType<typeof judgment.answer>>;
    try {
      answered = await judgment.answer();
      text = render(answered.judged);
      // A client gone by now would never receive the answer, so it must not pay for it.
      if (signal.aborted) throw new RequestAbortedError("the client closed the request before it was answered");
    } catch (error) {
      await releaseQuietly(deps.billing, reservation.id);
      throw error;
    }
    const settled = await deps.billing.settle(reservation, claim ? { key: claim.key, body: text } : undefined, answered.actualInputTokens);
    if (!settled) throw new JudgingRefusal("model_timeout", "the request outlived its reservation; nothing was charged");
    return { text, billedTo: settled.billedTo, standing: settled.standing, replayed: false, judged: answered.judged };
  }
}

/** Holds the charge; a request whose Idempotency-Key a retry took meanwhile is refused. */
async function reserve(billing: BillingService, caller: Payer, input: Parameters<BillingService["reserve"]>[1]): Promise<Reservation> {
  try {
    return await billing.reserve(caller, input);
  } catch (error) {
    // model_timeout like any request that outlived its time: the SDK's retry then gets the retry's answer.
    if (error instanceof IdempotencyKeyLostError) throw new JudgingRefusal("model_timeout", error.message);
    throw error;
  }
}

/** The stored response for a retry; refused while the first attempt runs, or for another body. */
async function claimIdempotencyKey(billing: BillingService, claim: IdempotencyInput): Promise<StoredResponse | undefined> {
  const outcome = await billing.claimIdempotencyKey(claim);
  switch (outcome.kind) {
    case "claimed":
      return undefined;
    case "replay":
      return outcome.response;
    case "running":
      throw new JudgingRefusal("idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry when it has finished");
    case "mismatch":
      throw new JudgingRefusal("idempotency_key_reused", "this Idempotency-Key was used with a different request body");
  }
}

/**
 * Gives a failed request's hold back. If the database is down too, the first error is what the
 * client hears; the hold then expires and the sweeper of some instance releases it.
 */
async function releaseQuietly(billing: BillingService, reservationId: string): Promise<void> {
  await billing.release(reservationId).catch(() => undefined);
}
