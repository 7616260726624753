import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { testLane, type TestLane } from "./src/testing/test-kinds.js";

/**
 * Four parts (src/testing/test-kinds.ts decides which test is which, from its code), in three
 * steps (sequence.groupOrder; the parts of one step run side by side, one pool each):
 * 1. unit: no port, model, database, browser or process; worker threads, two at a time.
 * 2. system (worker threads, two files at a time: most of their time is spent waiting on
 *    servers, databases and child processes) beside models (real weights: one file at a time in
 *    its own process, since node-llama-cpp loads a native addon and one model at a time keeps the
 *    2 cores from being split three ways).
 * 3. timed: files that assert on elapsed time, one at a time with nothing beside them.
 * Vitest 3 sizes each pool from the root poolOptions, so threads serve both 1 and 2, and forks
 * (one at a time) both models and timed.
 * Unit and system files share their worker's module graph (isolate: false): importing the app
 * afresh for each of 126 system files cost 114 s of collection (the lane alone: 387 → 347 s
 * wall, 669 → 581 s CPU). No test mocks modules or stubs globals, and each file closes what it
 * opens; models and timed files keep a process of their own.
 */
const tests = (readdirSync("src", { recursive: true }) as string[])
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => join("src", file).split("\\").join("/"));
const lanes = new Map(tests.map((file) => [file, testLane(join(process.cwd(), file))]));
const inLane = (lane: TestLane) => tests.filter((file) => lanes.get(file) === lane);

/**
 * Vitest's own order (longest first from its results cache, else largest file first) would start
 * the models lane with the real-weight exactness suite, beside the busiest part of the system
 * lane, where both sides' llama.cpp threads wait on each other: 763 s for that file in one full
 * run against 396 s when it ran after the system lane was done (the whole run 1,134 s against
 * 912 s). So the models lane runs smallest file first, which puts that suite last.
 */
class LaneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const models = sorted.filter((file) => file.project.name === "models").sort((a, b) => statSync(a.moduleId).size - statSync(b.moduleId).size);
    return [...sorted.filter((file) => file.project.name !== "models"), ...models];
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: LaneSequencer },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    poolOptions: {
      threads: { minThreads: 1, maxThreads: 2 },
      forks: { minForks: 1, maxForks: 1 },
    },
    projects: [
      { extends: true, test: { name: "unit", include: inLane("unit"), pool: "threads", isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "system", include: inLane("system"), pool: "threads", isolate: false, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: "models", include: inLane("models"), pool: "forks", sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: "timed", include: inLane("timed"), pool: "forks", sequence: { groupOrder: 2 } } },
    ],
  },
});
