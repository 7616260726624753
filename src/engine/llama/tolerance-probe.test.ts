import { describe, expect, it } from "vitest";
import { tinyFixturePath } from "../../testing/fixture.js";
import { createLlamaEngine } from "./engine.js";

const engineWith = async (exactness: "strict" | "tolerant", slots: number, exactnessBound?: number) =>
  createLlamaEngine({
    model: await tinyFixturePath(),
    modelsDir: ".",
    contextSize: 4096,
    maxRequestTokens: 100_000,
    threads: 1,
    gpu: "off",
    slots,
    exactness,
    exactnessBound,
  });

describe("the in-process engine's start-up probe (tolerant)", () => {
  it("measures cached, fresh and beside-others reads and reports the figure; strict reports none", async () => {
    const tolerant = await engineWith("tolerant", 2);
    const strict = await engineWith("strict", 2);
    try {
      await Promise.all([tolerant.ready, strict.ready]);
      const report = JSON.stringify({ tolerant: [tolerant.status(), tolerant.description], strict: [strict.status(), strict.description] });
      expect(tolerant.status(), report).toEqual({ state: "ready" });
      expect(tolerant.description.exactness, report).toMatchObject({ mode: "tolerant", bound: 1e-3, measured: expect.any(Number) });
      console.log(`tiny fixture, tolerant, 2 slots: measured ${tolerant.description.exactness?.measured}`);
      expect(strict.description.exactness, report).toEqual({ mode: "strict", bound: 1e-9 });
    } finally {
      await Promise.all([tolerant.close(), strict.close()]);
    }
  });
});
