import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { VLLM_SCRIPT } from "./vllm.js";

/**
 * Vitest's global setup for the system lane: the real vLLM a test file started in this run
 * (testing/vllm.ts) is stopped when the run ends. A server that was already up before the run
 * (started by hand, or by a run that was killed) is reused by the tests and left running.
 */
const STATE = path.join(
  process.env.JUDGE_LLAMA_SERVER_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? "/", ".cache"), "typed-judgment-service"),
  "vllm/server-default.pid",
);

export default function setup(): () => void {
  const began = Date.now();
  return () => {
    const startedAt = (() => {
      try {
        return statSync(STATE).mtimeMs;
      } catch {
        return undefined;
      }
    })();
    if (startedAt !== undefined && startedAt >= began) spawnSync(VLLM_SCRIPT, ["stop"], { stdio: "inherit" });
  };
}
