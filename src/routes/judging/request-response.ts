import type { Context } from "hono";
import { ApiError } from "../../errors.js";
import type { KeyAuthenticator } from "../../http/authenticate.js";
import type { AppEnv } from "../../http/context.js";
import type { JsonBody } from "../../http/read-body.js";
import { billingHeaders } from "../../http/standing-headers.js";
import type { DebiasMode } from "../../judgment/debias.js";
import { judge, type JudgingDeps, type RenderAnswers } from "../../services/judging/judge.js";
import type { JudgmentRequest } from "../../services/judging/request.js";
import type { LimitsService } from "../../services/limits.js";
import { mayUse, modelChoice } from "../../services/served-models/pick.js";
import type { ModelRegistry, ServedModel } from "../../services/served-models/registry.js";
import type { Temperatures } from "../../judgment/answers.js";
import type { TaskSelection } from "../../services/judging/task-heads.js";
import type { TasksService } from "../../services/tasks/service.js";

/**
 * What POST /v1/systemone and POST /v1/decisions share at the edge: the judging service
 * (services/judging/) called with the one JudgmentRequest, its outcome written as a response.
 */

/** What both judging routes need: the judging service's deps (built once, in app.ts) and the edge's own. */
export interface JudgingRouteDeps {
  judging: JudgingDeps;
  keys: KeyAuthenticator;
  limits: LimitsService;
  maxQuestions: number;
  /** Option-order debiasing for requests that do not say (JUDGE_DEBIAS). */
  debias: DebiasMode;
  /** The served models: the one asked and its fallbacks are the chain judge() walks. */
  models: ModelRegistry;
  /** The calibration of each model, by id (read per request: a profile applies once its model is known). */
  temperaturesOf: (modelId: string) => Temperatures;
  /** Tenants' tasks: `x_task` names one, and /v1/tasks manages them. */
  tasks: TasksService;
}

/**
 * What the edge knows of a judging request whatever its wire format: who asks, its
 * Idempotency-Key and the digest of the body as read, the client's signal, and the chain of
 * models to try from the one asked. Each route adds what its body asks.
 */
export function judgingContext(c: Context<AppEnv>, deps: JudgingRouteDeps, body: JsonBody, model: ServedModel) {
  // Fallbacks the plan may not use are skipped: a restriction is never got round by a model being down.
  const allowed = c.get("caller").terms.allowedModels;
  const models = deps.models
    .chain(model)
    .filter((m) => mayUse(m, allowed))
    .map((m) => modelChoice(m, deps.temperaturesOf));
  if (deps.models.declared) c.set("model", model.id);
  return {
    models,
    caller: c.get("caller"),
    requestId: c.get("requestId"),
    idempotencyKey: idempotencyKeyOf(c),
    bodyDigest: body.digest,
    signal: c.req.raw.signal,
  } satisfies Partial<JudgmentRequest>;
}

export async function answerQuestions(c: Context<AppEnv>, deps: JudgingRouteDeps, request: JudgmentRequest, render: RenderAnswers): Promise<Response> {
  const outcome = await judge(deps.judging, request, render);
  c.set("judging", outcome);
  const headers: Record<string, string> = { ...JSON_TYPE, ...billingHeaders(outcome) };
  // Never silent: the body's `model` is the one that answered, and this names the one that was down.
  if (outcome.fallbackFrom !== undefined) headers[FALLBACK_HEADER] = outcome.fallbackFrom;
  if (deps.models.declared && outcome.answeredBy !== undefined) c.set("model", outcome.answeredBy);
  return c.body(outcome.text, 200, outcome.replayed ? { ...headers, "idempotent-replayed": "true" } : headers);
}

const JSON_TYPE = { "content-type": "application/json" };

/** `x_task`: the task in the caller's account, with its versions' heads; another account's is not found either. */
export async function taskOf(
  c: Context<AppEnv>,
  deps: JudgingRouteDeps,
  name: string | undefined,
  refusal: (code: "task_not_found", message: string) => ApiError = (code, message) => new ApiError(code, message),
): Promise<{ task?: TaskSelection }> {
  if (name === undefined) return {};
  const task = await deps.tasks.selection(c.get("caller").accountId, name);
  if (!task) throw refusal("task_not_found", `x_task: no task ${JSON.stringify(name)} in this account`);
  return { task };
}

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

/** Set when the model asked for was down and its fallback answered: the id of the one asked. */
export const FALLBACK_HEADER = "x-judge-fallback";
