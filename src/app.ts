import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, toApiError } from "./errors.js";
import { accessLog } from "./http/access-log.js";
import type { App, AppEnv } from "./http/context.js";
import { routeNotFound } from "./http/not-found.js";
import { refuseNulInUrl } from "./http/nul-bytes.js";
import { requestId } from "./http/request-id.js";
import type { Temperatures } from "./judgment/answers.js";
import type { DebiasMode } from "./judgment/debias.js";
import type { Logger } from "./logger.js";
import { registerAdmin } from "./routes/admin/index.js";
import { decisionsErrorBody, openAIErrorFormat } from "./routes/decisions/errors.js";
import { registerDecisions } from "./routes/decisions/route.js";
import { registerHealth } from "./routes/health/route.js";
import type { JudgingRouteDeps } from "./routes/judging/request-response.js";
import { registerMetrics } from "./routes/metrics/route.js";
import { registerModels } from "./routes/models/route.js";
import { registerOpenApi } from "./routes/openapi/route.js";
import { registerSystemOne } from "./routes/systemone/route.js";
import { registerTasks } from "./routes/tasks/route.js";
import type { Services } from "./services/build.js";
import type { ModelRegistry } from "./services/served-models/registry.js";

export interface AppDeps {
  services: Services;
  /** The served models, each engine metered already (services/served-models/registry.ts). */
  models: ModelRegistry;
  log: Logger;
  maxQuestions: number;
  /** Read per request, by model id: a calibration profile applies once the model it names is loaded. */
  temperaturesOf: (modelId: string) => Temperatures;
  /** Option-order debiasing for requests that do not ask (JUDGE_DEBIAS); none when absent. */
  debias?: DebiasMode;
  releaseDate: string;
  /** The console's and admin API's bearer token; without it neither exists. */
  adminToken?: string;
}

/** The whole HTTP surface: every route is registered here, explicitly. */
export function buildApp(deps: AppDeps): App {
  const app = new OpenAPIHono<AppEnv>();
  const { services } = deps;
  // What onError decided, for the one access-log line the request gets.
  const errors = new WeakMap<Context, ApiError>();
  app.use(requestId());
  app.use(accessLog(deps.log, services.metrics, errors, services.reports));
  // Before any route, so no NUL reaches a store; /v1/decisions' clients read even this refusal in their shape.
  app.use("/v1/decisions", openAIErrorFormat);
  app.use(refuseNulInUrl());

  const { models } = deps;
  // Both judging routes share one service below them (services/judging/), its deps built here once.
  const judging: JudgingRouteDeps = {
    judging: services.judging,
    keys: services.keys,
    limits: services.limits,
    maxQuestions: deps.maxQuestions,
    debias: deps.debias ?? "none",
    models,
    temperaturesOf: deps.temperaturesOf,
    tasks: services.tasks,
  };
  registerSystemOne(app, judging);
  registerDecisions(app, judging);
  registerTasks(app, judging);
  registerHealth(app, { models, health: services.health });
  registerModels(app, { models, releaseDate: deps.releaseDate });
  registerOpenApi(app);
  if (deps.adminToken) {
    registerAdmin(app, { token: deps.adminToken, services });
    registerMetrics(app, { metrics: services.metrics, adminToken: deps.adminToken, adminTokens: services.adminTokens });
  }

  app.notFound((c) => c.json(routeNotFound(c.req.method, c.req.path).body(), 404));
  app.onError((error, c) => {
    const apiError = clientGone(c) ? clientClosed(error) : toApiError(error);
    errors.set(c, apiError);
    if (apiError.status >= 500) {
      deps.log.error("request failed", { request_id: c.get("requestId"), code: apiError.code, detail: String(error) });
    }
    // One catalogue, two shapes: the route says which its clients read.
    const body = c.get("errorFormat") === "openai" ? decisionsErrorBody(apiError) : apiError.body();
    // 499 is outside the registry Hono types; it is only ever written to the access log.
    return c.json(body, apiError.status as ContentfulStatusCode, apiError.headers);
  });
  return app;
}

/**
 * A client that closed its connection first: whatever broke because of that (a body read cut
 * short, a stream error) is the client's leaving, not a fault of the service. It is logged and
 * counted as 499, and never becomes a 500 internal_error.
 */
function clientGone(c: Context<AppEnv>): boolean {
  return c.req.raw.signal.aborted;
}

function clientClosed(error: Error): ApiError {
  const known = toApiError(error);
  // An answer the service had already decided on (a 400, a 502) stays what it was.
  return known.code === "internal_error" ? new ApiError("client_closed_request", "the client closed the request before it was answered") : known;
}
