import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { TemperatureBucket, Temperatures } from "../judgment/answers.js";
import { bucketKey, parseCalibrationFile, temperaturesFor, type CalibrationFile, type ModelCalibration } from "../judgment/calibration.js";

/**
 * Reading and updating the calibration profile the server loads (JUDGE_CALIBRATION). Calibrate
 * replaces one model's entry and keeps every other model's, so one file can serve a fleet.
 */

export async function readProfile(file: string): Promise<CalibrationFile | undefined> {
  return existsSync(file) ? parseCalibrationFile(JSON.parse(await readFile(file, "utf8")), file) : undefined;
}

export function currentTemperatures(profile: CalibrationFile | undefined, modelId: string): Temperatures | undefined {
  return profile && Object.hasOwn(profile.models, modelId) ? temperaturesFor(profile, modelId) : undefined;
}

/** Six significant digits: more than the fit's precision, and readable in the file. */
const round = (t: number) => Number(t.toPrecision(6));

function entryOf(temperatures: Temperatures): ModelCalibration {
  const entry: ModelCalibration = { choice: round(temperatures.choice), noul: round(temperatures.noul), score: round(temperatures.score) };
  const record = (buckets: TemperatureBucket[] | undefined) =>
    buckets && buckets.length > 0 ? Object.fromEntries(buckets.map((b) => [bucketKey(b), round(b.temperature)])) : undefined;
  const choice = record(temperatures.buckets?.choice);
  const score = record(temperatures.buckets?.score);
  if (choice || score) entry.buckets = { ...(choice && { choice }), ...(score && { score }) };
  return entry;
}

/**
 * The profile with `modelId`'s entry set to `temperatures`. Version 2 only when some entry has
 * buckets (or the file already was version 2), so a profile without buckets stays loadable by
 * servers that know only version 1.
 */
export function mergeProfile(existing: CalibrationFile | undefined, modelId: string, temperatures: Temperatures): CalibrationFile {
  const models: Record<string, ModelCalibration> = {};
  for (const [id, entry] of Object.entries(existing?.models ?? {})) if (id !== modelId) models[id] = entry;
  Object.defineProperty(models, modelId, { value: entryOf(temperatures), enumerable: true, writable: true, configurable: true });
  const needsBuckets = Object.values(models).some((entry) => entry.buckets !== undefined);
  const version = needsBuckets || existing?.version === 2 ? 2 : 1;
  // Validated as the server will validate it: a file calibrate writes always loads.
  return parseCalibrationFile({ version, models }, "(to be written)");
}

/** Written to a temporary file and renamed, so a server never reads half a profile. */
export async function writeProfile(file: string, profile: CalibrationFile): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(profile, null, 2)}\n`);
  await rename(temporary, file);
}
