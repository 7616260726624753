import type { Database, Queries } from "./database.js";
import { StoreError } from "../record-errors.js";
import { newId } from "./random.js";
import type { RowOf } from "./schema.js";
import type { FitRecord, TaskRecord, TasksRepository, VersionRecord } from "./tasks-types.js";

const TASK_COLUMNS = ["id", "account_id", "name", "definition", "examples", "created_at"] as const;
const FIT_COLUMNS = [
  "id",
  "task_id",
  "account_id",
  "key_id",
  "model",
  "state",
  "total",
  "done",
  "input_tokens",
  "charged_micro",
  "error_code",
  "error_message",
  "version",
  "owner",
  "heartbeat_at",
  "created_at",
  "finished_at",
] as const;
const VERSION_COLUMNS = ["task_id", "version", "fit_id", "model", "binding", "heads", "report", "created_at"] as const;

/** Examples are written in batches: one INSERT per example would cost a round trip each on PostgreSQL. */
const EXAMPLES_PER_INSERT = 200;

const toTask = (row: RowOf<"tasks", (typeof TASK_COLUMNS)[number]>): TaskRecord => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  definition: row.definition,
  examples: row.examples,
  createdAt: row.created_at,
});

const toFit = (row: RowOf<"task_fits", (typeof FIT_COLUMNS)[number]>): FitRecord => ({
  id: row.id,
  taskId: row.task_id,
  accountId: row.account_id,
  keyId: row.key_id,
  model: row.model,
  state: row.state,
  total: row.total,
  done: row.done,
  inputTokens: row.input_tokens,
  chargedMicro: row.charged_micro,
  ...(row.error_code !== null && { error: { code: row.error_code, message: row.error_message ?? "" } }),
  ...(row.version !== null && { version: row.version }),
  owner: row.owner,
  heartbeatAt: row.heartbeat_at,
  createdAt: row.created_at,
  ...(row.finished_at !== null && { finishedAt: row.finished_at }),
});

const toVersion = (row: RowOf<"task_versions", (typeof VERSION_COLUMNS)[number]>): VersionRecord => ({
  taskId: row.task_id,
  version: row.version,
  fitId: row.fit_id,
  model: row.model,
  binding: row.binding,
  heads: row.heads,
  report: row.report,
  createdAt: row.created_at,
});

export function createTasksRepository(database: Database, now: () => number): TasksRepository {
  const { db } = database;
  const running = (trx: Queries, fitId: string) => trx.selectFrom("task_fits").select(FIT_COLUMNS).where("id", "=", fitId).where("state", "=", "running");

  return {
    async create(input) {
      const task: TaskRecord = {
        id: newId("task"),
        accountId: input.accountId,
        name: input.name,
        definition: input.definition,
        examples: input.examples.length,
        createdAt: now(),
      };
      try {
        await database.transaction(async (trx) => {
          // The account's row is locked first (a no-op UPDATE), so two creates on any number of
          // instances count the tasks one after the other and the quota holds exactly.
          const locked = await trx.updateTable("accounts").set({ id: input.accountId }).where("id", "=", input.accountId).executeTakeFirst();
          if (Number(locked.numUpdatedRows) === 0) throw new StoreError("account_not_found", `No account ${input.accountId}`);
          const { count } = await trx
            .selectFrom("tasks")
            .select((eb) => eb.fn.countAll<number>().as("count"))
            .where("account_id", "=", input.accountId)
            .executeTakeFirstOrThrow();
          if (Number(count) >= input.maxTasks) {
            throw new StoreError("task_quota_exceeded", `the account has ${count} tasks, its quota; delete one to create another`);
          }
          await trx
            .insertInto("tasks")
            .values({
              id: task.id,
              account_id: task.accountId,
              name: task.name,
              definition: task.definition,
              examples: task.examples,
              created_at: task.createdAt,
            })
            .execute();
          for (let start = 0; start < input.examples.length; start += EXAMPLES_PER_INSERT) {
            const rows = input.examples.slice(start, start + EXAMPLES_PER_INSERT).map((body, i) => ({ task_id: task.id, position: start + i, body }));
            await trx.insertInto("task_examples").values(rows).execute();
          }
        });
      } catch (error) {
        if (database.isUniqueViolation(error)) throw new StoreError("task_exists", `a task named ${input.name} already exists in this account`);
        throw error;
      }
      return task;
    },
    async get(accountId, idOrName) {
      const byId = await db.selectFrom("tasks").select(TASK_COLUMNS).where("account_id", "=", accountId).where("id", "=", idOrName).executeTakeFirst();
      const row =
        byId ?? (await db.selectFrom("tasks").select(TASK_COLUMNS).where("account_id", "=", accountId).where("name", "=", idOrName).executeTakeFirst());
      return row && toTask(row);
    },
    async list(accountId) {
      const rows = await db.selectFrom("tasks").select(TASK_COLUMNS).where("account_id", "=", accountId).orderBy("created_at").orderBy("id").execute();
      return rows.map(toTask);
    },
    async examples(taskId) {
      const rows = await db.selectFrom("task_examples").select("body").where("task_id", "=", taskId).orderBy("position").execute();
      return rows.map((row) => row.body);
    },
    async remove(accountId, taskId) {
      return database.transaction(async (trx) => {
        const busy = await trx.selectFrom("task_fits").select("id").where("task_id", "=", taskId).where("state", "=", "running").executeTakeFirst();
        if (busy) throw new StoreError("fit_in_progress", `the task is being fitted (${busy.id}); delete it when the fit has ended`);
        const result = await trx.deleteFrom("tasks").where("account_id", "=", accountId).where("id", "=", taskId).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      });
    },
    async startFit(input) {
      const at = now();
      const row = {
        id: newId("fit"),
        task_id: input.taskId,
        account_id: input.accountId,
        key_id: input.keyId ?? null,
        model: input.model,
        state: "running" as const,
        total: input.total,
        owner: input.owner,
        heartbeat_at: at,
        created_at: at,
      };
      try {
        await db.insertInto("task_fits").values(row).execute();
      } catch (error) {
        if (database.isUniqueViolation(error)) throw new StoreError("fit_in_progress", "a fit of this task is running; wait for it to end");
        if (database.isForeignKeyViolation(error)) throw new StoreError("task_not_found", `No task ${input.taskId}`);
        throw error;
      }
      const fit = await db.selectFrom("task_fits").select(FIT_COLUMNS).where("id", "=", row.id).executeTakeFirstOrThrow();
      return toFit(fit);
    },
    async progress(fitId, update) {
      // Also on a fit failed meanwhile (by a sweep): what its owner read was paid, and the record says so.
      const row = await db
        .updateTable("task_fits")
        .set({ done: update.done, input_tokens: update.inputTokens, charged_micro: update.chargedMicro, heartbeat_at: now() })
        .where("id", "=", fitId)
        .where("state", "in", ["running", "failed"])
        .returning(["state"])
        .executeTakeFirst();
      return row?.state === "running";
    },
    async succeed(fitId, version) {
      return database.transaction(async (trx) => {
        const fit = await running(trx, fitId).executeTakeFirst();
        if (!fit) return undefined;
        const { latest } = await trx
          .selectFrom("task_versions")
          .select((eb) => eb.fn.max<number | null>("version").as("latest"))
          .where("task_id", "=", fit.task_id)
          .executeTakeFirstOrThrow();
        const record: VersionRecord = { ...version, taskId: fit.task_id, version: Number(latest ?? 0) + 1, fitId, createdAt: now() };
        await trx
          .insertInto("task_versions")
          .values({
            task_id: record.taskId,
            version: record.version,
            fit_id: fitId,
            model: record.model,
            binding: record.binding,
            heads: record.heads,
            report: record.report,
            created_at: record.createdAt,
          })
          .execute();
        await trx
          .updateTable("task_fits")
          .set({ state: "succeeded", version: record.version, finished_at: record.createdAt })
          .where("id", "=", fitId)
          .execute();
        return record;
      });
    },
    async fail(fitId, error) {
      const result = await db
        .updateTable("task_fits")
        .set({ state: "failed", error_code: error.code, error_message: error.message, finished_at: now() })
        .where("id", "=", fitId)
        .where("state", "=", "running")
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async discardFit(fitId) {
      await db.deleteFrom("task_fits").where("id", "=", fitId).where("state", "=", "running").where("done", "=", 0).execute();
    },
    async getFit(taskId, fitId) {
      const row = await db.selectFrom("task_fits").select(FIT_COLUMNS).where("task_id", "=", taskId).where("id", "=", fitId).executeTakeFirst();
      return row && toFit(row);
    },
    async fits(taskId, limit = 20) {
      const rows = await db
        .selectFrom("task_fits")
        .select(FIT_COLUMNS)
        .where("task_id", "=", taskId)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
      return rows.map(toFit);
    },
    async versions(taskId, limit) {
      const query = db.selectFrom("task_versions").select(VERSION_COLUMNS).where("task_id", "=", taskId).orderBy("version", "desc");
      return (await (limit === undefined ? query : query.limit(limit)).execute()).map(toVersion);
    },
    async version(taskId, version) {
      const row = await db.selectFrom("task_versions").select(VERSION_COLUMNS).where("task_id", "=", taskId).where("version", "=", version).executeTakeFirst();
      return row && toVersion(row);
    },
    async sweepStale(quietSince) {
      const result = await db
        .updateTable("task_fits")
        .set({
          state: "failed",
          error_code: "fit_interrupted",
          error_message: "the instance fitting this task stopped before the fit ended; nothing more was charged; start the fit again",
          finished_at: now(),
        })
        .where("state", "=", "running")
        .where("heartbeat_at", "<", quietSince)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
