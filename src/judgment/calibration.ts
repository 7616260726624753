import { readFile } from "node:fs/promises";
import { z } from "zod";
import { NEUTRAL_TEMPERATURES, type Temperatures } from "./answers.js";

/**
 * A calibration profile file holds, per model id, a temperature per question type. Models it
 * does not name are answered uncalibrated (temperature 1).
 */
const Temperature = z.number().positive().finite();
export const CalibrationFile = z.object({
  version: z.literal(1),
  models: z.record(
    z.string(),
    z.object({ choice: Temperature.default(1), noul: Temperature.default(1), score: Temperature.default(1) }),
  ),
});
export type CalibrationFile = z.infer<typeof CalibrationFile>;

export function temperaturesFor(file: CalibrationFile | undefined, modelId: string): Temperatures {
  return file?.models[modelId] ?? NEUTRAL_TEMPERATURES;
}

export async function loadCalibrationFile(path: string): Promise<CalibrationFile> {
  const parsed = CalibrationFile.safeParse(JSON.parse(await readFile(path, "utf8")));
  if (!parsed.success) throw new Error(`invalid calibration profile ${path}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
