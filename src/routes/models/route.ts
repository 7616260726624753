import { createRoute, z } from "@hono/zod-openapi";
import type { ModelRegistry } from "../../services/served-models/registry.js";
import type { App } from "../../http/context.js";
import { requestIdHeader } from "../shared.schema.js";
import { DECISIONS_MODEL_ALIASES } from "../decisions/route.js";
import { modelListBody } from "./body.js";
import { MODEL_ALIASES } from "../systemone/route.js";

const ModelList = z
  .object({
    models: z
      .array(
        z.object({
          name: z.string(),
          description: z.string(),
          release_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
        }),
      )
      .openapi({ description: "The ecosystem's shape (@typesafe-ai/sdk reads it)." }),
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
    200: {
      description: "Model names accepted in the request's `model` field.",
      headers: requestIdHeader,
      content: { "application/json": { schema: ModelList } },
    },
  },
});

/** Public: it reveals nothing an API key would protect, and the SDKs call it to discover names. */
export function registerModels(app: App, deps: { models: ModelRegistry; releaseDate: string }): void {
  app.openapi(route, (c) => {
    const aliases = [
      ...MODEL_ALIASES.map((name) => ({ name, acceptedBy: "POST /v1/systemone" })),
      ...DECISIONS_MODEL_ALIASES.map((name) => ({ name, acceptedBy: "POST /v1/decisions" })),
    ];
    const { models } = deps;
    const ordered = [models.defaultModel, ...models.models.filter((m) => m !== models.defaultModel)];
    const served = ordered.map((m) => ({
      id: m.id,
      aliases: m.aliases,
      ...(models.declared && { description: describeModel(m, m === models.defaultModel) }),
    }));
    return c.json(modelListBody({ served, aliases, releaseDate: deps.releaseDate }), 200);
  });
}

/** What a client choosing a model needs: its engine, its price against the plan's, whether it is the default. */
function describeModel(m: ModelRegistry["models"][number], isDefault: boolean): string {
  const price = m.multiplierMilli === 1000 ? "the plan's price" : `${m.multiplierMilli / 1000} × the plan's price`;
  const fallback = m.fallback ? `; ${m.fallback} answers while it is down` : "";
  return `${isDefault ? "The default model" : "A model"} of this server (${m.id}, engine ${m.engine.description.kind}), billed at ${price}${fallback}.`;
}
