import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildAnswer, NEUTRAL_TEMPERATURES, normalise } from "./answers.js";
import { bucketKey, parseBucketKey, temperaturesFor } from "./calibration.js";
import { loadCalibrationFile } from "../services/calibration-file.js";

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

  it("loads a version 2 profile with per-option-count buckets and applies the bucket holding the count", async () => {
    const file = await profileFile({
      version: 2,
      models: { m: { choice: 1.5, noul: 0.8, score: 1.2, buckets: { choice: { "2": 2, "3-4": 3 }, score: { "5-10": 0.5 } } } },
    });
    const temperatures = temperaturesFor(await loadCalibrationFile(file), "m");
    expect(temperatures, JSON.stringify(temperatures)).toEqual({
      choice: 1.5,
      noul: 0.8,
      score: 1.2,
      buckets: {
        choice: [
          { min: 2, max: 2, temperature: 2 },
          { min: 3, max: 4, temperature: 3 },
        ],
        score: [{ min: 5, max: 10, temperature: 0.5 }],
      },
    });
    const logProbs = (n: number) => Array.from({ length: n }, (_, i) => -i);
    const top = (answer: ReturnType<typeof buildAnswer>) => Math.max(...Object.values((answer as { probabilities: Record<string, number> }).probabilities));
    const choiceOf = (n: number) => ({ type: "choice" as const, instructions: "x", criteria: Object.fromEntries(logProbs(n).map((_, i) => [`o${i}`, null])) });
    const scoreOf = (n: number) => ({ type: "score" as const, instructions: "x", criteria: logProbs(n).map(() => null) });
    expect(top(buildAnswer(choiceOf(2), logProbs(2), temperatures))).toBeCloseTo(Math.max(...normalise(logProbs(2), 2)), 14);
    expect(top(buildAnswer(choiceOf(4), logProbs(4), temperatures))).toBeCloseTo(Math.max(...normalise(logProbs(4), 3)), 14);
    // No bucket holds 5 options: the type's temperature applies.
    expect(top(buildAnswer(choiceOf(5), logProbs(5), temperatures))).toBeCloseTo(Math.max(...normalise(logProbs(5), 1.5)), 14);
    expect(top(buildAnswer(scoreOf(7), logProbs(7), temperatures))).toBeCloseTo(Math.max(...normalise(logProbs(7), 0.5)), 14);
    expect(top(buildAnswer(scoreOf(3), logProbs(3), temperatures))).toBeCloseTo(Math.max(...normalise(logProbs(3), 1.2)), 14);
  });

  it("refuses buckets in a version 1 profile, so they are never silently ignored", async () => {
    const file = await profileFile({ version: 1, models: { m: { choice: 2, buckets: { choice: { "2": 3 } } } } });
    await expect(loadCalibrationFile(file)).rejects.toThrow(/buckets need "version": 2/);
  });

  it("refuses malformed and overlapping bucket keys, naming them", async () => {
    const bad = await profileFile({ version: 2, models: { m: { buckets: { choice: { "1": 2, "3-x": 2 } } } } });
    await expect(loadCalibrationFile(bad)).rejects.toThrow(/bucket "1".*bucket "3-x"/s);
    const overlapping = await profileFile({ version: 2, models: { m: { buckets: { score: { "2-5": 2, "4-6": 2 } } } } });
    await expect(loadCalibrationFile(overlapping)).rejects.toThrow(/"2-5" and "4-6" overlap/);
    const noul = await profileFile({ version: 2, models: { m: { buckets: { noul: { "2": 2 } } } } });
    await expect(loadCalibrationFile(noul)).rejects.toThrow(/noul/);
  });

  it("reads and writes bucket keys as a count or an inclusive range", () => {
    expect(parseBucketKey("2")).toEqual({ min: 2, max: 2 });
    expect(parseBucketKey("11-26")).toEqual({ min: 11, max: 26 });
    for (const bad of ["", "0", "1", "4-3", "02", "2-", "-3", "a"]) expect(parseBucketKey(bad), bad).toBeUndefined();
    expect(bucketKey({ min: 3, max: 3 })).toBe("3");
    expect(bucketKey({ min: 5, max: 6 })).toBe("5-6");
  });

  it("does not take a model named like an Object.prototype property for a profile entry", async () => {
    const profile = await loadCalibrationFile(await profileFile({ version: 1, models: { m: { choice: 2 } } }));
    expect(temperaturesFor(profile, "constructor")).toEqual(NEUTRAL_TEMPERATURES);
  });
});
