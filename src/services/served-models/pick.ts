import type { Temperatures } from "../../judgment/answers.js";
import type { ModelChoice } from "../judging/request.js";
import type { ModelRegistry, ServedModel } from "./registry.js";

/** Why no model was picked: each code names the catalogue entry (src/errors.ts) the edge answers with. */
export interface ModelRefusal {
  code: "unknown_model" | "model_not_allowed";
  message: string;
}

/**
 * The model a request or a fit names (by id or alias; the route's own aliases and no name mean
 * the default), or why not: unknown_model, or model_not_allowed by the payer's plan
 * (`allowedModels` absent: every model). The routes and `judge tasks fit` pick through this,
 * so a model refused on one is refused on the other, in the same words.
 */
export function pickModel(
  models: ModelRegistry,
  name: string | undefined,
  routeAliases: readonly string[],
  allowedModels: readonly string[] | undefined,
): { model: ServedModel } | ModelRefusal {
  const model = models.resolve(name, routeAliases);
  if (!model) {
    const served = models.defaultModel.id;
    const message = models.declared
      ? `unknown model "${name}"; this server answers with ${models
          .accepted(routeAliases)
          .map((n) => `"${n}"`)
          .join(", ")} (no model: "${served}")`
      : `unknown model "${name}"; this server answers with "${served}" (also accepted: ${routeAliases.join(", ")})`;
    return { code: "unknown_model", message };
  }
  if (!mayUse(model, allowedModels)) {
    const allowed = allowedModels!.map((n) => `"${n}"`).join(", ");
    return { code: "model_not_allowed", message: `the account's plan may not use the model "${model.id}" (it allows ${allowed}); nothing was charged` };
  }
  return { model };
}

export function mayUse(model: ServedModel, allowedModels: readonly string[] | undefined): boolean {
  return allowedModels === undefined || allowedModels.includes(model.id);
}

/** A served model as judging and fitting take it, its calibration read per use. */
export function modelChoice(model: ServedModel, temperaturesOf: (modelId: string) => Temperatures): ModelChoice {
  return { id: model.id, engine: model.engine, multiplierMilli: model.multiplierMilli, temperatures: () => temperaturesOf(model.id), source: model.source };
}
