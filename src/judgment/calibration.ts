import { z } from "zod";
import { NEUTRAL_TEMPERATURES, type TemperatureBucket, type Temperatures } from "./answers.js";

/**
 * A calibration profile file holds, per model id, a temperature per question type. Models it
 * does not name are answered uncalibrated (temperature 1).
 *
 * Version 2 adds optional per-label-count buckets for choice and score:
 *   {"version": 2, "models": {"m": {"choice": 1.3, "noul": 0.9, "score": 1.1,
 *     "buckets": {"choice": {"2": 1.5, "3-4": 1.2}, "score": {"5-6": 1.05}}}}}
 * A bucket key is a count ("2") or an inclusive range ("3-4"); a question whose label count no
 * bucket holds uses its type's temperature. Buckets need version 2 so that a server that only
 * knows version 1 refuses the file instead of silently ignoring them.
 */
const Temperature = z.number().positive().finite();

const BUCKET_KEY = /^([1-9]\d*)(?:-([1-9]\d*))?$/;

/** "3-4" → {min: 3, max: 4}; "2" → {min: 2, max: 2}; undefined when not a valid key. */
export function parseBucketKey(key: string): { min: number; max: number } | undefined {
  const match = BUCKET_KEY.exec(key);
  if (!match) return undefined;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  return min >= 2 && max >= min ? { min, max } : undefined;
}

export function bucketKey(bucket: { min: number; max: number }): string {
  return bucket.min === bucket.max ? String(bucket.min) : `${bucket.min}-${bucket.max}`;
}

const Buckets = z.record(z.string(), Temperature).superRefine((record, ctx) => {
  const ranges: { key: string; min: number; max: number }[] = [];
  for (const key of Object.keys(record)) {
    const range = parseBucketKey(key);
    if (!range) ctx.addIssue({ code: "custom", message: `bucket "${key}" must be a count ≥ 2 or a range like "3-4"`, path: [key] });
    else ranges.push({ key, ...range });
  }
  for (const a of ranges)
    for (const b of ranges)
      if (a.key < b.key && a.min <= b.max && b.min <= a.max)
        ctx.addIssue({ code: "custom", message: `buckets "${a.key}" and "${b.key}" overlap`, path: [b.key] });
});

const ModelTemperatures = z.object({
  choice: Temperature.default(1),
  noul: Temperature.default(1),
  score: Temperature.default(1),
  buckets: z.strictObject({ choice: Buckets.optional(), score: Buckets.optional() }).optional(),
});

export const CalibrationFile = z
  .object({
    version: z.union([z.literal(1), z.literal(2)]),
    models: z.record(z.string(), ModelTemperatures),
  })
  .superRefine((file, ctx) => {
    if (file.version === 2) return;
    for (const [model, entry] of Object.entries(file.models)) {
      if (entry.buckets !== undefined) ctx.addIssue({ code: "custom", message: 'buckets need "version": 2', path: ["models", model, "buckets"] });
    }
  });
export type CalibrationFile = z.infer<typeof CalibrationFile>;
export type ModelCalibration = CalibrationFile["models"][string];

export function temperaturesFor(file: CalibrationFile | undefined, modelId: string): Temperatures {
  const entry = file && Object.hasOwn(file.models, modelId) ? file.models[modelId] : undefined;
  if (!entry) return NEUTRAL_TEMPERATURES;
  const temperatures: Temperatures = { choice: entry.choice, noul: entry.noul, score: entry.score };
  if (entry.buckets) {
    temperatures.buckets = {};
    if (entry.buckets.choice) temperatures.buckets.choice = toBuckets(entry.buckets.choice);
    if (entry.buckets.score) temperatures.buckets.score = toBuckets(entry.buckets.score);
  }
  return temperatures;
}

function toBuckets(record: Record<string, number>): TemperatureBucket[] {
  return Object.entries(record).map(([key, temperature]) => ({ ...parseBucketKey(key)!, temperature }));
}

export function parseCalibrationFile(content: unknown, path: string): CalibrationFile {
  const parsed = CalibrationFile.safeParse(content);
  if (!parsed.success) throw new Error(`invalid calibration profile ${path}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
