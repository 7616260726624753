import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * bin/judge.js runs the CLI from a transpiled copy of src/ kept under node_modules/.cache, keyed
 * by the sources' content. In a copy of the repository (bin/, src/, package.json, and a
 * node_modules of links to the real packages, so its cache is its own): the first run makes the
 * copy, a changed source is seen at once (never a stale copy), and where the cache cannot be
 * written the CLI still runs, through tsx.
 */
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
let copy: string;
let cache: string;

const judge = (...args: string[]) =>
  new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [join(copy, "bin/judge.js"), ...args], { cwd: copy, encoding: "utf8" }, (error, stdout, stderr) =>
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
const keys = () => readdirSync(cache).filter((name) => name.startsWith("cli-"));

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), "judge-bin-"));
  cpSync(join(repoRoot, "bin"), join(copy, "bin"), { recursive: true });
  cpSync(join(repoRoot, "src"), join(copy, "src"), { recursive: true });
  cpSync(join(repoRoot, "package.json"), join(copy, "package.json"));
  mkdirSync(join(copy, "node_modules"));
  for (const name of readdirSync(join(repoRoot, "node_modules"))) {
    if (name !== ".cache") symlinkSync(join(repoRoot, "node_modules", name), join(copy, "node_modules", name));
  }
  cache = join(copy, "node_modules/.cache/typed-judgment-service");
});
afterAll(() => {
  rmSync(copy, { recursive: true, force: true });
});

describe("bin/judge.js", () => {
  it("transpiles src/ once into the cache and runs the CLI from there", async () => {
    const first = await judge("--help");
    expect(first.status, JSON.stringify(first)).toBe(0);
    expect(first.stdout, JSON.stringify(first)).toContain("Administer the Typed Judgment Service");
    expect(keys(), "one cached copy").toHaveLength(1);
    const [key] = keys();
    expect(readFileSync(join(cache, key, "src/cli/main.js"), "utf8")).toContain("Administer the Typed Judgment Service");
    const again = await judge("--help");
    expect(again.stdout, JSON.stringify(again)).toBe(first.stdout);
    expect(keys(), "the same copy reused").toEqual([key]);
  });

  it("sees a changed source at once: a new key, never the old copy", async () => {
    const main = join(copy, "src/cli/program.ts");
    writeFileSync(main, readFileSync(main, "utf8").replace("Administer the Typed Judgment Service", "Administer the edited service"));
    const run = await judge("--help");
    expect(run.stdout, JSON.stringify(run)).toContain("Administer the edited service");
    expect(keys(), "the old copy is kept a day (a running process may import from it)").toHaveLength(2);
  });

  it("runs through tsx where the cache cannot be written", async () => {
    // A file where the cache's folder would go (a permission would not stop root, who runs CI).
    rmSync(join(copy, "node_modules/.cache"), { recursive: true, force: true });
    writeFileSync(join(copy, "node_modules/.cache"), "");
    const main = join(copy, "src/cli/program.ts");
    writeFileSync(main, readFileSync(main, "utf8").replace("Administer the edited service", "Administer the read-only service"));
    const run = await judge("--help");
    expect(run.status, JSON.stringify(run)).toBe(0);
    expect(run.stdout, JSON.stringify(run)).toContain("Administer the read-only service");
  });
});
