import { readFileSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";

/**
 * Which test files are unit tests (run in parallel) and which are system tests (one file at a
 * time): a test is a system test when it, or the test support it imports (testing/, test
 * helpers; followed transitively), opens or serves a port, loads a model, opens a database,
 * drives a browser or starts a process or thread. Computed from the code, so a new test lands in
 * the right part without a list; production modules are not followed (importing a library's
 * types is not running it).
 */

const SYSTEM_MARKERS = [
  // Modules that start processes, threads, servers or connections.
  /from\s+["'](node:)?(child_process|net|http|https|http2|worker_threads|cluster|dgram)["']/,
  /from\s+["'](better-sqlite3|pg|ioredis|playwright-core|@hono\/node-server|openai|@typesafe-ai\/sdk)["']/,
  // What the test support does with them, and the real engine and stores.
  /\b(fetch|spawn|execFile|execFileSync|spawnSync|fork|getLlama|createLlamaEngine|readyTinyEngine|startTestServer|startHttpServer|buildServices|createStore|newTestDatabase|tinyFixturePath)\s*\(/,
  /\.listen\(/,
];

const RELATIVE_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^"';]*?\sfrom\s+)?["'](\.[^"']+)["']|\bimport\(\s*["'](\.[^"']+)["']\s*\)/gm;

const isTestSupport = (path: string) => path.includes(`${sep}testing${sep}`) || /(\.test|test-helpers)\.ts$/.test(path);

/** Whether the test file at `path` is a system test. */
export function isSystemTest(path: string, seen = new Set<string>()): boolean {
  if (seen.has(path)) return false;
  seen.add(path);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return false;
  }
  if (SYSTEM_MARKERS.some((marker) => marker.test(text))) return true;
  for (const match of text.matchAll(RELATIVE_IMPORT)) {
    const target = resolve(dirname(path), (match[1] ?? match[2]).replace(/\.js$/, ".ts"));
    if (isTestSupport(target) && isSystemTest(target, seen)) return true;
  }
  return false;
}
