import { createRoute, z } from "@hono/zod-openapi";
import type { JudgmentEngine } from "../../engine/types.js";
import type { App } from "../../http/context.js";
import { requestIdHeader } from "../shared.schema.js";
import { DECISIONS_MODEL_ALIASES } from "../decisions/route.js";
import { modelListBody } from "./body.js";
import { MODEL_ALIASES } from "../systemone/route.js";

const ModelList = z
  .object({
    models: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        release_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      }),
    ).openapi({ description: "The ecosystem's shape (@typesafe-ai/sdk reads it)." }),
    object: z.literal("list").openapi({ description: "OpenAI's shape, beside it (the openai SDK reads `data`)." }),
    data: z.array(
      z.object({
        id: z.string(),
        object: z.literal("model"),
        created: z.number().int().openapi({ description: "Unix seconds: midnight UTC of release_date." }),
        owned_by: z.string(),
      }),
    ),
  })
  .openapi("ModelList", { description: "The served model and every alias a judging route accepts, in both ecosystems' shapes." });

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
    const aliases = [
      ...MODEL_ALIASES.map((name) => ({ name, acceptedBy: "POST /v1/systemone" })),
      ...DECISIONS_MODEL_ALIASES.map((name) => ({ name, acceptedBy: "POST /v1/decisions" })),
    ];
    return c.json(modelListBody({ served: deps.engine.modelId, aliases, releaseDate: deps.releaseDate }), 200);
  });
}
