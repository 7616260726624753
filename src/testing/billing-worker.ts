/**
 * A separate OS process with the services of a shared database (a SQLite file, or a PostgreSQL
 * schema), for the multi-process proof (src/store/billing.processes.test.ts). Run as
 * `node --import tsx billing-worker.ts [<db location> [<schema>]]`.
 * It prints "ready", then reads one JSON task per line on stdin and answers each with one JSON
 * line on stdout ({ error } if the task threw). Started and driven by worker-pool.ts. Starting
 * a process takes seconds on a small machine, so one can move to another database ("open").
 */
import { createInterface } from "node:readline";
import { parseConfig } from "../config/environment.js";
import { buildServices, type Services } from "../services/build.js";
import { InsufficientFundsError } from "../services/errors.js";
import { payerOf } from "./billing-store.js";

export type WorkerTask =
  /**
   * Reserve, wait `holdMs` (where the model would run), then settle (or every `releaseEvery`-th
   * hold, release), until a reservation is refused.
   */
  | {
      kind: "spend";
      accountId: string;
      questions: number;
      inputTokens: number;
      releaseEvery?: number;
      startAt?: number;
      holdMs?: number;
    }
  /** Closes the current database's services and opens `database`'s (none if null). */
  | { kind: "open"; database: { location: string; schema?: string } | null }
  /** `attempts` rate-limit hits at the fixed time `now`. */
  | { kind: "hit"; accountId: string; attempts: number; now: number }
  /** One reservation (the Reservation is the reply), then held forever: the process is to be killed. */
  | { kind: "hold"; accountId: string; questions: number; inputTokens: number };

export interface SpendResult {
  settled: { plan: number; balance: number };
  released: number;
  /** Lowest balance (and highest hold) this process saw in any standing it was given. */
  lowestBalance: number;
  refusal: unknown;
}

export interface HitResult {
  allowed: number;
  denied: number;
  /** x-ratelimit-remaining of each allowed hit. */
  remaining: number[];
}

/** A bound on the spend loop, far above any test's expected count, so a bug cannot spin forever. */
const MAX_ITERATIONS = 20_000;

let fixedNow: number | undefined;
const open = (location: string, schema?: string) =>
  buildServices(parseConfig({ JUDGE_DB: location, JUDGE_DB_SCHEMA: schema }), { now: () => fixedNow ?? Date.now() });
const [location, schema] = process.argv.slice(2);
let opened: Services | undefined = location ? await open(location, schema) : undefined;
const current = (): Services => {
  if (!opened) throw new Error("no database is open");
  return opened;
};

async function run(task: WorkerTask): Promise<unknown> {
  if (task.kind === "open") {
    await opened?.close();
    opened = undefined;
    if (task.database) opened = await open(task.database.location, task.database.schema);
    return { open: task.database };
  }
  const services = current();
  const { store } = services;
  switch (task.kind) {
    case "spend":
      return spend(task);
    case "hit": {
      fixedNow = task.now;
      const result: HitResult = { allowed: 0, denied: 0, remaining: [] };
      const payer = await payerOf(store, task.accountId);
      for (let i = 0; i < task.attempts; i++) {
        const decision = await services.limits.perMinute(payer);
        if (decision.allowed) {
          result.allowed++;
          result.remaining.push(decision.remaining);
        } else result.denied++;
      }
      fixedNow = undefined;
      return result;
    }
    case "hold": {
      const { questions, inputTokens } = task;
      const reservation = await services.billing.reserve(await payerOf(store, task.accountId), {
        questions,
        inputTokens,
        requestId: `req_hold_${process.pid}`,
      });
      setInterval(() => undefined, 60_000); // stay alive, holding, until killed
      return reservation;
    }
  }
}

async function spend(task: Extract<WorkerTask, { kind: "spend" }>): Promise<SpendResult> {
  const result: SpendResult = { settled: { plan: 0, balance: 0 }, released: 0, lowestBalance: Number.POSITIVE_INFINITY, refusal: undefined };
  let holds = 0;
  // Sleep until the agreed instant, so the processes start racing together.
  const sleep = (ms: number) => ms > 0 && Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  sleep((task.startAt ?? 0) - Date.now());
  const services = current();
  const payer = await payerOf(services.store, task.accountId);
  for (let i = 0; i < MAX_ITERATIONS; i++) {
    const { questions, inputTokens } = task;
    let reservation;
    try {
      reservation = await services.billing.reserve(payer, { questions, inputTokens, requestId: `req_${process.pid}_${i}` });
    } catch (error) {
      if (!(error instanceof InsufficientFundsError)) throw error;
      result.refusal = { ok: false, reason: "insufficient_funds", standing: error.standing };
      return result;
    }
    // Outside any transaction, as the model runs: the other processes take their holds meanwhile.
    sleep(task.holdMs ?? 0);
    holds++;
    if (task.releaseEvery && holds % task.releaseEvery === 0) {
      if (!(await services.billing.release(reservation.id))) throw new Error(`release of our own hold failed at ${i}`);
      result.released++;
      continue;
    }
    const settled = await services.billing.settle(reservation);
    if (!settled) throw new Error(`settle of our own hold failed at ${i}`);
    result.settled[settled.billedTo]++;
    result.lowestBalance = Math.min(result.lowestBalance, settled.standing.balanceMicro);
  }
  throw new Error(`still spending after ${MAX_ITERATIONS} reservations`);
}

const lines = createInterface({ input: process.stdin });
lines.on("line", async (line) => {
  let reply: unknown;
  try {
    reply = await run(JSON.parse(line) as WorkerTask);
  } catch (error) {
    reply = { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
lines.on("close", () => {
  void (opened?.close() ?? Promise.resolve()).then(() => process.exit(0));
});
process.stdout.write("ready\n");
