import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./environment.js";

/** JUDGE_MODELS: the example parses; every mistake is one line naming the model and the field. */

const dir = mkdtempSync(join(tmpdir(), "judge-models-"));
let n = 0;
function withFile(content: unknown, env: Record<string, string> = {}) {
  const path = join(dir, `models-${n++}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return parseConfig({ JUDGE_MODELS: path, ...env });
}
const refusal = (content: unknown, env: Record<string, string> = {}) => {
  try {
    withFile(content, env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the file was accepted");
};

const EXAMPLE = {
  default: "small",
  models: [
    { id: "small", engine: "llama", model: "models/small.gguf", aliases: ["jev-latest"], price_multiplier: 1 },
    { id: "big", engine: "systemone", url: "https://gpu-box.example:8080/", key_env: "BIG_UPSTREAM_KEY", price_multiplier: 3 },
  ],
};

describe("JUDGE_MODELS", () => {
  it("reads the issue's example: each model's engine settings over the global ones, the key from key_env", () => {
    const config = withFile(EXAMPLE, { BIG_UPSTREAM_KEY: "sk-upstream", JUDGE_ENGINE_TIMEOUT_MS: "4321" });
    const models = config.models!;
    expect(models.defaultId).toBe("small");
    const [small, big] = models.models;
    expect(small).toMatchObject({ id: "small", aliases: ["jev-latest"], multiplierMilli: 1000, keepAliveMs: 300_000 });
    expect(small.engine).toMatchObject({ model: "models/small.gguf", modelId: "small", engine: { kind: "llama", exactness: "strict" } });
    expect(big.engine.engine).toMatchObject({ kind: "systemone", url: "https://gpu-box.example:8080", key: "sk-upstream", timeoutMs: 4321 });
    expect(big.multiplierMilli).toBe(3000);
  });

  it("gives a llama-server model its features server, with the model's key", () => {
    const entry = { id: "s", engine: "llama-server", url: "http://gpu:8081/", features_url: "http://gpu:8082/", key_env: "S_KEY" };
    const config = withFile({ models: [entry] }, { S_KEY: "k" });
    expect(config.models!.models[0].engine.engine).toMatchObject({ kind: "llama-server", url: "http://gpu:8081", featuresUrl: "http://gpu:8082", key: "k" });
  });

  it("without JUDGE_MODELS there are no models: the single-model settings apply as before", () => {
    expect(parseConfig({}).models).toBeUndefined();
  });

  it("defaults to the first model, or to the one marked default: true", () => {
    const { models } = EXAMPLE;
    expect(withFile({ models }, { BIG_UPSTREAM_KEY: "k" }).models!.defaultId).toBe("small");
    const marked = [models[0], { ...models[1], default: true }];
    expect(withFile({ models: marked }, { BIG_UPSTREAM_KEY: "k" }).models!.defaultId).toBe("big");
  });

  it("keeps price multipliers with up to 3 decimals exactly, in thousandths", () => {
    const config = withFile({ models: [{ id: "a", engine: "llama", model: "a.gguf", price_multiplier: 0.125 }] });
    expect(config.models!.models[0].multiplierMilli).toBe(125);
  });

  it.each([
    ["not JSON", "{", "not JSON"],
    ["a secret in the file", { models: [{ id: "x", engine: "systemone", url: "http://u", key: "sk-secret" }] }, 'model "x": field "key": unknown field'],
    ["an unknown engine", { models: [{ id: "x", engine: "ollama", url: "http://u" }] }, 'model "x": field "engine"'],
    ["a remote model without url", { models: [{ id: "x", engine: "vllm" }] }, 'model "x": field "url": required for engine vllm'],
    [
      "a features_url on another engine than llama-server and vllm",
      { models: [{ id: "x", engine: "sglang", url: "http://u", features_url: "http://f" }] },
      'model "x": field "features_url": only engines llama-server and vllm',
    ],
    ["llama without model", { models: [{ id: "x", engine: "llama" }] }, 'model "x": field "model"'],
    [
      "a key_env that is unset",
      { models: [{ id: "x", engine: "systemone", url: "http://u", key_env: "NOPE_KEY" }] },
      'model "x": field "key_env": the environment variable NOPE_KEY is not set',
    ],
    [
      "a duplicate alias",
      {
        models: [
          { id: "a", engine: "llama", model: "a", aliases: ["z"] },
          { id: "b", engine: "llama", model: "b", aliases: ["z"] },
        ],
      },
      'model "b": field "aliases": "z" is already',
    ],
    ["a default naming no model", { default: "c", models: [{ id: "a", engine: "llama", model: "a" }] }, 'field "default": no model has the id "c"'],
    ["a fallback naming no model", { models: [{ id: "a", engine: "llama", model: "a", fallback: "q" }] }, 'model "a": field "fallback"'],
    ["a multiplier with 4 decimals", { models: [{ id: "a", engine: "llama", model: "a", price_multiplier: 1.0001 }] }, 'model "a": field "price_multiplier"'],
    ["no models", { models: [] }, 'field "models"'],
  ])("refuses %s with one line naming the model and field", (_, content, expected) => {
    const message = refusal(content);
    expect(message).toContain("JUDGE_MODELS=");
    expect(message).toContain(expected);
    expect(message.split("\n"), message).toHaveLength(1);
    expect(message).not.toContain("sk-secret");
  });

  it("refuses a file that cannot be read, naming it", () => {
    expect(() => parseConfig({ JUDGE_MODELS: join(dir, "absent.json") })).toThrow(/JUDGE_MODELS=.*absent\.json: cannot read the file \(ENOENT\)/);
  });
});
