import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { periodContaining } from "../money/periods.js";
import { expectedCharge, reservationRows } from "../testing/billing-store.js";
import type { HitResult, SpendResult, WorkerTask } from "../testing/billing-worker.js";
import { newTestDatabase, STORE_ENGINES, type TestDatabase } from "../testing/databases.js";
import { BILLING_WORKER, startLineProcess, startWorkerPool, workerArgs, type WorkerPool } from "../testing/worker-pool.js";
import type { PlanInput, Reservation, Store } from "./types.js";

/**
 * The conditional statements hold across OS processes: four worker processes, each with its own
 * connection (SQLite) or pool (PostgreSQL) to the same database, race to spend one account;
 * exactly what it can pay is paid. Starting a worker process takes seconds, so one pool of
 * workers serves both engines (moved from one database to the next), and each engine's tests
 * share one database: every test races on an account (and a plan) of its own.
 */

const WORKERS = 4;
let pool: WorkerPool | undefined;
afterAll(() => pool?.close());

describe.each(STORE_ENGINES)(`${WORKERS} processes racing on one %s database`, (engine) => {
  let database: TestDatabase;
  let store: Store;
  let workers: WorkerPool;
  let clockOffset = 0;

  beforeAll(async () => {
    database = newTestDatabase(engine);
    store = await database.store({ now: () => Date.now() + clockOffset });
    if (pool) await pool.open(database);
    else pool = await startWorkerPool(database, WORKERS);
    workers = pool;
  });
  afterAll(async () => {
    // The workers let go of this database before it is dropped.
    await pool?.open(null);
    await database?.drop();
  });

  let plans = 0;
  async function account(plan: Partial<PlanInput>, balanceMicro = 0) {
    const created = await store.plans.create({ name: `p${plans++}`, requestsPerMinute: 1000, allowanceQuestions: 0, pricePerMillion: 1_000_000, ...plan });
    const { id } = await store.accounts.create({ name: "raced", plan: created.id });
    if (balanceMicro > 0) await store.ledger.topUp(id, balanceMicro);
    return id;
  }

  /** The account's balance and this period's usage: one query, with the period computed from `createdAt`. */
  async function usage(accountId: string, createdAt?: number) {
    createdAt ??= (await store.accounts.get(accountId))!.createdAt;
    return (await store.ledger.usage(accountId, periodContaining(createdAt, Date.now() + clockOffset)))!;
  }

  /** Runs the task on every worker while this process watches the account's columns. */
  async function race(accountId: string, task: (i: number) => WorkerTask) {
    const seen: string[] = [];
    let racing = true;
    const { createdAt } = (await store.accounts.get(accountId))!;
    // One read at a time, every 10 ms: reads that queue up or spin would take the CPU the racing
    // processes need (the machine may have 2 cores), and each read is a real query on PostgreSQL.
    const watching = (async () => {
      while (racing) {
        const u = await usage(accountId, createdAt);
        if (u.balanceMicro < 0 || u.reservedMicro < 0 || u.reservedMicro > u.balanceMicro || u.reserved < 0) seen.push(JSON.stringify(u));
        await sleep(10);
      }
    })();
    try {
      // All start at the same instant, so every process meets the others' locks from the first statement.
      const startAt = Date.now() + 300;
      // Each hold lasts a millisecond, as if the model ran: without it one process can take every
      // hold while SQLite's busy handler keeps the others asleep, and no race happens at all.
      const results = await workers.run<SpendResult>((i) => ({ ...task(i), startAt, holdMs: 1 }) as WorkerTask);
      return { results, badStates: seen };
    } finally {
      racing = false;
      await watching;
    }
  }

  async function summary(accountId: string, results: SpendResult[]) {
    const entries = await store.ledger.entries(accountId, { limit: 500 });
    return {
      results,
      plan: results.reduce((n, r) => n + r.settled.plan, 0),
      balance: results.reduce((n, r) => n + r.settled.balance, 0),
      usage: await usage(accountId),
      entries: entries.length,
      charges: entries.filter((e) => e.kind === "charge").map((e) => e.amountMicro),
      planEntries: entries.filter((e) => e.kind === "plan").map((e) => e.questions),
      check: await store.ledger.check(),
    };
  }

  function expectSound(s: Awaited<ReturnType<typeof summary>>, badStates: string[]) {
    const message = JSON.stringify({ ...s, badStates }, null, 1);
    expect(badStates, message).toEqual([]);
    expect(s.check, message).toMatchObject({ ok: true, mismatches: [] });
    expect(s.usage, message).toMatchObject({ reserved: 0, reservedMicro: 0 });
    for (const r of s.results) {
      expect(r.refusal, message).toMatchObject({ ok: false, reason: "insufficient_funds" });
      if (r.lowestBalance !== null) expect(r.lowestBalance, message).toBeGreaterThanOrEqual(0);
    }
    const active = s.results.filter((r) => r.settled.plan + r.settled.balance + r.released > 0).length;
    expect(active, `only ${active} process(es) got any hold: no race happened\n${message}`).toBeGreaterThanOrEqual(2);
  }

  it("a balance that covers exactly k charges pays exactly k, to the micro-euro, and never goes negative", async () => {
    const price = 333_333;
    const charge = expectedCharge(1_000, price); // 334
    const k = 300;
    const id = await account({ pricePerMillion: price }, k * charge + charge - 1);
    const { results, badStates } = await race(id, (i) => ({
      kind: "spend",
      accountId: id,
      questions: 1,
      inputTokens: 1_000,
      releaseEvery: i % 2 ? 3 : undefined, // half the processes give some holds back, as failures do
    }));
    const s = await summary(id, results);
    expectSound(s, badStates);
    const message = JSON.stringify(s, null, 1);
    expect([s.plan, s.balance], message).toEqual([0, k]);
    expect(s.usage.balanceMicro, message).toBe(charge - 1);
    expect(s.charges, message).toEqual(Array(k).fill(-charge));
  });

  it("a plan allowance of k × Q questions answers exactly k requests of Q questions", async () => {
    const k = 200;
    const id = await account({ allowanceQuestions: k * 3 + 2 });
    const { results, badStates } = await race(id, (i) => ({
      kind: "spend",
      accountId: id,
      questions: 3,
      inputTokens: 10,
      releaseEvery: i % 2 ? undefined : 4,
    }));
    const s = await summary(id, results);
    expectSound(s, badStates);
    const message = JSON.stringify(s, null, 1);
    expect([s.plan, s.balance], message).toEqual([k, 0]);
    expect(s.usage, message).toMatchObject({ used: 3 * k, allowance: 3 * k + 2, balanceMicro: 0 });
    expect(s.planEntries, message).toEqual(Array(k).fill(3));
  });

  it("the allowance first, then the balance: exactly a plan requests and b balance requests", async () => {
    const [a, b, charge] = [120, 90, 50];
    const id = await account({ allowanceQuestions: a, pricePerMillion: 1_000_000 }, b * charge + charge - 1);
    const { results, badStates } = await race(id, (i) => ({
      kind: "spend",
      accountId: id,
      questions: 1,
      inputTokens: charge,
      releaseEvery: i === 0 ? 2 : undefined,
    }));
    const s = await summary(id, results);
    expectSound(s, badStates);
    const message = JSON.stringify(s, null, 1);
    expect([s.plan, s.balance], message).toEqual([a, b]);
    expect(s.usage, message).toMatchObject({ used: a, balanceMicro: charge - 1 });
  });

  it("a rate limit of L per minute lets exactly L attempts through, each with a distinct remaining count", async () => {
    const limit = 37;
    const id = await account({ requestsPerMinute: limit });
    const now = Date.now();
    const results = await workers.run<HitResult>({ kind: "hit", accountId: id, attempts: 25, now });
    const message = JSON.stringify(results);
    expect(
      results.reduce((n, r) => n + r.allowed, 0),
      message,
    ).toBe(limit);
    expect(
      results.reduce((n, r) => n + r.denied, 0),
      message,
    ).toBe(WORKERS * 25 - limit);
    const remaining = results.flatMap((r) => r.remaining).sort((x, y) => x - y);
    expect(remaining, message).toEqual(Array.from({ length: limit }, (_, i) => i));
  });

  it("a process killed between reserve and settle charges nothing: its hold stays until it expires, then the sweeper gives it back", async () => {
    const id = await account({ pricePerMillion: 1_000_000 }, 10_000);
    const doomed = startLineProcess(BILLING_WORKER, workerArgs(database));
    try {
      expect(await doomed.next()).toBe("ready");
      doomed.send({ kind: "hold", accountId: id, questions: 2, inputTokens: 700 });
      const reservation = (await doomed.next()) as Reservation;
      expect(reservation, JSON.stringify(reservation)).toMatchObject({ accountId: id, billedTo: "balance", amountMicro: 700 });
    } finally {
      await doomed.kill();
    }
    const rows = (await reservationRows(database)).filter((row) => row.account_id === id);
    expect(rows, "the killed process's reservation row survives it").toHaveLength(1);
    const [row] = rows;
    expect(await usage(id), "still held after the kill").toMatchObject({ balanceMicro: 10_000, reservedMicro: 700 });
    const check = await store.ledger.check();
    expect(check.ok, JSON.stringify(check)).toBe(true);
    expect((await store.billing.sweep()).reservations, "not expired yet: nothing to sweep").toBe(0);

    clockOffset = (row!.expires_at as number) - Date.now() + 1;
    try {
      expect((await store.billing.sweep()).reservations).toBe(1);
    } finally {
      clockOffset = 0;
    }
    const after = await summary(id, []);
    expect(after, JSON.stringify(after, null, 1)).toMatchObject({
      usage: { balanceMicro: 10_000, reservedMicro: 0 },
      charges: [],
      check: { ok: true },
    });
    expect(await reservationRows(database)).toEqual([]);
  });
});
