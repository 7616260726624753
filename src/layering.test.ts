import { readFileSync } from "node:fs";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkCycles, checkReexports } from "./testing/import-graph.js";
import { checkLayers, ENVIRONMENT_READER, environmentReads, isTest, LAYER_OF, MAY_IMPORT, sourceFiles } from "./testing/layers.js";

/**
 * The house's layers, enforced on the tree (the rules are in src/testing/layers.ts; the
 * checker's own test, with violations put into a copy, is layering.injected.test.ts); the
 * cycle and re-export checks are in src/testing/import-graph.ts.
 */

const SRC = dirname(fileURLToPath(import.meta.url));

describe("layering", () => {
  const files = sourceFiles(SRC);

  it("every layer the rules name has production files, so a moved folder cannot make the check pass vacuously", () => {
    const production = files.filter((file) => !isTest(file)).map((file) => relative(SRC, file).split(/[\\/]/)[0]);
    const layersSeen = new Set(production.map((top) => LAYER_OF[top]));
    const missing = Object.keys(MAY_IMPORT).filter((layer) => !layersSeen.has(layer as never));
    expect(missing, `layers without files: ${missing.join(", ")}`).toEqual([]);
    expect(files.length).toBeGreaterThan(300);
  });

  it("no file imports a layer above it or a package its layer may not use, and only config/environment.ts reads the environment", () => {
    const violations = checkLayers(SRC, files);
    expect(violations, violations.join("\n")).toEqual([]);
  });

  it("no import cycles, type-only and dynamic imports included (a cycle kept on purpose is listed in ALLOWED_CYCLES of src/testing/import-graph.ts)", () => {
    const cycles = checkCycles(SRC, files);
    expect(cycles, cycles.join("\n")).toEqual([]);
  });

  it("no layer hands on another layer's values through export … from (types may pass: they are the contract; kept ones are in ALLOWED_REEXPORTS)", () => {
    const violations = checkReexports(SRC, files);
    expect(violations, violations.join("\n")).toEqual([]);
  });

  it(`${ENVIRONMENT_READER}, the one reader of the environment, does read it (so the detector looks at real code)`, () => {
    const path = `${SRC}/${ENVIRONMENT_READER}`;
    expect(environmentReads(path, readFileSync(path, "utf8")).length).toBeGreaterThan(0);
  });
});
