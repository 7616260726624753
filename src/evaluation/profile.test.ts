import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { temperaturesFor, type CalibrationFile } from "../judgment/calibration.js";
import { loadCalibrationFile } from "../services/calibration-file.js";
import { currentTemperatures, mergeProfile, readProfile, writeProfile } from "./profile.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);
const existing: CalibrationFile = { version: 1, models: { keep: { choice: 2, noul: 1, score: 0.5 }, target: { choice: 9, noul: 9, score: 9 } } };

describe("mergeProfile", () => {
  it("replaces the model's entry, keeps the others, and stays version 1 without buckets", () => {
    const merged = mergeProfile(existing, "target", { choice: 1.23456789, noul: 0.8, score: 1 });
    expect(merged, show(merged)).toEqual({ version: 1, models: { keep: existing.models.keep, target: { choice: 1.23457, noul: 0.8, score: 1 } } });
  });

  it("writes buckets as count or range keys and switches to version 2", () => {
    const merged = mergeProfile(existing, "new", {
      choice: 1.5,
      noul: 1,
      score: 1,
      buckets: {
        choice: [
          { min: 2, max: 2, temperature: 2.5 },
          { min: 5, max: 6, temperature: 0.75 },
        ],
      },
    });
    expect(merged.version).toBe(2);
    expect(merged.models.new, show(merged)).toEqual({ choice: 1.5, noul: 1, score: 1, buckets: { choice: { "2": 2.5, "5-6": 0.75 } } });
    expect(Object.keys(merged.models)).toEqual(["keep", "target", "new"]);
    expect(temperaturesFor(merged, "new").buckets?.choice).toEqual([
      { min: 2, max: 2, temperature: 2.5 },
      { min: 5, max: 6, temperature: 0.75 },
    ]);
  });

  it("keeps version 2 for a file that already was, and starts a new file when there is none", () => {
    expect(mergeProfile({ ...existing, version: 2 }, "x", { choice: 1, noul: 1, score: 1 }).version).toBe(2);
    expect(mergeProfile(undefined, "x", { choice: 2, noul: 1, score: 1 })).toEqual({ version: 1, models: { x: { choice: 2, noul: 1, score: 1 } } });
  });
});

describe("profile files", () => {
  it("writes a file the server's loader reads back, leaving no temporary file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tjs-profile-"));
    const file = join(dir, "nested", "profile.json");
    const profile = mergeProfile(undefined, "m", { choice: 1.1, noul: 1, score: 1, buckets: { score: [{ min: 3, max: 3, temperature: 0.9 }] } });
    await writeProfile(file, profile);
    expect(await loadCalibrationFile(file)).toEqual(profile);
    expect(readFileSync(file, "utf8").endsWith("}\n")).toBe(true);
    expect(readdirSync(join(dir, "nested"))).toEqual(["profile.json"]);
  });

  it("reads a missing profile as none and an invalid one as an error naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tjs-profile-"));
    expect(await readProfile(join(dir, "missing.json"))).toBeUndefined();
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ version: 3, models: {} }));
    await expect(readProfile(join(dir, "bad.json"))).rejects.toThrow(/invalid calibration profile .*bad\.json/);
  });

  it("gives a model's current temperatures only when the profile has an entry for it", () => {
    expect(currentTemperatures(existing, "keep")).toEqual({ choice: 2, noul: 1, score: 0.5 });
    expect(currentTemperatures(existing, "absent")).toBeUndefined();
    expect(currentTemperatures(undefined, "keep")).toBeUndefined();
  });
});
