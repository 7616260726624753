import { describe, expect, it } from "vitest";
import { parseConfig } from "./environment.js";

describe("JUDGE_PROMPT_CUES", () => {
  it("is auto unless set, and takes full, short or compact", () => {
    expect(parseConfig({}).promptCues).toBe("auto");
    for (const cues of ["full", "short", "compact", "auto"] as const) expect(parseConfig({ JUDGE_PROMPT_CUES: cues }).promptCues).toBe(cues);
  });

  it("refuses any other value, naming the setting", () => {
    expect(() => parseConfig({ JUDGE_PROMPT_CUES: "brief" })).toThrow(/JUDGE_PROMPT_CUES/);
  });
});

describe("JUDGE_ENGINE_FEATURES_URL", () => {
  it("gives llama-server its features server, without a trailing slash, and nothing otherwise", () => {
    const env = { JUDGE_ENGINE: "llama-server", JUDGE_ENGINE_URL: "http://gpu:8081" };
    expect(parseConfig({ ...env, JUDGE_ENGINE_FEATURES_URL: "http://gpu:8082/" }).engine.featuresUrl).toBe("http://gpu:8082");
    expect(parseConfig(env).engine.featuresUrl).toBeUndefined();
  });

  it("refuses it for another engine, and a value that is not an http URL", () => {
    expect(() => parseConfig({ JUDGE_ENGINE_FEATURES_URL: "http://gpu:8082" })).toThrow(/JUDGE_ENGINE_FEATURES_URL: only engines llama-server and vllm/);
    expect(() => parseConfig({ JUDGE_ENGINE: "llama-server", JUDGE_ENGINE_URL: "http://gpu:8081", JUDGE_ENGINE_FEATURES_URL: "gpu:8082" })).toThrow(
      /JUDGE_ENGINE_FEATURES_URL/,
    );
  });
});
