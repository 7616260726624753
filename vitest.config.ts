import { readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { isSystemTest } from "./src/testing/test-kinds.js";

/**
 * Two parts (src/testing/test-kinds.ts decides which test is which, from its code):
 * - unit: no port, model, database, browser or process; run in parallel, in worker threads;
 * - system: the real servers, databases, llama.cpp, llama-server and processes; one file at a
 *   time in its own process (node-llama-cpp loads a native addon, and on the machine's 2
 *   cores one file at a time keeps the engine's evaluation time predictable).
 * The unit part runs first (sequence.groupOrder), so the two never compete for the cores.
 */
const tests = (readdirSync("src", { recursive: true }) as string[])
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => join("src", file).split("\\").join("/"));
const unit = tests.filter((file) => !isSystemTest(join(process.cwd(), file)));

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Vitest 3 sizes each pool from the root config: threads for the unit part, forks (one
    // at a time) for the system part.
    poolOptions: {
      threads: { minThreads: 1, maxThreads: 2 },
      forks: { minForks: 1, maxForks: 1 },
    },
    projects: [
      {
        extends: true,
        test: { name: "unit", include: unit, pool: "threads", sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: "system", include: ["src/**/*.test.ts"], exclude: unit, pool: "forks", sequence: { groupOrder: 1 } },
      },
    ],
  },
});
