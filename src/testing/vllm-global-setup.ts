import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { VLLM_SCRIPT } from "./vllm.js";

/**
 * Vitest's global setup for the system lane: the real vLLM a test file started in this run
 * (testing/vllm.ts) is stopped when the run ends. A server that was already up before the run
 * (started by hand, or by a run that was killed) is reused by the tests and left running.
 */
const VLLM_STATE = path.join(
  process.env.JUDGE_LLAMA_SERVER_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? "/", ".cache"), "typed-judgment-service"),
  "vllm",
);
/** The servers the lane starts: the answering one and level 2's pooling one (testing/vllm-features-suite.ts). */
const SERVERS = ["default", "features"];

export default function setup(): () => void {
  const began = Date.now();
  return () => {
    for (const name of SERVERS) {
      const startedAt = (() => {
        try {
          return statSync(path.join(VLLM_STATE, `server-${name}.pid`)).mtimeMs;
        } catch {
          return undefined;
        }
      })();
      if (startedAt !== undefined && startedAt >= began) spawnSync(VLLM_SCRIPT, ["stop", name], { stdio: "inherit" });
    }
  };
}
