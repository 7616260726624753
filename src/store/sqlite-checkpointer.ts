import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** How often the background thread copies the WAL back into the database file. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * Pages the WAL may reach before the serving connection checkpoints by itself: only if the
 * background thread has stopped (its own checkpoints keep the WAL far below this).
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * SQLite copies the WAL back into the database file (a checkpoint) every 1,000 pages, inside
 * whichever commit crosses that mark, and fsyncs both files there. better-sqlite3 is
 * synchronous, so that commit stalls the event loop for the length of two fsyncs: every request
 * in flight waits (tens of milliseconds on an ordinary disk, the service's worst latencies).
 * Here a thread of its own, with a connection of its own, runs PASSIVE checkpoints (they never
 * block readers or writers) every second instead; the serving connection only falls back to
 * checkpointing itself if the WAL grows far past that.
 */
export function startBackgroundCheckpoints(path: string): { stop(): Promise<void> } {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  // Plain CommonJS evaluated in the thread: it needs no TypeScript loader.
  const source = `
    const { workerData } = require("node:worker_threads");
    const Database = require(workerData.driver);
    const db = new Database(workerData.path, { fileMustExist: true });
    db.pragma("busy_timeout = 1000");
    setInterval(() => {
      try { db.pragma("wal_checkpoint(PASSIVE)"); } catch { /* busy or gone: the next tick tries again */ }
    }, workerData.intervalMs);
  `;
  const worker = new Worker(source, { eval: true, workerData: { driver, path, intervalMs: CHECKPOINT_INTERVAL_MS } });
  // A thread that fails leaves the fallback in place; it must never take the process down.
  worker.on("error", () => undefined);
  worker.unref();
  return {
    async stop() {
      await worker.terminate();
    },
  };
}
