import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isSystemTest, testLane } from "./test-kinds.js";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..");

describe("which part of the suite a test runs in", () => {
  it.each([
    ["judgment/answers.test.ts", false],
    ["money/money.test.ts", false],
    ["layering.test.ts", false],
    // A server with the model (through testing/server.ts), a child process, a database, a browser.
    ["routes/systemone/route.test.ts", true],
    ["logger.test.ts", true],
    ["store/store.test.ts", true],
    ["console/console.browser.test.ts", true],
    ["engine/llama/engine.test.ts", true],
  ])("%s is a system test: %s", (file, system) => {
    expect(isSystemTest(join(SRC, file))).toBe(system);
  });
});

describe("which lane a system test runs in", () => {
  it.each([
    ["judgment/answers.test.ts", "unit"],
    ["store/store.test.ts", "system"],
    ["console/console.browser.test.ts", "system"],
    // Real weights: one file at a time, beside the system lane.
    ["engine/llama/exactness.smollm2.real-models.test.ts", "models"],
    ["engine/llama/exactness.gemma3.real-models.test.ts", "models"],
    ["engine/llama-server/gpu-check.test.ts", "models"],
    // Real weights in one test (SmolLM2 through llama-server), so the whole file.
    ["engine/llama-server/round-trips.test.ts", "models"],
    // Asserts on elapsed time (marked): alone, after the rest.
    ["http/fuzz.test.ts", "timed"],
    ["engine/llama-server/slots-parallel.test.ts", "timed"],
    ["main.model-unavailable.test.ts", "timed"],
    ["main.startup.test.ts", "system"],
    // The real vLLM server: last, with nothing beside it.
    ["engine/hf/vllm/real-vllm.test.ts", "vllm"],
  ])("%s runs in the %s lane", (file, lane) => {
    expect(testLane(join(SRC, file))).toBe(lane);
  });
});
