import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // node-llama-cpp loads a native addon; forks keep each test file in its own process.
    pool: "forks",
    // Tests that load a model share the machine's 2 cores; running them one file at a time
    // keeps the engine's evaluation time predictable.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
