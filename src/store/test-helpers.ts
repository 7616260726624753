import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh directory per test so file-backed databases never leak between tests. */
export function useTempDir(): { dir: () => string; cleanup: () => void } {
  let current: string | undefined;
  return {
    dir() {
      current ??= mkdtempSync(join(tmpdir(), "judge-store-"));
      return current;
    },
    cleanup() {
      if (current) rmSync(current, { recursive: true, force: true });
      current = undefined;
    },
  };
}

/** A controllable clock for timestamp assertions. */
export function fakeClock(start = 1_700_000_000_000) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}
