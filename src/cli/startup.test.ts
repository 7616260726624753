import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runInRepo } from "./test-helpers.js";

/**
 * What `judge --help` costs to start: the packages it loads and the road npx takes to it.
 * `npx judge` finds the command in node_modules/.bin, where npm links a workspace's bins, and
 * runs it at once. A `bin` in the root package.json would be found first and take npx's other
 * road: read the whole installed tree and install the project into npx's own cache before every
 * run (about 0.5 s more; docs/measurements/2026-12-04-cli-startup.md). So the command is the
 * `bin/` workspace's, and the root has none.
 */
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const manifest = (path: string) => JSON.parse(readFileSync(join(repoRoot, path), "utf8"));

describe("judge --help", () => {
  it("loads no database driver and no metrics registry: those load with the commands that use them", async () => {
    // Node names every CommonJS package it loads under NODE_DEBUG=module.
    const help = await runInRepo(process.execPath, ["bin/judge.js", "--help"], { NODE_DEBUG: "module" });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stderr).toContain("commander");
    for (const name of ["better-sqlite3", "pg", "ioredis", "prom-client"]) expect(help.stderr).not.toContain(`node_modules/${name}/`);
  });
});

describe("npx judge", () => {
  it("is the bin/ workspace's command, linked into node_modules/.bin, not the root's", () => {
    expect(manifest("package.json").bin).toBeUndefined();
    expect(manifest("package.json").workspaces).toEqual(["bin"]);
    expect(manifest("bin/package.json").bin).toEqual({ judge: "judge.js" });
    expect(realpathSync(join(repoRoot, "node_modules/.bin/judge"))).toBe(realpathSync(join(repoRoot, "bin/judge.js")));
  });

  it("runs the CLI", async () => {
    const help = await runInRepo("npx", ["--offline", "judge", "--help"]);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("Administer the Typed Judgment Service");
  });
});
