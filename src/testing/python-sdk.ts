import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The Python side of the SDK ecosystem check: scripts/python-sdk-env.sh makes (once, cached
 * outside the repository) a virtual environment with jevcompat and typesafe-sdk at pinned
 * versions from PyPI. Where Python is missing the check is skipped with a reason, except under
 * CI (CI=true), where that is a failure: CI must run it.
 */

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const DROPIN_SCRIPT = fileURLToPath(new URL("../compat/python/dropin_check.py", import.meta.url));

export type PythonSdkEnv = { bin: string } | { missing: string };

export function pythonSdkEnv(): PythonSdkEnv {
  const run = spawnSync("bash", ["scripts/python-sdk-env.sh"], { cwd: repoRoot, encoding: "utf8", timeout: 600_000 });
  if (run.status === 0) return { bin: run.stdout.trim().split("\n").at(-1)! };
  const why = `scripts/python-sdk-env.sh failed (exit ${run.status}): ${run.stderr.trim() || run.error?.message}`;
  if (run.status === 3 && process.env.CI !== "true") return { missing: why };
  // Under CI, or a failure other than a missing Python (PyPI unreachable, a bad pin): loudly.
  throw new Error(`${why}\nThe Python SDK check must run${process.env.CI === "true" ? " in CI (CI=true)" : ""}: install Python 3 with venv and pip.`);
}

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program of the environment without blocking the event loop (the servers under test share it). */
export function runIn(bin: string, program: string, args: string[], timeoutMs = 300_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(`${bin}/${program}`, args, {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TYPESAFE_LOG_LEVEL: "warning" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
