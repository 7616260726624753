import { Hono, type Handler } from "hono";
import { adminOnly, type AdminTokenAuthenticator } from "../../http/admin-auth.js";
import type { App, AppEnv } from "../../http/context.js";
import { routeNotFound } from "../../http/not-found.js";
import type { Metrics } from "../../services/metrics.js";

/**
 * GET /metrics: the Prometheus exposition. On the service's port it is an admin route (without
 * `Authorization: Bearer <JUDGE_ADMIN_TOKEN>` it answers 404 like any unknown path, and it does
 * not exist without an admin token); JUDGE_METRICS_PORT serves it without a token on 127.0.0.1
 * only (buildMetricsApp), for a scraper on the same host.
 */
export function registerMetrics(app: App, deps: { metrics: Metrics; adminToken: string; adminTokens?: AdminTokenAuthenticator }): void {
  app.get("/metrics", adminOnly(deps.adminToken, deps.adminTokens), scrape(deps.metrics));
}

/** The whole app of the metrics port: /metrics and nothing else. */
export function buildMetricsApp(metrics: Metrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/metrics", scrape(metrics));
  app.notFound((c) => c.json(routeNotFound(c.req.method, c.req.path).body(), 404));
  return app;
}

function scrape(metrics: Metrics): Handler<AppEnv> {
  return async (c) => {
    const { contentType, text } = await metrics.render();
    return c.body(text, 200, { "content-type": contentType, "cache-control": "no-store" });
  };
}
