import { createRoute, z } from "@hono/zod-openapi";
import type { ModelRegistry } from "../../services/served-models/registry.js";
import type { App } from "../../http/context.js";
import type { HealthService, PartHealth } from "../../services/health.js";
import { errorBody } from "../../errors.js";
import { errorDetail, requestIdHeader } from "../shared.schema.js";

const Engine = z
  .object({
    kind: z.enum(["llama", "llama-server", "vllm", "sglang", "systemone", "decisions"]).openapi({ description: "JUDGE_ENGINE." }),
    backend: z.string().openapi({ description: "In-process: cpu, cuda, vulkan or metal; remote: the server's URL (no credentials)." }),
    slots: z.number().int().optional().openapi({ description: "States kept cached at once, where this service chooses." }),
    exactness: z
      .object({
        mode: z.enum(["strict", "tolerant"]).openapi({
          description: "JUDGE_EXACTNESS: strict = answers independent of caching and other traffic by construction; tolerant = batched, within `bound`.",
        }),
        bound: z.number().openapi({ description: "The largest max |Δp| the start-up probe accepts." }),
        measured: z
          .number()
          .optional()
          .openapi({ description: "The probe's max |Δp| (cached against fresh, alone against beside other traffic); absent until measured." }),
        backendMode: z.string().optional().openapi({ description: "The backend's own determinism setting, where it reports one." }),
      })
      .optional()
      .openapi({ description: "The exactness contract served (docs/concepts/exactness.md); engines without one omit it." }),
  })
  .openapi("Engine", { description: "Which engine reads the probabilities, on what." });

const ModelState = z
  .object({
    id: z.string(),
    default: z.boolean(),
    engine: z.string().openapi({ description: "The model's engine kind (JUDGE_MODELS `engine`)." }),
    state: z.enum(["ready", "loading", "failed", "unloaded"]).openapi({
      description: "unloaded: an in-process model not in memory now (idle past keep_alive_s, or unloaded for another); it loads on its next request.",
    }),
    detail: z.string().optional().openapi({ description: "Why it is loading or failed." }),
    fallback: z.string().optional().openapi({ description: "The model that answers while this one is down." }),
  })
  .openapi("ModelState");

const Models = z.array(ModelState).optional().openapi({
  description: "With JUDGE_MODELS: every served model's state, the default first. /health is 200 while the default model answers, whatever the others' states.",
});

const Health = z.object({ status: z.literal("ok"), model: z.string(), upstream: z.literal("ok"), engine: Engine, models: Models }).openapi("Health");

const Part = z.object({
  name: z.string().openapi({ description: "Which part: the model file, the database (engine and location, no password) or Redis." }),
  ok: z.boolean(),
  detail: z.string().optional().openapi({ description: "Why it is not ok." }),
});

const Unhealthy = z
  .object({
    error: z.string().openapi({ description: "Why the service cannot answer now, naming the part that is down." }),
    code: z.literal("service_unavailable"),
    detail: errorDetail(["service_unavailable"]),
    status: z.enum(["loading", "failed", "unavailable"]).openapi({
      description: "loading: the model is still loading; failed: the model failed to load; unavailable: the database or Redis cannot be reached.",
    }),
    model: z.string(),
    engine: Engine,
    parts: z
      .object({ model: Part, database: Part, rate_limiter: Part.optional() })
      .openapi({ description: "Each part asked now; rate_limiter appears when Redis counts the rate limits." }),
    models: Models,
  })
  .openapi("Unhealthy");

const route = createRoute({
  method: "get",
  path: "/health",
  summary: "Whether the service can answer right now",
  responses: {
    200: {
      description: "The model, the database and (if configured) Redis all answer.",
      headers: requestIdHeader,
      content: { "application/json": { schema: Health } },
    },
    503: {
      description: "The model is loading or broken, or the database or Redis is unreachable.",
      headers: requestIdHeader,
      content: { "application/json": { schema: Unhealthy } },
    },
  },
});

export function registerHealth(app: App, deps: { models: ModelRegistry; health: HealthService }): void {
  app.openapi(route, async (c) => {
    const { models } = deps;
    const engine = models.defaultModel.engine;
    const [status, { database, rateLimiter }, states] = await Promise.all([engine.status(), deps.health.check(), modelStates(models)]);
    const listed = states ? { models: states } : {};
    const model: PartHealth =
      status.state === "ready"
        ? { name: engine.modelId, ok: true }
        : { name: engine.modelId, ok: false, detail: status.state === "loading" ? `the model is loading: ${status.detail}` : status.detail };
    const down = [model, database, rateLimiter].filter((part): part is PartHealth => part !== undefined && !part.ok);
    const described = { ...engine.description };
    if (down.length === 0) return c.json({ status: "ok" as const, model: engine.modelId, upstream: "ok" as const, engine: described, ...listed }, 200);
    const error = down.map((part) => (part === model ? part.detail! : `${part.name} is unavailable: ${part.detail}`)).join("; ");
    const state = status.state === "ready" ? "unavailable" : status.state;
    const parts = rateLimiter ? { model, database, rate_limiter: rateLimiter } : { model, database };
    // An error body like every other (with the hosted service's detail), plus what is down.
    const body = { ...errorBody("service_unavailable", error), code: "service_unavailable" as const };
    return c.json({ ...body, status: state, model: engine.modelId, engine: described, parts, ...listed }, 503);
  });
}

/** Every declared model, each asked now (in parallel, each bounded by its engine's own timeout); undefined for the single model. */
async function modelStates(models: ModelRegistry): Promise<z.infer<typeof ModelState>[] | undefined> {
  if (!models.declared) return undefined;
  const ordered = [models.defaultModel, ...models.models.filter((m) => m !== models.defaultModel)];
  return Promise.all(
    ordered.map(async (m) => {
      const status = await Promise.resolve(m.engine.status()).catch((error: unknown) => ({ state: "failed" as const, detail: String(error) }));
      const unloaded = m.residency() === "unloaded" && status.state === "ready";
      return {
        id: m.id,
        default: m === models.defaultModel,
        engine: m.engine.description.kind,
        state: unloaded ? ("unloaded" as const) : status.state,
        ...(status.state !== "ready" && { detail: status.detail }),
        ...(m.fallback !== undefined && { fallback: m.fallback }),
      };
    }),
  );
}
