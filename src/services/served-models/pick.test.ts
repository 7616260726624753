import { describe, expect, it } from "vitest";
import type { ModelEngineConfig, ModelsConfig } from "../../config/types.js";
import { NEUTRAL_TEMPERATURES, type Temperatures } from "../../judgment/answers.js";
import { faultEngine } from "../../testing/fault-engines.js";
import { createMetrics } from "../metrics.js";
import { mayUse, modelChoice, pickModel } from "./pick.js";
import { declaredModelsRegistry, singleModelRegistry } from "./registry.js";

/** The picker the judging routes, the tasks route and `judge tasks fit` share. */

const single = () => singleModelRegistry(faultEngine({ modelId: "smol" }), createMetrics());

function declared() {
  const model = (id: string, aliases: string[] = []) => ({
    id,
    aliases,
    multiplierMilli: id === "big" ? 2500 : 1000,
    keepAliveMs: null,
    // A server kind: the registry builds it through the factory, without loading anything.
    engine: { engine: { kind: "vllm" } } as unknown as ModelEngineConfig,
  });
  const config: ModelsConfig = { source: "models.json", defaultId: "smol", maxLoadedMb: null, models: [model("smol"), model("big", ["large"])] };
  let n = 0;
  return declaredModelsRegistry(config, () => faultEngine({ modelId: ["smol", "big"][n++] }), createMetrics());
}

describe("pickModel", () => {
  it("no name and the route's aliases mean the default; an id or a declared alias names its model", () => {
    const models = declared();
    expect(pickModel(models, undefined, ["jev-latest"], undefined)).toEqual({ model: models.defaultModel });
    expect(pickModel(models, "jev-latest", ["jev-latest"], undefined)).toEqual({ model: models.defaultModel });
    expect(pickModel(models, "large", [], undefined)).toEqual({ model: models.models[1] });
    expect(pickModel(models, "big", [], ["big"])).toEqual({ model: models.models[1] });
  });

  it("an unknown name is unknown_model, naming what is accepted", () => {
    const declaredOne = pickModel(declared(), "jev-ultra", ["jev-latest"], undefined);
    expect(declaredOne).toEqual({ code: "unknown_model", message: expect.stringContaining('"smol", "big", "large", "jev-latest" (no model: "smol")') });
    const singleOne = pickModel(single(), "jev-ultra", ["jev-latest"], undefined);
    expect(singleOne).toEqual({ code: "unknown_model", message: expect.stringContaining('answers with "smol" (also accepted: jev-latest)') });
  });

  it("a model the plan does not list is model_not_allowed, naming what it allows; the default is no exception", () => {
    const models = declared();
    expect(pickModel(models, "big", [], ["smol"])).toEqual({
      code: "model_not_allowed",
      message: `the account's plan may not use the model "big" (it allows "smol"); nothing was charged`,
    });
    expect(pickModel(models, undefined, [], ["big"])).toMatchObject({ code: "model_not_allowed" });
    expect(mayUse(models.models[0]!, undefined)).toBe(true);
    expect(mayUse(models.models[0]!, [])).toBe(false);
  });
});

describe("modelChoice", () => {
  it("carries the model's price and engine, and reads its calibration on each use, not once", () => {
    const models = declared();
    let temperatures: Temperatures = NEUTRAL_TEMPERATURES;
    const asked: string[] = [];
    const choice = modelChoice(models.models[1]!, (id) => (asked.push(id), temperatures));
    expect([choice.id, choice.multiplierMilli, choice.source]).toEqual(["big", 2500, models.models[1]!.source]);
    expect(choice.engine).toBe(models.models[1]!.engine);
    expect(choice.temperatures()).toBe(NEUTRAL_TEMPERATURES);
    temperatures = { ...NEUTRAL_TEMPERATURES };
    expect(choice.temperatures()).toBe(temperatures);
    expect(asked).toEqual(["big", "big"]);
  });
});
