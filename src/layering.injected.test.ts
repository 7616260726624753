import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { checkCycles, checkReexports } from "./testing/import-graph.js";
import { checkLayers, sourceFiles } from "./testing/layers.js";

/**
 * The layering checker's own test: each violation is put into a copy of src/, and the checker
 * must report it at that file. The four first are the ones an outside review injected, which
 * the old regex-based test missed (all but the last).
 */

const SRC = dirname(fileURLToPath(import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "layering-"));
cpSync(SRC, copy, { recursive: true, filter: (path) => !path.includes("node_modules") });
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const INJECTED: { name: string; file: string; code: string; says: RegExp }[] = [
  { name: "engine imports errors.ts", file: "engine/factory.ts", code: 'import { ApiError } from "../errors.js";', says: /engine may not import edge/ },
  { name: "judgment imports hono", file: "judgment/labels.ts", code: 'import { Hono } from "hono";', says: /judgment imports nothing but zod/ },
  {
    name: "store reads env from node:process",
    file: "store/names.ts",
    code: 'import { env } from "node:process";\nexport const fromEnv = env.JUDGE_X;',
    says: /reads the environment/,
  },
  { name: "store imports cli/", file: "store/names.ts", code: 'import { emit } from "../cli/context.js";', says: /store may not import cli/ },
  { name: 'process["env"]', file: "services/limits.ts", code: 'export const x = process["env"].X;', says: /reads the environment/ },
  { name: "globalThis.process.env", file: "engine/factory.ts", code: "export const x = globalThis.process.env.X;", says: /reads the environment/ },
  { name: "destructured from process", file: "http/incoming.ts", code: "const { env: e } = process;\nexport const x = e.X;", says: /reads the environment/ },
  { name: "process under another name", file: "limits/types.ts", code: "const p = process;\nexport const x = p.env.X;", says: /reads the environment/ },
  {
    name: "another config module reading the environment",
    file: "config/models-file.ts",
    code: "export const x = process.env.X;",
    says: /reads the environment \(only config\/environment\.ts may\)/,
  },
  {
    name: "a namespace import of node:process",
    file: "money/periods.ts",
    code: 'import * as proc from "node:process";\nexport const x = proc.env.X;',
    says: /reads the environment/,
  },
  {
    name: "a tool reaching the store by dynamic import",
    file: "evaluation/client.ts",
    code: 'export const load = () => import("../store/store.js");',
    says: /tools may not import store/,
  },
  { name: "a tool requiring a database driver", file: "bench/stats.ts", code: 'const pg = require("pg");', says: /pg is for store only/ },
  {
    name: "a re-export from the edge",
    file: "services/limits.ts",
    code: 'export { unknownModel } from "../routes/judging/request-response.js";',
    says: /services may not import edge/,
  },
  { name: "a type-only import upward", file: "store/names.ts", code: 'import type { App } from "../http/context.js";', says: /store may not import edge/ },
  {
    name: "production code importing testing/",
    file: "routes/judging/request-response.ts",
    code: 'import { startTestServer } from "../../testing/server.js";',
    says: /only tests import testing/,
  },
  { name: "the CLI importing the store", file: "cli/keys.ts", code: 'import { createStore } from "../store/store.js";', says: /cli may not import store/ },
  { name: "judgment reading files", file: "judgment/labels.ts", code: 'import { readFileSync } from "node:fs";', says: /judgment imports nothing but zod/ },
  { name: "a computed dynamic import", file: "services/health.ts", code: "export const load = (name: string) => import(name);", says: /computed specifier/ },
];

describe("the layering checker, on a copy of src/ with one violation put in at a time", () => {
  for (const { name, file, code, says } of INJECTED) {
    it(`catches ${name} (${file})`, () => {
      const path = join(copy, file);
      const original = readFileSync(path, "utf8");
      expect(checkLayers(copy, [path]), "the file is clean before").toEqual([]);
      try {
        appendFileSync(path, `\n${code}\n`);
        const violations = checkLayers(copy, [path]);
        expect(violations.join("\n"), violations.join("\n")).toMatch(says);
        expect(
          violations.every((v) => v.startsWith(file)),
          violations.join("\n"),
        ).toBe(true);
      } finally {
        writeFileSync(path, original);
      }
    });
  }

  it("catches a top-level file with no layer", () => {
    const path = join(copy, "extra.ts");
    writeFileSync(path, "export const x = 1;\n");
    try {
      expect(checkLayers(copy, [path]).join("\n")).toMatch(/extra\.ts has no layer/);
    } finally {
      rmSync(path);
    }
  });

  it("leaves Hono's c.env (the server's bindings) alone: it is not the environment", () => {
    const path = join(copy, "http/incoming.ts");
    expect(readFileSync(path, "utf8")).toMatch(/c\.env/);
    expect(checkLayers(copy, [path])).toEqual([]);
  });
});

/** Cycles put into the copy: each must be reported as the path it takes, whatever kind of import closes it. */
const CYCLES: { name: string; edits: { file: string; code: string }[]; says: RegExp }[] = [
  {
    name: "a type-only cycle (the one engine/remote had: token-batch.ts took its tokenizer's type from prepare.ts)",
    edits: [{ file: "engine/remote/token-batch.ts", code: 'import type { RemoteTokenizer as Again } from "./prepare.js";\nexport type Tokenizer = Again;' }],
    says: /^import cycle: engine\/remote\/prepare\.ts:\d+ → engine\/remote\/token-batch\.ts:\d+ \(type\) → engine\/remote\/prepare\.ts$/,
  },
  {
    name: "a type-only cycle through export type … from",
    edits: [{ file: "store/ledger-types.ts", code: 'export type { ReportsRepository } from "./reports-types.js";' }],
    says: /^import cycle: store\/ledger-types\.ts:\d+ \(type\) → store\/reports-types\.ts:\d+ \(type\) → store\/ledger-types\.ts$/,
  },
  {
    name: "a cycle of values across three files",
    edits: [
      { file: "store/keys-check.ts", code: 'import { usageByModel } from "./ledger-by-model.js";\nexport const again = usageByModel;' },
      { file: "store/ledger-by-model.ts", code: 'import { MAX_LEDGER_PAGE } from "./ledger.js";\nexport const page = MAX_LEDGER_PAGE;' },
    ],
    says: /^import cycle: store\/keys-check\.ts:\d+ → store\/ledger-by-model\.ts:\d+ → store\/ledger\.ts:\d+ → store\/keys-check\.ts$/,
  },
  {
    name: "a cycle closed by a dynamic import()",
    edits: [{ file: "store/day-buckets.ts", code: 'export const later = () => import("./ledger.js");' }],
    says: /store\/day-buckets\.ts:\d+ \(dynamic\) → store\/ledger\.ts:\d+ → store\/day-buckets\.ts/,
  },
];

describe("the cycle checker, on a copy of src/ with one cycle put in at a time", () => {
  it("finds none in the copy before", () => {
    expect(checkCycles(copy, sourceFiles(copy))).toEqual([]);
  });

  for (const { name, edits, says } of CYCLES) {
    it(`catches ${name}`, () => {
      const originals = edits.map(({ file }) => [join(copy, file), readFileSync(join(copy, file), "utf8")] as const);
      try {
        for (const { file, code } of edits) appendFileSync(join(copy, file), `\n${code}\n`);
        const cycles = checkCycles(copy, sourceFiles(copy));
        expect(cycles, cycles.join("\n")).toHaveLength(1);
        expect(cycles[0]).toMatch(says);
      } finally {
        for (const [path, text] of originals) writeFileSync(path, text);
      }
    });
  }
});

describe("the re-export checker, on a copy of src/ with one barrel line put in at a time", () => {
  const REEXPORTS: { name: string; file: string; code: string; says: RegExp | null }[] = [
    {
      name: "a store value handed on by the services",
      file: "services/health.ts",
      code: 'export { newId } from "../store/random.js";',
      says: /services\/health\.ts:\d+ re-exports values of store \(newId\) to cli, edge, views/,
    },
    {
      name: "export * of a store module",
      file: "services/limits.ts",
      code: 'export * from "../store/random.js";',
      says: /services\/limits\.ts:\d+ re-exports values of store \(\*\)/,
    },
    {
      name: "a value beside the types",
      file: "services/types.ts",
      code: 'export { PLAN_LIMITS } from "../store/plans.js";',
      says: /services\/types\.ts:\d+ re-exports values of store \(PLAN_LIMITS\)/,
    },
    { name: "nothing for a type handed on", file: "services/health.ts", code: 'export type { Plan } from "../store/types.js";', says: null },
  ];
  for (const { name, file, code, says } of REEXPORTS) {
    it(`reports ${name} (${file})`, () => {
      const path = join(copy, file);
      const original = readFileSync(path, "utf8");
      expect(checkReexports(copy, sourceFiles(copy)), "the copy is clean before").toEqual([]);
      try {
        appendFileSync(path, `\n${code}\n`);
        const violations = checkReexports(copy, sourceFiles(copy));
        if (says === null) expect(violations).toEqual([]);
        else expect(violations.join("\n"), violations.join("\n")).toMatch(says);
      } finally {
        writeFileSync(path, original);
      }
    });
  }
});
