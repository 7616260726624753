import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { FitOptions, Head, LabelledRow, QuestionReport } from "../../judgment/heads/index.js";

/**
 * Fits a task's heads off the event loop: one worker thread per fit, fed a question at a time,
 * ended with the fit. The worker runs fit-worker.ts through tsx's loader, registered inside it
 * (the service runs its TypeScript without a build step, and a worker does not inherit the
 * loader). The same pure fitQuestionHead as in process, so the heads are the same to the bit.
 */
export interface HeadFitter {
  fit(rows: readonly LabelledRow[], options: FitOptions): Promise<{ head: Head; report: QuestionReport }>;
  close(): Promise<void>;
}

const here = import.meta.url;
const workerFile = new URL("./fit-worker.ts", here).href;
// tsx/esm/api as an ES module: require.resolve finds its CommonJS twin, which registers the CommonJS hooks.
const tsxApi = () => pathToFileURL(createRequire(here).resolve("tsx/esm/api")).href.replace(/\.cjs$/, ".mjs");

export function workerHeadFitter(signal: AbortSignal): HeadFitter {
  const bootstrap = `import(${JSON.stringify(tsxApi())}).then(({ register }) => { register(); return import(${JSON.stringify(workerFile)}); })`;
  const worker = new Worker(bootstrap, { eval: true });
  let failure: Error | undefined;
  const waiting = new Set<(error: Error) => void>();
  const fail = (error: Error) => {
    failure ??= error;
    for (const reject of waiting) reject(failure);
    waiting.clear();
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the fitting thread ended (exit code ${code})`)));
  const onAbort = () => void worker.terminate();
  signal.addEventListener("abort", onAbort, { once: true });
  let queue = Promise.resolve();
  return {
    fit(rows, options) {
      const result = queue.then(
        () =>
          new Promise<{ head: Head; report: QuestionReport }>((resolve, reject) => {
            if (failure) return reject(failure);
            waiting.add(reject);
            worker.once("message", (message: { head: Head; report: QuestionReport } | { error: string }) => {
              waiting.delete(reject);
              if ("error" in message) reject(new Error(message.error));
              else resolve(message);
            });
            worker.postMessage({ rows, options });
          }),
      );
      queue = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
    async close() {
      signal.removeEventListener("abort", onAbort);
      await worker.terminate();
    },
  };
}
