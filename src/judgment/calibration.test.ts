import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildAnswer, NEUTRAL_TEMPERATURES } from "./answers.js";
import { loadCalibrationFile, temperaturesFor } from "./calibration.js";

async function profileFile(content: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "tjs-calibration-"));
  const file = path.join(dir, "profile.json");
  await writeFile(file, JSON.stringify(content));
  return file;
}

describe("calibration profiles", () => {
  it("gives the named model its temperatures, with 1 for the types it leaves out", async () => {
    const file = await profileFile({ version: 1, models: { "model-a": { choice: 2, noul: 0.5 } } });
    const profile = await loadCalibrationFile(file);
    expect(temperaturesFor(profile, "model-a")).toEqual({ choice: 2, noul: 0.5, score: 1 });
  });

  it("answers a model the profile does not name uncalibrated", async () => {
    const profile = await loadCalibrationFile(await profileFile({ version: 1, models: { "model-a": { choice: 2 } } }));
    expect(temperaturesFor(profile, "model-b")).toEqual(NEUTRAL_TEMPERATURES);
    expect(temperaturesFor(undefined, "model-b")).toEqual(NEUTRAL_TEMPERATURES);
  });

  it("refuses a profile with a non-positive temperature, naming the problem", async () => {
    const file = await profileFile({ version: 1, models: { m: { score: 0 } } });
    await expect(loadCalibrationFile(file)).rejects.toThrow(/invalid calibration profile.*score/s);
  });

  it("applies the temperature to the label log-probabilities: T = 2 softens, T = 0.5 sharpens", () => {
    const question = { type: "noul" as const, instructions: "x", criteria: null };
    const logProbs = [Math.log(0.8), Math.log(0.2)];
    const at = (noul: number) => (buildAnswer(question, logProbs, { ...NEUTRAL_TEMPERATURES, noul }) as { noul: number }).noul;
    expect(at(1)).toBeCloseTo(0.8, 12);
    expect(at(2)).toBeCloseTo(Math.sqrt(0.8) / (Math.sqrt(0.8) + Math.sqrt(0.2)), 12);
    expect(at(0.5)).toBeCloseTo(0.64 / (0.64 + 0.04), 12);
  });
});
