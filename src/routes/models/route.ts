import { createRoute, z } from "@hono/zod-openapi";
import type { JudgmentEngine } from "../../engine/types.js";
import type { App } from "../../http/context.js";
import { requestIdHeader } from "../shared.schema.js";
import { MODEL_ALIASES } from "../systemone/route.js";

const ModelList = z
  .object({
    models: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        release_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      }),
    ),
  })
  .openapi("ModelList");

const route = createRoute({
  method: "get",
  path: "/v1/models",
  summary: "The model this server answers with, and the names it accepts for it",
  responses: {
    200: { description: "Model names accepted in the request's `model` field.", headers: requestIdHeader, content: { "application/json": { schema: ModelList } } },
  },
});

/** Public: it reveals nothing an API key would protect, and the SDKs call it to discover names. */
export function registerModels(app: App, deps: { engine: JudgmentEngine; releaseDate: string }): void {
  app.openapi(route, (c) => {
    const id = deps.engine.modelId;
    const models = [
      { name: id, description: `The model this server runs (${id}).`, release_date: deps.releaseDate },
      ...MODEL_ALIASES.map((alias) => ({ name: alias, description: `Alias of ${id}.`, release_date: deps.releaseDate })),
    ];
    return c.json({ models }, 200);
  });
}
