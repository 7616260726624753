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
