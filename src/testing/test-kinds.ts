import { readFileSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";

/**
 * Which part of the suite a test file runs in (vitest.config.ts):
 * - unit: no port, model, database, browser, process or thread;
 * - system: real servers, databases, processes and the tiny fixture models;
 * - models: CPU-bound work on real weights (real models, gpu-check.sh); in the same pool as the
 *   system files (three at a time), started first, longest first, so that none is left running
 *   alone at the end;
 * - timed: files that assert on elapsed time (marked `@lane timed` in a comment); after
 *   everything else, two at a time on the 2 cores, so no real-weight or system file's load can
 *   fail them (their bounds are loose, or counted rather than timed, where two side by side
 *   could skew them);
 * - vllm: files that use the real vLLM (testing/vllm.ts, `requireRealVllm(`), last, with nothing
 *   beside them: they share one vLLM server (its start, 40–160 s on 2 cores, paid once), which
 *   takes both cores while it computes.
 *
 * A test is a system test when it, or the test support it imports (testing/, test
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

/** Real weights or a whole benchmark script: minutes of CPU, one file at a time. */
const MODEL_MARKERS = [/\bavailableRealModels\s*\(/, /gpu-check\.sh/, /@lane models\b/];
const TIMED_MARKER = /@lane timed\b/;
/** The real vLLM server (testing/vllm.ts). */
const VLLM_MARKER = /\brequireRealVllm\s*\(/;

export type TestLane = "unit" | "system" | "models" | "timed" | "vllm";

/** The part of the suite the test file at `path` runs in (see the comment at the top). */
export function testLane(path: string): TestLane {
  if (!isSystemTest(path)) return "unit";
  const text = readFileSync(path, "utf8");
  if (VLLM_MARKER.test(text)) return "vllm";
  if (TIMED_MARKER.test(text)) return "timed";
  return MODEL_MARKERS.some((marker) => marker.test(text)) ? "models" : "system";
}

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
