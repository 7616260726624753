import { describe, expect, it } from "vitest";
import { startSglangStandin } from "../../testing/standins/sglang-standin.js";
import { startVllmStandin } from "../../testing/standins/vllm-standin.js";
import { remoteOptions } from "../llama-server/test-helpers.js";
import { createSglangEngine } from "./sglang/engine.js";
import { createVllmEngine } from "./vllm/engine.js";

/**
 * vLLM and SGLang engines report the exactness contract they serve: the mode, its bound, what
 * the start-up probe measured, and the server's own batch-invariant / deterministic setting.
 */
const cases = [
  {
    kind: "sglang",
    start: startSglangStandin,
    create: createSglangEngine,
    on: "enable_deterministic_inference=true",
    off: "enable_deterministic_inference=false",
  },
  { kind: "vllm", start: startVllmStandin, create: createVllmEngine, on: "VLLM_BATCH_INVARIANT=1", off: "VLLM_BATCH_INVARIANT=0" },
] as const;

describe("the exactness contract on vLLM and SGLang", () => {
  for (const c of cases) {
    it(`${c.kind}: strict by default, measured 0 on a deterministic server, and its deterministic mode recognised`, async () => {
      const standin = await c.start({ deterministic: true });
      const engine = c.create(remoteOptions(standin.url));
      try {
        await engine.ready;
        expect(await engine.status(), JSON.stringify(engine.description)).toEqual({ state: "ready" });
        expect(engine.description.exactness).toEqual({ mode: "strict", bound: 1e-9, measured: 0, backendMode: c.on });
      } finally {
        await engine.close();
        await standin.close();
      }
    });

    it(`${c.kind}: tolerant reports its bound, and a server without the mode says so`, async () => {
      const standin = await c.start();
      const engine = c.create(remoteOptions(standin.url, { exactness: "tolerant", exactnessBound: 0.01 }));
      try {
        await engine.ready;
        expect(engine.description.exactness).toEqual({ mode: "tolerant", bound: 0.01, measured: 0, backendMode: c.off });
      } finally {
        await engine.close();
        await standin.close();
      }
    });
  }
});
