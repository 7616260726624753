import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors.js";
import { authenticate } from "../../http/authenticate.js";
import type { App } from "../../http/context.js";
import { readJsonBody } from "../../http/read-body.js";
import { decisionsUsage, toDecisionAnswers, toJudgment, UnsupportedDecisionError, type DecisionsQuestion } from "./mapping.js";
import type { NumberTexts } from "../../judgment/render.js";
import type { Judged } from "../../services/judging/prepare.js";
import { withDiagnostics, withTaskNotes } from "../judging/extensions.js";
import type { JudgmentRequest } from "../../services/judging/request.js";
import { answerQuestions, judgingContext, taskOf, type JudgingRouteDeps } from "../judging/request-response.js";
import { pickModel } from "../../services/served-models/pick.js";
import { openAIErrorFormat, ParamError } from "./errors.js";
import { DecisionsErrorBody, DecisionsInputJson, DecisionsInputText, DecisionsRequest, DecisionsResponse, DecisionsUserMessage } from "./schema.js";
import {
  billedToHeader,
  errorResponses,
  judgingErrorDescriptions,
  judgingErrorHeaders,
  rateLimitHeaders,
  requestIdHeader,
  standingHeaders,
} from "../shared.schema.js";
import { rateLimit } from "../../http/rate-limit.js";
import { describeIssues } from "../systemone/route.js";

/**
 * POST /v1/decisions: the OpenAI Decisions format (`client.decisions.create` of the official
 * SDKs), a second front door to the same judgment as /v1/systemone. The request is mapped to
 * our questions (mapping.ts), answered by the same pipeline, with the same keys,
 * limits, billing and idempotency, and the answers are written back in this format.
 */

/** The hosted service's model name (the SDK's `model` documentation); here it means "the model this server serves". */
export const DECISIONS_MODEL_ALIASES = ["gpt-6-luna"] as const;

const route = createRoute({
  method: "post",
  path: "/v1/decisions",
  summary: "Answer typed questions about an input (the OpenAI Decisions format)",
  security: [{ bearerAuth: [] }],
  request: {
    headers: z.object({
      "idempotency-key": z.string().optional().openapi({
        description: "Optional, as on /v1/systemone: a retry with the same key and body gets the first response again and is not charged again.",
      }),
    }),
    body: { required: true, content: { "application/json": { schema: DecisionsRequest } } },
  },
  responses: {
    200: {
      description: "One answer per question, in request order.",
      headers: { ...requestIdHeader, ...billedToHeader, ...standingHeaders, ...rateLimitHeaders },
      content: { "application/json": { schema: DecisionsResponse } },
    },
    ...errorResponses(
      judgingErrorDescriptions(
        "Invalid request: malformed JSON, a wrong field, an unsupported input (an image, a tool item, a message not from the user), an unknown model, over a limit, or an Idempotency-Key reused with another body.",
      ),
      judgingErrorHeaders,
      DecisionsErrorBody,
    ),
  },
});

export function registerDecisions(app: App, deps: JudgingRouteDeps): void {
  // Documented by hand-written schemas (the validator is looser: see decisions.schema.ts).
  for (const [name, schema] of [
    ["DecisionsUserMessage", DecisionsUserMessage],
    ["DecisionsInputText", DecisionsInputText],
    ["DecisionsInputJson", DecisionsInputJson],
  ] as const) {
    app.openAPIRegistry.register(name, schema);
  }
  app.openAPIRegistry.registerPath(route);
  // The same order as /v1/systemone: 401, 429, 413/400, 402, then the model.
  app.post(route.path, openAIErrorFormat, authenticate(deps.keys), rateLimit(deps.limits), async (c) => {
    const body = await readJsonBody(c);
    const request = parseDecisionsRequest(body.value, deps);
    const picked = pickModel(deps.models, request.model, DECISIONS_MODEL_ALIASES, c.get("caller").terms.allowedModels);
    if (!("model" in picked)) throw new ParamError(picked.code, picked.message, "model");
    const questions: readonly DecisionsQuestion[] = request.questions;
    const mapped = mapOrRefuse(request, body.numberTexts);
    const judgment: JudgmentRequest = {
      ...mapped,
      numberTexts: body.numberTexts,
      includeLogits: false,
      // A task's heads read the options as sent: the server's default debiasing does not apply to it.
      debias: request.x_debias ?? (request.x_task === undefined ? deps.debias : "none"),
      diagnostics: request.x_diagnostics === true,
      contextual: request.x_calibration === "contextual",
      ...(await taskOf(c, deps, request.x_task, (code, message) => new ParamError(code, message, "x_task"))),
      ...judgingContext(c, deps, body, picked.model),
    };
    return answerQuestions(c, deps, judgment, (judged) => JSON.stringify(responseBody(questions, judged)));
  });
}

function responseBody(questions: readonly DecisionsQuestion[], judged: Judged): DecisionsResponse {
  const body: DecisionsResponse = {
    model: judged.model,
    answers: withTaskNotes(withDiagnostics(toDecisionAnswers(questions, judged.answers), judged.diagnostics), judged.answers),
    usage: decisionsUsage(judged.inputTokens),
  };
  return judged.debias ? { ...body, x_debias: judged.debias } : body;
}

function mapOrRefuse(request: DecisionsRequest, numberTexts: NumberTexts | undefined) {
  try {
    return toJudgment(request, numberTexts);
  } catch (error) {
    if (error instanceof UnsupportedDecisionError) throw new ParamError("invalid_request", error.message, error.param);
    throw error;
  }
}

/** Validates the body against the schema and this server's limits; `param` names the field at fault. */
export function parseDecisionsRequest(body: unknown, deps: Pick<JudgingRouteDeps, "maxQuestions">): DecisionsRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("invalid_request", "the request body must be a JSON object");
  }
  const parsed = DecisionsRequest.safeParse(body);
  if (!parsed.success) throw new ParamError("invalid_request", describeIssues(parsed.error), paramOf(parsed.error.issues[0].path));
  const request = parsed.data;
  if (request.questions.length > deps.maxQuestions) {
    throw new ParamError(
      "too_many_questions",
      `${request.questions.length} questions; this server answers at most ${deps.maxQuestions} per request`,
      "questions",
    );
  }
  return request;
}

/** `questions[2].choices[0].value`, as OpenAI's `param` names a field. */
function paramOf(path: readonly PropertyKey[]): string | null {
  if (path.length === 0) return null;
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}
