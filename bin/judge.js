#!/usr/bin/env node
// Runs the TypeScript CLI without a build step. Loading it through tsx's module hooks sends every
// module it imports across to the hooks' thread and back, and even as plain JavaScript, file by
// file, resolving and reading ~500 modules (kysely alone ships 262) is slow. So the first run
// bundles the CLI with esbuild (the transform tsx itself uses) into a cache keyed by the sources'
// content and the bundled packages' versions, and every later run imports that bundle. A changed
// source gives a new key, so the cache is never stale; where it cannot be written (a read-only
// install) or esbuild is missing, the CLI runs through tsx.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** The packages bundled into the CLI (see the plugin below); the rest load from node_modules. */
const BUNDLED = ["kysely", "zod", "hono", "@hono/zod-openapi", "@hono/zod-validator", "@asteasolutions/zod-to-openapi"];
// npm runs a package's bin (`npx judge serve`, a script "judge serve") through `sh -c`, and
// passes a SIGTERM or SIGINT on to that shell alone, which dies of it without passing it on:
// this process would go on serving as an orphan, holding its port. So under npm (which names
// what it runs in npm_lifecycle_event), a parent that goes away is taken as that signal, and
// the command stops as it would on its own (`serve` finishes what is in flight). Started any
// other way, a parent's exit means nothing (`judge serve &`, nohup) and nothing is watched.
if (process.env.npm_lifecycle_event) stopWhenOrphaned();
const main = await compiledEntry().catch(() => undefined);
if (main) {
  await import(pathToFileURL(main).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}

/** The bundled CLI entry in the cache, bundling it there first when its key is new. */
async function compiledEntry() {
  const src = join(root, "src");
  // Test files are never imported by the CLI; everything else may be (the console's pages too).
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(src.length + 1))
    .filter((file) => !/\.test\.ts$/.test(file))
    .sort();
  // The bundled packages' versions are part of the key too: an `npm ci` that changes one gives a
  // new bundle ("bundle": a key of its own apart from the file-by-file copies made before).
  const version = (name) => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
  const hash = createHash("sha256").update(`bundle ${process.version} ${["esbuild", ...BUNDLED].map((name) => `${name} ${version(name)}`).join(" ")}\n`);
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(src, file)))
      .update("\0");
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
  await build({
    entryPoints: [join(src, "cli/main.ts")],
    outdir: join(temp, "src/cli"),
    bundle: true,
    // Dynamic imports stay dynamic (the server, node-llama-cpp's ~0.35 s load): loaded only by
    // the commands that use them.
    splitting: true,
    format: "esm",
    platform: "node",
    target: `node${process.versions.node.split(".")[0]}`,
    logLevel: "silent",
    plugins: [
      {
        name: "judge-cli",
        setup(build) {
          // Bundled: the ES-module packages of many small files, where the time went. Every other
          // package (CommonJS ones find files beside their own code through __dirname; native
          // ones load binaries) is imported from node_modules as usual.
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            BUNDLED.some((name) => args.path === name || args.path.startsWith(`${name}/`)) ? undefined : { path: args.path, external: true },
          );
          // A module's import.meta.url names its source file, so that files found beside it (the
          // console's pages) and packages resolved from it are found where they are in src/.
          build.onLoad({ filter: /\.ts$/ }, (args) => ({
            contents: readFileSync(args.path, "utf8").replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
            loader: "ts",
          }));
        },
      },
    ],
  });
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

/** Sends this process a SIGTERM once its parent has gone (it is then another process's child). */
function stopWhenOrphaned() {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, "SIGTERM");
  }, 200);
  // The watch alone never keeps a finished command running.
  watch.unref();
}
