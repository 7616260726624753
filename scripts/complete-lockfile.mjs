#!/usr/bin/env node
/**
 * Completes package-lock.json with the optional platform packages a partial npm mirror lacks.
 *
 * Some registries (this project's build machines use one) hold only the packages for their own
 * platform, e.g. @node-llama-cpp/linux-x64@3.22.1 but not @node-llama-cpp/mac-x64@3.22.1.
 * `npm install` then leaves those optional dependencies out of the lockfile, and `npm ci`
 * refuses the lockfile as out of sync. An entry with the package's os/cpu lets `npm ci` skip it
 * on other platforms and fetch it from the public registry where it applies.
 *
 *   npm install --package-lock-only && node scripts/complete-lockfile.mjs
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const npmView = (spec) =>
  JSON.parse(execFileSync("npm", ["view", spec, "os", "cpu", "libc", "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }) || "{}");

let added = 0;
for (const [where, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const path = `node_modules/${name}`;
    if (lock.packages[path] || lock.packages[`${where}/${path}`]) continue;
    // The platform constraints of a package do not change between versions: read them from
    // the newest version the registry at hand has.
    const platform = npmView(name);
    lock.packages[path] = { version, ...platform, optional: true };
    console.log(`added ${name}@${version} ${JSON.stringify(platform)}`);
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
console.log(`${added} entries added`);
