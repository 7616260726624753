import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isSystemTest } from "./test-kinds.js";

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
