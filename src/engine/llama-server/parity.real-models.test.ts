import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Question } from "../../judgment/schema.js";
import { choiceQuestion as choice, EXACTNESS_STATE as STATE, NOUL_QUESTIONS as NOULS, scoreQuestion as score } from "../../testing/exactness.js";
import { loadedCpuLibraries } from "../../testing/cpu-library.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { availableRealModels } from "../../testing/real-models.js";
import { createLlamaEngine } from "../llama/engine.js";
import type { JudgmentEngine } from "../types.js";
import { createLlamaServerEngine } from "./engine.js";
import { maxDifference, probabilities, remoteOptions } from "./test-helpers.js";

/**
 * llama-server against the in-process engine on the two real models, through the engines'
 * public interface only (prepare, evaluate), so the test holds whatever the walk does inside.
 *
 * scripts/build-llama-server.sh runs llama-server on node-llama-cpp's own libllama, libggml and
 * CPU-variant libraries, so both sides compute with the same kernels on any CPU (asserted: the
 * same libggml-cpu-*.so is loaded by both, and printed). What differs is the read protocol, not
 * the arithmetic. Measured max |Δp| on SmolLM2 (libggml-cpu-zen4.so, chosen on an AVX-512 FP16
 * Xeon without AMX): 4e-9 (choice of 2), 2e-8 (noul and score), 1.6e-5 with two-token labels
 * (27 options, 4 of them two tokens: raw and grammar reads, relative-read.ts).
 */
const SINGLE_TOKEN_TOLERANCE = 1e-6;
const TWO_TOKEN_TOLERANCE = 1e-4;
const models = availableRealModels();

/**
 * Gemma 3 270M: this llama-server answers a cached prefix and a fresh prompt differently
 * (max |Δp| 9.64e-5, measured by the engine's start-up probe, with -fa off, --swa-full, 1 or 2
 * threads), so the llama-server engine refuses it, as it refuses any server whose numbers depend
 * on batching. What holds, and is asserted: the refusal, with its reason.
 */
const REFUSED: Partial<Record<string, RegExp>> = {
  // The start-up probe's first check that fails names it: one batch against a cached rest (the
  // batch-shape check), or a cached prefix against a fresh prompt (or beside other traffic).
  "gemma3-270m":
    /answers differently for (a prompt read in one batch than for its last tokens read after a cached rest|a cached prefix, a fresh prompt or beside other traffic) \(max \|Δp\| [0-9.e-]+/,
};

/** The engine's status, asked again while the busy server drops the connection. */
async function settledStatus(engine: JudgmentEngine) {
  for (let attempt = 0; ; attempt++) {
    const status = await engine.status();
    if (attempt >= 5 || status.state !== "failed" || !/cannot reach/.test(status.detail)) return status;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

describe.skipIf(models.length === 0).each(models.filter((m) => REFUSED[m.name]))("on $name, the llama-server engine", ({ file, name }) => {
  it("refuses the server at start-up: its numbers depend on batching", async () => {
    const server = await startLlamaServer({ model: file, slots: 2, contextSize: 16384, threads: 1, extraArgs: ["--swa-full"] });
    const engine = createLlamaServerEngine(remoteOptions(server.url, { server: { url: server.url, timeoutMs: 120_000 } }));
    try {
      await engine.ready.catch(() => undefined);
      const status = await settledStatus(engine);
      expect(status.state, `${JSON.stringify(status)}\n${server.output()}`).toBe("failed");
      expect((status as { detail: string }).detail, server.output()).toMatch(REFUSED[name]!);
    } finally {
      await engine.close();
      await server.stop();
    }
  });
});

describe.skipIf(models.length === 0).each(models.filter((m) => !REFUSED[m.name]))(
  "on $name, llama-server answers as the in-process engine",
  ({ name, file }) => {
    let server: LlamaServerProcess;
    let remote: JudgmentEngine;
    let local: JudgmentEngine & { close(): Promise<void> };
    const measured: string[] = [];
    let libraries: { server: string[]; inProcess: string[] };

    beforeAll(async () => {
      // --swa-full: a sliding-window model (Gemma 3) keeps the whole cache, as the in-process
      // engine does, so a cached prefix and a rolled-back branch read the same cells as a fresh read.
      // One thread each: llama.cpp's worker threads spin while they wait for each other, and on a
      // busy 2-core machine a 2-thread server took 17 s per decode.
      server = await startLlamaServer({ model: file, slots: 2, contextSize: 16384, threads: 1, extraArgs: ["--swa-full"] });
      const engine = createLlamaServerEngine(remoteOptions(server.url, { server: { url: server.url, timeoutMs: 120_000 } }));
      remote = engine;
      local = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1, gpu: "off" });
      await Promise.all([engine.ready, (local as any).ready]);
      expect(await settledStatus(remote), server.output()).toEqual({ state: "ready" });
      libraries = { server: loadedCpuLibraries(server.pid), inProcess: loadedCpuLibraries() };
      console.log(
        `${name}: CPU library loaded by llama-server ${libraries.server.join(", ") || "(none found)"}, in process ${libraries.inProcess.join(", ") || "(none found)"}`,
      );
    });
    afterAll(async () => {
      if (measured.length > 0) console.log(`${name} on ${libraries?.inProcess.join(", ")}: max |Δp| llama-server vs in-process:\n  ${measured.join("\n  ")}`);
      await remote?.close();
      await local?.close();
      await server?.stop();
    });

    async function expectSame(state: unknown, questions: Question[], what: string, tolerance: number) {
      const ours = await probabilities(remote, state, questions);
      const theirs = await probabilities(local, state, questions);
      expect(ours.prepared.inputTokens, `${what}: input tokens (billing) differ`).toBe(theirs.prepared.inputTokens);
      const worst = maxDifference(ours.probabilities, theirs.probabilities);
      measured.push(`${what}: ${worst.toExponential(2)}`);
      expect(
        worst,
        `${what}: max |Δp| = ${worst}\nllama-server ${JSON.stringify(ours.probabilities)}\nin-process ${JSON.stringify(theirs.probabilities)}`,
      ).toBeLessThanOrEqual(tolerance);
    }

    it("runs the same ggml CPU library on both sides (node-llama-cpp's, chosen for this CPU)", () => {
      expect(libraries.server).toHaveLength(1);
      expect(libraries.server).toEqual(libraries.inProcess);
    });
    it("choice with 2 options", async () => {
      await expectSame(STATE, [choice(2)], "choice 2", SINGLE_TOKEN_TOLERANCE);
    });
    it("choice with 27 options (4 two-token labels)", async () => {
      await expectSame(STATE, [choice(27)], "choice 27", TWO_TOKEN_TOLERANCE);
    });
    it("noul and score in one request", async () => {
      await expectSame(STATE, [...NOULS, score(5), score(10)], "noul + score", SINGLE_TOKEN_TOLERANCE);
    });
    it('a long state ("word " × 300) with several question types', async () => {
      await expectSame("word ".repeat(300), [choice(27), score(5), NOULS[0]], "long state", TWO_TOKEN_TOLERANCE);
    }, 600_000);
  },
);
