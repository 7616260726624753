import type BetterSqlite3 from "better-sqlite3";
import type { Queries } from "./database.js";

type Work = (trx: Queries) => Promise<unknown>;

interface Job {
  work: Work;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { job: Job; ok: true; value: unknown } | { job: Job; ok: false; error: unknown };

/**
 * Group commit for SQLite: the transactions that arrive while one batch runs are run together
 * in the next, one after another inside a single BEGIN IMMEDIATE … COMMIT, each in a savepoint
 * of its own. Each sees everything before it, exactly as if it had run alone in that order, and
 * one that fails is rolled back to its savepoint without touching the others. A commit is what
 * SQLite pays for (file locks, a WAL frame per changed page: the accounts row every request
 * touches is written once per batch instead of once per request), so under load a batch of N
 * costs little more than one. Nobody hears of a result before its batch is committed.
 */
export function createGroupCommit(raw: BetterSqlite3.Database, db: Queries) {
  const run = (text: string) => {
    const statement = raw.prepare(text);
    return () => void statement.run();
  };
  const [begin, commit, rollback] = [run("BEGIN IMMEDIATE"), run("COMMIT"), run("ROLLBACK")];
  const [savepoint, release, rollbackTo] = [run("SAVEPOINT job"), run("RELEASE job"), run("ROLLBACK TO job")];
  let queue: Job[] = [];
  let scheduled = false;

  /** One job in its savepoint; false when the whole transaction is gone (SQLite rolled it back itself). */
  async function runJob(job: Job, connection: Queries, outcomes: Outcome[]): Promise<boolean> {
    savepoint();
    try {
      const value = await job.work(connection);
      release();
      outcomes.push({ job, ok: true, value });
    } catch (error) {
      if (!raw.inTransaction) {
        outcomes.push({ job, ok: false, error });
        return false;
      }
      rollbackTo();
      release();
      outcomes.push({ job, ok: false, error });
    }
    return true;
  }

  async function runBatch(jobs: Job[], connection: Queries): Promise<void> {
    try {
      begin();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    const outcomes: Outcome[] = [];
    let next = 0;
    while (next < jobs.length && (await runJob(jobs[next++], connection, outcomes)));
    if (!raw.inTransaction) {
      // An error that ends the transaction (a full disk, an I/O error) undid every job before
      // it too; they fail with it, and the jobs not yet run go to the next batch.
      const cause = outcomes.at(-1)!;
      const error = cause.ok ? new Error("the transaction ended unexpectedly") : cause.error;
      for (const { job } of outcomes) job.reject(job === cause.job && !cause.ok ? cause.error : error);
      requeue(jobs.slice(next));
      return;
    }
    try {
      commit();
    } catch (error) {
      if (raw.inTransaction) rollback();
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const outcome of outcomes) {
      if (outcome.ok) outcome.job.resolve(outcome.value);
      else outcome.job.reject(outcome.error);
    }
  }

  function requeue(jobs: Job[]): void {
    if (jobs.length === 0) return;
    queue = jobs.concat(queue);
    schedule();
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    // After this turn's I/O, so the requests that arrive meanwhile join the batch. Kysely's
    // connection mutex keeps batches (and every Kysely query) from overlapping.
    setImmediate(() => {
      let jobs: Job[] = [];
      const take = () => {
        jobs = queue;
        queue = [];
        scheduled = false;
        return jobs;
      };
      db.connection()
        .execute((connection) => runBatch(take(), connection))
        // Only what cannot happen in a batch's own handling: no connection (the store is closed),
        // or a savepoint statement failing. Every job still waiting hears of it.
        .catch((error: unknown) => {
          if (raw.open && raw.inTransaction) rollback();
          for (const job of jobs.length > 0 ? jobs : take()) job.reject(error);
        });
    });
  }

  return {
    transaction<T>(work: (trx: Queries) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}
