import { describe, expect, it } from "vitest";
import { defaultThreads } from "./runtime.js";

// JUDGE_THREADS=0 leaves a core to the rest of the machine (docs/engines/llama.md#threads):
// a thread per core collapses when another process takes one.
describe("the default thread count", () => {
  it("is one fewer than the math cores, at least one", () => {
    expect([1, 2, 4, 16].map(defaultThreads)).toEqual([1, 1, 3, 15]);
  });
});
