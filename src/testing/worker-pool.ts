import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import type { WorkerTask } from "./billing-worker.js";

/**
 * Child processes that speak one JSON line per message on stdout (see billing-worker.ts and
 * server-process.ts): spawned through tsx, each a separate OS process with its own database
 * connection, so the tests prove what holds across processes and not just across promises.
 */
export interface LineProcess {
  readonly pid: number;
  /** The next line the process prints, parsed as JSON ("ready" as the string). */
  next(): Promise<unknown>;
  send(message: unknown): void;
  /** SIGKILL: no clean-up code runs, as when the machine or the process dies. */
  kill(): Promise<void>;
  /** Closes stdin (the worker exits cleanly) and waits for the exit. */
  close(): Promise<void>;
  stderr(): string;
}

export function startLineProcess(script: string, args: string[]): LineProcess {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  const queued: string[] = [];
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  let exited: Error | undefined;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(line);
    else queued.push(line);
  });
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = new Error(`process ${script} exited (code ${code}, signal ${signal}); stderr:\n${stderr}`);
      for (const waiter of waiting.splice(0)) waiter.reject(exited);
      resolve();
    }),
  );
  return {
    pid: child.pid!,
    async next() {
      const line =
        queued.shift() ??
        (await new Promise<string>((resolve, reject) => {
          if (exited) reject(exited);
          else waiting.push({ resolve, reject });
        }));
      try {
        return JSON.parse(line);
      } catch {
        return line;
      }
    },
    send(message) {
      child.stdin!.write(JSON.stringify(message) + "\n");
    },
    async kill() {
      if (!exited) child.kill("SIGKILL");
      await exit;
    },
    async close() {
      child.stdin!.end();
      await exit;
    },
    stderr: () => stderr,
  };
}

export const BILLING_WORKER = fileURLToPath(new URL("./billing-worker.ts", import.meta.url));
export const SERVER_PROCESS = fileURLToPath(new URL("./server-process.ts", import.meta.url));

export interface WorkerPool {
  readonly workers: LineProcess[];
  /** Sends the task to every worker at once and collects each one's answer (rejects on { error }). */
  run<T>(task: WorkerTask | ((index: number) => WorkerTask)): Promise<T[]>;
  /** Moves every worker to another database (or to none), without the seconds a new process takes. */
  open(database: WorkerDatabase | null): Promise<void>;
  close(): Promise<void>;
}

export interface WorkerDatabase {
  location: string;
  schema?: string;
}

/** A billing worker's arguments for `database`. */
export const workerArgs = (database: WorkerDatabase): string[] => (database.schema ? [database.location, database.schema] : [database.location]);

/** `size` billing workers on the database (or on none yet), each ready (services built) before this resolves. */
export async function startWorkerPool(database: WorkerDatabase | null, size: number): Promise<WorkerPool> {
  const args = database ? workerArgs(database) : [];
  const workers = Array.from({ length: size }, () => startLineProcess(BILLING_WORKER, args));
  const pool: WorkerPool = {
    workers,
    async run<T>(task: WorkerTask | ((index: number) => WorkerTask)) {
      workers.forEach((worker, i) => worker.send(typeof task === "function" ? task(i) : task));
      const replies = await Promise.all(workers.map((worker) => worker.next()));
      const failed = replies.find((reply) => typeof reply === "object" && reply !== null && "error" in reply);
      if (failed) throw new Error(`a worker failed: ${JSON.stringify(failed)}\nall replies: ${JSON.stringify(replies)}`);
      return replies as T[];
    },
    async open(database) {
      await pool.run({ kind: "open", database: database && { location: database.location, schema: database.schema } });
    },
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
  try {
    const ready = await Promise.all(workers.map((worker) => worker.next()));
    if (!ready.every((line) => line === "ready")) throw new Error(`workers not ready: ${JSON.stringify(ready)}`);
  } catch (error) {
    await Promise.all(workers.map((worker) => worker.kill()));
    throw error;
  }
  return pool;
}
