import { readFile } from "node:fs/promises";
import { parseCalibrationFile, type CalibrationFile } from "../judgment/calibration.js";

/** Reads a calibration profile (JUDGE_CALIBRATION); judgment/calibration.ts parses it without touching files. */
export async function loadCalibrationFile(path: string): Promise<CalibrationFile> {
  return parseCalibrationFile(JSON.parse(await readFile(path, "utf8")), path);
}
