import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JudgmentEngine } from "./engine/types.js";
import { toApiError } from "./errors.js";
import type { KeyAuthenticator } from "./http/authenticate.js";
import type { App, AppEnv } from "./http/context.js";
import { routeNotFound } from "./http/not-found.js";
import { requestId } from "./http/request-id.js";
import type { Temperatures } from "./judgment/answers.js";
import type { Logger } from "./logger.js";
import type { BillingDeps } from "./routes/systemone.billing.js";
import { registerAdmin, type AdminDeps } from "./routes/admin/index.js";
import { registerHealth } from "./routes/health.js";
import { registerModels } from "./routes/models.js";
import { registerOpenApi } from "./routes/openapi.js";
import { registerSystemOne } from "./routes/systemone.js";

export interface AppDeps extends BillingDeps {
  engine: JudgmentEngine;
  keys: KeyAuthenticator;
  log: Logger;
  maxQuestions: number;
  temperatures: Temperatures;
  releaseDate: string;
  /** The console and admin API; absent when no admin token is configured. */
  admin?: AdminDeps;
}

/** The whole HTTP surface: every route is registered here, explicitly. */
export function buildApp(deps: AppDeps): App {
  const app = new OpenAPIHono<AppEnv>();
  app.use(requestId());
  app.use(accessLog(deps.log));

  registerSystemOne(app, deps);
  registerHealth(app, deps);
  registerModels(app, deps);
  registerOpenApi(app);
  if (deps.admin) registerAdmin(app, deps.admin);

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
