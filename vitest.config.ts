import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { testLane, type TestLane } from "./src/testing/test-kinds.js";

/**
 * Four kinds of test file (src/testing/test-kinds.ts decides which is which, from its code), run
 * in three steps (sequence.groupOrder):
 * 1. unit: no port, model, database, browser or process.
 * 2. system and models (real weights), as one vitest project: one pool of three worker threads,
 *    real-weight files first. System files spend much of their time waiting on servers,
 *    databases and child processes, so three files keep the 2 cores busy. One project, not two:
 *    without isolation vitest recycles the workers between projects, so two would run one after
 *    the other. Every llama.cpp context in these tests uses one thread: two threads of one
 *    context spin at each barrier while the other waits for a core.
 * 3. timed: files that assert on elapsed time, after everything else, two at a time (their
 *    bounds hold beside one other timed file, not beside the real-weight files), in two
 *    processes kept for the files that follow (a process per file costs seconds each).
 * 4. vllm: the files that use the real vLLM (testing/vllm.ts), last, with nothing beside them:
 *    they share one vLLM server (started by the first that asks, stopped by this project's
 *    global teardown), which takes both cores while it computes. Today one file
 *    (real-vllm.test.ts), whose last describe kills that server.
 * Vitest 3 sizes each pool from the root poolOptions: threads serve steps 1 and 2, forks 3 and 4.
 * Files share their worker's module graph (isolate: false), so the app is imported once per
 * worker, not once per file. No test mocks modules or stubs globals, and each file closes what
 * it opens. minThreads = maxThreads: with fewer kept, tinypool ends an idle shared worker under a
 * running file ("Terminating worker thread").
 */
const tests = (readdirSync("src", { recursive: true }) as string[])
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => join("src", file).split("\\").join("/"));
const lanes = new Map(tests.map((file) => [file, testLane(join(process.cwd(), file))]));
const inLane = (lane: TestLane) => tests.filter((file) => lanes.get(file) === lane);

/**
 * Longest first, so that the step ends with short files on every worker: the real-weight files
 * first (the two exactness suites, then by size), then the typecheck (one ~20–30 s tsc process
 * in a small file: by size it ran last, alone at the end of a full run), then the system files
 * in vitest's order (longest first from its results cache, else largest file first).
 */
class LaneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isModels = (file: TestSpecification) => lanes.get(relative(process.cwd(), file.moduleId).split("\\").join("/")) === "models";
    const weight = (file: TestSpecification) => (/exactness\.[^/]*real-models/.test(file.moduleId) ? 1e9 : 0) + statSync(file.moduleId).size;
    const isTypecheck = (file: TestSpecification) => file.moduleId.endsWith("/src/typecheck.test.ts");
    const system = sorted.filter((file) => !isModels(file));
    return [...sorted.filter(isModels).sort((a, b) => weight(b) - weight(a)), ...system.filter(isTypecheck), ...system.filter((file) => !isTypecheck(file))];
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: LaneSequencer },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    poolOptions: {
      threads: { minThreads: 3, maxThreads: 3, isolate: false },
      forks: { minForks: 2, maxForks: 2, isolate: false },
    },
    projects: [
      { extends: true, test: { name: "unit", include: inLane("unit"), pool: "threads", sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "system", include: [...inLane("models"), ...inLane("system")], pool: "threads", sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: "timed", include: inLane("timed"), pool: "forks", sequence: { groupOrder: 2 } } },
      {
        extends: true,
        test: { name: "vllm", include: inLane("vllm"), pool: "forks", sequence: { groupOrder: 3 }, globalSetup: ["src/testing/vllm-global-setup.ts"] },
      },
    ],
  },
});
