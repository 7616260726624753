#!/usr/bin/env node
// Runs the TypeScript CLI without a build step. Loading it through tsx's module hooks costs
// about a second a start (every module it imports crosses to the hooks' thread and back), so the
// first run transpiles src/ with esbuild (the transform tsx itself uses) into a cache keyed by
// the sources' content, and every later run imports that plain JavaScript (about half the start
// time: `judge keys list` and friends, and the test suite's hundreds of CLI runs). A changed
// source gives a new key, so the cache is never stale; where it cannot be written (a read-only
// install) or esbuild is missing, the CLI runs through tsx as before.
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const main = await compiledEntry().catch(() => undefined);
if (main) {
  await import(pathToFileURL(main).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}

/** The transpiled CLI entry in the cache, transpiling src/ there first when its key is new. */
async function compiledEntry() {
  const src = join(root, "src");
  // Test files are never imported by the CLI; everything else may be (the console's pages too).
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(src.length + 1))
    .filter((file) => !/\.test\.ts$/.test(file))
    .sort();
  const { version } = JSON.parse(readFileSync(join(root, "node_modules/esbuild/package.json"), "utf8"));
  const hash = createHash("sha256").update(`${process.version} esbuild ${version}\n`);
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(join(src, file))).update("\0");
  const cache = join(root, "node_modules/.cache/typed-judgment-service");
  const dir = join(cache, `cli-${hash.digest("hex").slice(0, 16)}`);
  const entry = join(dir, "src/cli/main.js");
  if (existsSync(entry)) {
    // Marks the copy as in use, so the clean-up below spares it for another day.
    utimesSync(dir, new Date(), new Date());
    return entry;
  }

  const { build } = await import("esbuild");
  const temp = `${dir}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  const sources = files.filter((file) => file.endsWith(".ts"));
  await build({
    entryPoints: sources.map((file) => join(src, file)),
    outdir: join(temp, "src"),
    outbase: src,
    format: "esm",
    platform: "node",
    target: `node${process.versions.node.split(".")[0]}`,
    logLevel: "silent",
  });
  // Files read at run time beside the code (the console's pages).
  for (const file of files.filter((f) => !f.endsWith(".ts"))) {
    mkdirSync(dirname(join(temp, "src", file)), { recursive: true });
    cpSync(join(src, file), join(temp, "src", file));
  }
  // Modules resolve from the cache as from src/ (node_modules above it); the package's type too.
  writeFileSync(join(temp, "package.json"), JSON.stringify({ type: "module" }));
  try {
    renameSync(temp, dir);
  } catch {
    // Another run renamed its copy first: the same sources, so either will do.
    rmSync(temp, { recursive: true, force: true });
  }
  // Other keys' copies once unused for a day (a process started from one may still import from it).
  for (const old of readdirSync(cache)) {
    const path = join(cache, old);
    if (path !== dir && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
  }
  return existsSync(entry) ? entry : undefined;
}
