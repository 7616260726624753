import { createRoute, z } from "@hono/zod-openapi";
import type { JudgmentEngine } from "../engine/types.js";
import { BudgetError } from "../engine/types.js";
import { ApiError } from "../errors.js";
import { authenticate, type KeyAuthenticator } from "../http/authenticate.js";
import type { App } from "../http/context.js";
import { readJsonBody } from "../http/read-body.js";
import { buildAnswer, keyedLogits, type Temperatures } from "../judgment/answers.js";
import { keyed } from "../judgment/keyed.js";
import { buildPrompt } from "../judgment/prompt.js";
import { errorResponses, requestIdHeader } from "./shared.schema.js";
import { JudgmentRequest, JudgmentResponse, Question } from "./systemone.schema.js";

/** Model names the ecosystem's SDKs send by default; they mean "the model this server serves". */
export const MODEL_ALIASES = ["jev-latest", "jev-preview"] as const;

export interface SystemOneDeps {
  engine: JudgmentEngine;
  keys: KeyAuthenticator;
  maxQuestions: number;
  temperatures: Temperatures;
}

const route = createRoute({
  method: "post",
  path: "/v1/systemone",
  summary: "Answer typed questions about a state",
  security: [{ bearerAuth: [] }],
  request: { body: { required: true, content: { "application/json": { schema: JudgmentRequest } } } },
  responses: {
    200: {
      description: "One answer per question.",
      headers: requestIdHeader,
      content: { "application/json": { schema: JudgmentResponse } },
    },
    ...errorResponses({
      400: "Invalid request: malformed JSON, a wrong field, an unknown model, or over a limit.",
      401: "Missing, invalid or revoked API key.",
      413: "Request body larger than 256 KB.",
      502: "The model is unavailable or failed; nothing is charged.",
    }),
  },
});

export function registerSystemOne(app: App, deps: SystemOneDeps): void {
  // `questions` is documented by a hand-written $ref (see recordOf), so the schema it points
  // to is registered explicitly.
  app.openAPIRegistry.register("Question", Question);
  app.openAPIRegistry.registerPath(route);
  app.post(route.path, authenticate(deps.keys), async (c) => {
    const request = parseJudgmentRequest(await readJsonBody(c.req.raw), deps);
    const ids = Object.keys(request.questions);
    const questions = Object.values(request.questions);
    const prepared = prepareOrExplain(deps.engine, request.state, questions, ids);
    const result = await deps.engine.evaluate(prepared, c.req.raw.signal);
    const answers = questions.map((q, i) => {
      const answer = buildAnswer(q, result.labelLogProbs[i], deps.temperatures);
      return request.include_logits ? { ...answer, logits: keyedLogits(q, result.labelLogProbs[i]) } : answer;
    });
    const body: JudgmentResponse = {
      model: deps.engine.modelId,
      answers: keyed(ids, answers),
      usage: { input_tokens: result.inputTokens, output_tokens: 0 },
      timing_ms: Math.round(result.timingMs * 1000) / 1000,
    };
    return c.json(body, 200);
  });
}

/** Validates the body against the schema and the limits this server sets. */
export function parseJudgmentRequest(body: unknown, deps: Pick<SystemOneDeps, "engine" | "maxQuestions">) {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError("invalid_request", "the request body must be a JSON object");
  }
  const parsed = JudgmentRequest.safeParse(body);
  if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
  const request = parsed.data;
  const count = Object.keys(request.questions).length;
  if (count > deps.maxQuestions) {
    throw new ApiError("too_many_questions", `${count} questions; this server answers at most ${deps.maxQuestions} per request`);
  }
  const model = request.model;
  if (model !== undefined && model !== deps.engine.modelId && !(MODEL_ALIASES as readonly string[]).includes(model)) {
    throw new ApiError(
      "unknown_model",
      `unknown model "${model}"; this server answers with "${deps.engine.modelId}" (also accepted: ${MODEL_ALIASES.join(", ")})`,
    );
  }
  return request;
}

function prepareOrExplain(engine: JudgmentEngine, state: unknown, questions: Question[], ids: string[]) {
  try {
    return engine.prepare(buildPrompt(state, questions));
  } catch (error) {
    if (!(error instanceof BudgetError)) throw error;
    const index = (error.cause as { questionIndex?: number } | undefined)?.questionIndex;
    const which = index === undefined ? "" : `question ${JSON.stringify(ids[index])}: `;
    throw new ApiError("over_budget", which + error.message);
  }
}

/** "questions["q 1"].criteria: choice needs between 2 and 255 options" — the first few issues. */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 3).map((issue) => {
    const where = issue.path
      .map((p, i) => (typeof p === "string" && /^[A-Za-z_][\w]*$/.test(p) ? (i === 0 ? p : `.${p}`) : `[${JSON.stringify(p)}]`))
      .join("");
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : "";
  return parts.join("; ") + more;
}
