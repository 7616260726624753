import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../errors.js";
import { authenticate } from "../../http/authenticate.js";
import type { App } from "../../http/context.js";
import { rateLimit } from "../../http/rate-limit.js";
import { readJsonBody } from "../../http/read-body.js";
import { keyed } from "../../judgment/keyed.js";
import { withDiagnostics } from "../judging/extensions.js";
import type { Judged } from "../../services/judging/prepare.js";
import type { JudgmentRequest } from "../../services/judging/request.js";
import { answerQuestions, judgingContext, taskOf, type JudgingRouteDeps } from "../judging/request-response.js";
import { pickModel } from "../../services/served-models/pick.js";
import {
  billedToHeader,
  judgingErrorDescriptions,
  judgingErrorHeaders,
  errorResponses,
  rateLimitHeaders,
  requestIdHeader,
  standingHeaders,
} from "../shared.schema.js";
import { JudgmentRequest as SystemOneRequest, JudgmentResponse, Question } from "./schema.js";

/** Model names the ecosystem's SDKs send by default; they mean "the model this server serves". */
export const MODEL_ALIASES = ["jev-latest", "jev-preview"] as const;

const route = createRoute({
  method: "post",
  path: "/v1/systemone",
  summary: "Answer typed questions about a state",
  security: [{ bearerAuth: [] }],
  request: {
    headers: z.object({
      "idempotency-key": z.string().optional().openapi({
        description: "Optional. A retry with the same key and body gets the first response again and is not charged again (kept 24 h).",
      }),
    }),
    body: { required: true, content: { "application/json": { schema: SystemOneRequest } } },
  },
  responses: {
    200: {
      description: "One answer per question.",
      headers: { ...requestIdHeader, ...billedToHeader, ...standingHeaders, ...rateLimitHeaders },
      content: { "application/json": { schema: JudgmentResponse } },
    },
    ...errorResponses(
      judgingErrorDescriptions(
        "Invalid request: malformed JSON, a wrong field, an unknown model, over a limit, or an Idempotency-Key reused with another body.",
      ),
      judgingErrorHeaders,
    ),
  },
});

export function registerSystemOne(app: App, deps: JudgingRouteDeps): void {
  // `questions` is documented by a hand-written $ref (see recordOf), so the schema it points
  // to is registered explicitly.
  app.openAPIRegistry.register("Question", Question);
  app.openAPIRegistry.registerPath(route);
  // The order is the contract: 401, then 429 (every authenticated attempt counts), then
  // 413/400, then 402; the model runs only for a request whose charge is held.
  app.post(route.path, authenticate(deps.keys), rateLimit(deps.limits), async (c) => {
    const body = await readJsonBody(c);
    const asked = parseJudgmentRequest(body.value, deps);
    const picked = pickModel(deps.models, asked.model, MODEL_ALIASES, c.get("caller").terms.allowedModels);
    if (!("model" in picked)) throw new ApiError(picked.code, picked.message);
    const ids = Object.keys(asked.questions);
    const request: JudgmentRequest = {
      state: asked.state,
      ids,
      questions: Object.values(asked.questions),
      includeLogits: asked.include_logits === true,
      // A task's heads read the options as sent: the server's default debiasing does not apply to it.
      debias: asked.x_debias ?? (asked.x_task === undefined ? deps.debias : "none"),
      diagnostics: asked.x_diagnostics === true,
      contextual: asked.x_calibration === "contextual",
      numberTexts: body.numberTexts,
      ...(await taskOf(c, deps, asked.x_task)),
      ...judgingContext(c, deps, body, picked.model),
    };
    return answerQuestions(c, deps, request, (judged) => JSON.stringify(responseBody(ids, judged)));
  });
}

function responseBody(ids: string[], judged: Judged): JudgmentResponse {
  const body: JudgmentResponse = {
    model: judged.model,
    answers: keyed(ids, withDiagnostics(judged.answers, judged.diagnostics)),
    usage: { input_tokens: judged.inputTokens, output_tokens: 0 },
    timing_ms: Math.round(judged.timingMs * 1000) / 1000,
  };
  return judged.debias ? { ...body, x_debias: judged.debias } : body;
}

/** Validates the body against the schema and the limits this server sets. */
export function parseJudgmentRequest(body: unknown, deps: Pick<JudgingRouteDeps, "maxQuestions">) {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("invalid_request", "the request body must be a JSON object");
  }
  const parsed = SystemOneRequest.safeParse(body);
  if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
  const request = parsed.data;
  const count = Object.keys(request.questions).length;
  if (count > deps.maxQuestions) {
    throw new ApiError("too_many_questions", `${count} questions; this server answers at most ${deps.maxQuestions} per request`);
  }
  return request;
}

/** "questions["q 1"].criteria: choice needs between 2 and 255 options" — the first few issues. */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 3).map((issue) => {
    const where = issue.path.map((p, i) => (typeof p === "string" && /^[A-Za-z_][\w]*$/.test(p) ? (i === 0 ? p : `.${p}`) : `[${JSON.stringify(p)}]`)).join("");
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : "";
  return parts.join("; ") + more;
}
