import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JudgmentEngine } from "./engine/types.js";
import { toApiError } from "./errors.js";
import type { App, AppEnv } from "./http/context.js";
import { routeNotFound } from "./http/not-found.js";
import { requestId } from "./http/request-id.js";
import type { Temperatures } from "./judgment/answers.js";
import type { Logger } from "./logger.js";
import { registerAdmin } from "./routes/admin/index.js";
import { registerHealth } from "./routes/health.js";
import { registerModels } from "./routes/models.js";
import { registerOpenApi } from "./routes/openapi.js";
import { registerSystemOne } from "./routes/systemone.js";
import type { Services } from "./services/build.js";

export interface AppDeps {
  services: Services;
  engine: JudgmentEngine;
  log: Logger;
  maxQuestions: number;
  temperatures: Temperatures;
  releaseDate: string;
  /** Longest a request may wait for and use the model before it fails with 502, uncharged. */
  requestTimeoutMs: number;
  /** The console's and admin API's bearer token; without it neither exists. */
  adminToken?: string;
}

/** The whole HTTP surface: every route is registered here, explicitly. */
export function buildApp(deps: AppDeps): App {
  const app = new OpenAPIHono<AppEnv>();
  app.use(requestId());
  app.use(accessLog(deps.log));

  const { services } = deps;
  registerSystemOne(app, { ...deps, keys: services.keys, limits: services.limits, billing: services.billing });
  registerHealth(app, { engine: deps.engine, health: services.health });
  registerModels(app, deps);
  registerOpenApi(app);
  if (deps.adminToken) registerAdmin(app, { token: deps.adminToken, services });

  app.notFound((c) => c.json(routeNotFound(c.req.method, c.req.path).body(), 404));
  app.onError((error, c) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      deps.log.error("request failed", { request_id: c.get("requestId"), code: apiError.code, detail: String(error) });
    }
    // 499 is outside the registry Hono types; it is only ever written to the access log.
    return c.json(apiError.body(), apiError.status as ContentfulStatusCode, apiError.headers);
  });
  return app;
}

/** Method, path, status and timing; never headers or bodies, which carry keys and user data. */
function accessLog(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    log.info("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      account: c.get("caller")?.accountId,
    });
  };
}
