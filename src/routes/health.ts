import { createRoute, z } from "@hono/zod-openapi";
import type { JudgmentEngine } from "../engine/types.js";
import type { App } from "../http/context.js";
import { requestIdHeader } from "./shared.schema.js";

const Health = z
  .object({ status: z.literal("ok"), model: z.string(), upstream: z.literal("ok") })
  .openapi("Health");

const Unhealthy = z
  .object({
    error: z.string().openapi({ description: "Why the service cannot answer now." }),
    code: z.literal("service_unavailable"),
    status: z.enum(["loading", "failed"]),
    model: z.string(),
  })
  .openapi("Unhealthy");

const route = createRoute({
  method: "get",
  path: "/health",
  summary: "Whether the service can answer right now",
  responses: {
    200: { description: "The model is loaded and answering.", headers: requestIdHeader, content: { "application/json": { schema: Health } } },
    503: { description: "The model is loading or broken.", headers: requestIdHeader, content: { "application/json": { schema: Unhealthy } } },
  },
});

export function registerHealth(app: App, deps: { engine: JudgmentEngine }): void {
  app.openapi(route, (c) => {
    const { engine } = deps;
    const status = engine.status();
    if (status.state === "ready") return c.json({ status: "ok" as const, model: engine.modelId, upstream: "ok" as const }, 200);
    const error = status.state === "loading" ? `the model is loading: ${status.detail}` : status.detail;
    return c.json({ error, code: "service_unavailable" as const, status: status.state, model: engine.modelId }, 503);
  });
}
