import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * scripts/gpu-check.sh runs on a machine without a GPU the same way it runs on one (CPU
 * llama-server, both exactness modes, judge bench, comparison with the in-process engine), here
 * on the tiny fixture with a few requests: the script keeps working wherever CI runs.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * Run without blocking the event loop: the script takes about a minute, and a test worker whose
 * loop is blocked that long misses vitest's 60 s RPC deadline ("Timeout calling onTaskUpdate").
 */
function runScript(file: string, args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // One llama.cpp thread per process: the suite runs beside other files on 2 cores (vitest.config.ts).
    const env = { ...process.env, GPU_CHECK_THREADS: "1" };
    execFile(file, args, { cwd: ROOT, env, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === "number" ? error.code : null) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

describe("scripts/gpu-check.sh --tiny", () => {
  it("prints one summary: both modes ready, probe figures, bench lines, and the same answers as the in-process engine", async () => {
    const run = await runScript(path.join(ROOT, "scripts/gpu-check.sh"), ["--tiny"], 540_000);
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    for (const mode of ["strict", "tolerant"]) {
      const line = run.stdout.split("\n").find((l) => l.startsWith(`tiny ${mode}:`));
      expect(line, output).toMatch(/probe max \|Δp\| 0;/);
      expect(line, output).toMatch(/c=1: [\d.]+ req\/s, p50 \d+ ms, \d+ input tok\/s, 0 failed/);
      const comparison = JSON.parse(line!.slice(line!.indexOf("{")));
      expect(comparison.maxAbsDp, output).toBeLessThanOrEqual(1e-6);
      expect(comparison.flips, output).toEqual([]);
    }
  }, 600_000);
});
