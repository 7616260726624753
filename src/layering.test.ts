import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The house's layers, enforced: the HTTP edge (routes/, http/, app.ts) and the CLI call
 * services/; services call judgment/, engine/, store/ and limits/; those never call back up.
 * Tests and test helpers (testing/, *test-helpers.ts) may import anything, so they are not checked.
 */

const SRC = dirname(fileURLToPath(import.meta.url));
const EDGE = ["routes", "http", "app.ts", "main.ts", "cli", "console"];

/** Layer → what its production files must not import (top-level folders or files of src/). */
const FORBIDDEN: Record<string, string[]> = {
  judgment: [...EDGE, "services", "store", "engine", "limits", "billing"],
  engine: [...EDGE, "services", "store", "limits", "billing"],
  store: [...EDGE, "services", "engine", "judgment", "limits", "billing"],
  limits: [...EDGE, "services", "engine", "judgment", "store", "billing"],
  billing: [...EDGE, "services", "engine", "store", "limits"],
  services: EDGE,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "testing" ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/(\.test|test-helpers)\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The first path segment under src/ of every relative import (static, dynamic and re-export). */
export function importedLayers(file: string, text: string): { specifier: string; layer: string }[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["'](\.[^"']+)["']/g)].map((m) => m[1]);
  return specifiers.map((specifier) => {
    const target = relative(SRC, resolve(dirname(file), specifier));
    return { specifier, layer: target.split(/[\\/]/)[0].replace(/\.js$/, ".ts") };
  });
}

const layerOf = (file: string) => relative(SRC, file).split(/[\\/]/)[0];

describe("layering", () => {
  const files = sourceFiles(SRC);

  it("finds the layers it checks (so a moved folder cannot make this test pass vacuously)", () => {
    const layers = new Set(files.map(layerOf));
    expect([...layers].sort(), [...layers].join(", ")).toEqual(expect.arrayContaining(Object.keys(FORBIDDEN)));
  });

  it("no lower layer imports a layer above it", () => {
    const violations = files.flatMap((file) => {
      const forbidden = FORBIDDEN[layerOf(file)] ?? [];
      return importedLayers(file, readFileSync(file, "utf8"))
        .filter(({ layer }) => forbidden.includes(layer))
        .map(({ specifier }) => `${relative(SRC, file)} imports ${specifier}`);
    });
    expect(violations, violations.join("\n")).toEqual([]);
  });

  it("catches a violation when there is one (the detector itself works)", () => {
    const file = join(SRC, "store", "example.ts");
    const found = importedLayers(file, 'import { x } from "../routes/systemone.js";\nexport * from "../services/billing.js";');
    expect(found.map((f) => f.layer)).toEqual(["routes", "services"]);
  });

  it("only config.ts reads process.env", () => {
    const readers = files.filter((file) => /process\.env\b/.test(readFileSync(file, "utf8"))).map((file) => relative(SRC, file));
    expect(readers, readers.join("\n")).toEqual(["config.ts"]);
  });
});
