import { randomBytes } from "node:crypto";
import type { Head } from "../../judgment/heads/index.js";
import type { Payer } from "../billing.js";
import type { JudgingDeps } from "../judging/judge.js";
import type { ModelChoice } from "../judging/request.js";
import type { ModelBinding, TaskSelection } from "../judging/task-heads.js";
import type { FitRecord, TaskRecord, TasksRepository, VersionRecord } from "../../store/types.js";
import type { TaskDefinition, TaskExample, TaskInput } from "./definition.js";
import { TaskInputError, TasksStoppingError } from "./errors.js";
import { readExample, runFit, type FitChoices, type FitContext, type FitJob } from "./fit.js";

/**
 * Tasks for the routes and the CLI (docs/concepts/tasks.md): create one from checked input,
 * start a fit (its first example read at once, so a fit that cannot be paid is refused with 402
 * like a request and leaves nothing behind; the rest in the background), and resolve the task
 * a request names into the heads judging applies.
 */

export interface TasksDeps {
  tasks: TasksRepository;
  judging: JudgingDeps;
  /** JUDGE_TASKS_PER_ACCOUNT. */
  maxTasksPerAccount: number;
}

export interface Task {
  record: TaskRecord;
  definition: TaskDefinition;
}

export interface TasksService {
  create(accountId: string, input: TaskInput): Promise<Task>;
  get(accountId: string, idOrName: string): Promise<Task | undefined>;
  list(accountId: string): Promise<TaskRecord[]>;
  remove(accountId: string, idOrName: string): Promise<boolean>;
  /** Starts a fit on `model`, paid by `payer`; resolves once the first example is read (or refused). */
  fit(task: Task, model: ModelChoice, payer: Payer, options?: FitChoices): Promise<FitRecord>;
  getFit(task: Task, fitId: string): Promise<FitRecord | undefined>;
  /** Newest first (the 20 newest unless `limit`). */
  fits(task: Task, limit?: number): Promise<FitRecord[]>;
  /** Newest first; all of them unless `limit`. */
  versions(task: Task, limit?: number): Promise<VersionRecord[]>;
  version(task: Task, version: number): Promise<VersionRecord | undefined>;
  /** The task a request names (`x_task`), with its versions' heads; undefined when the account has none of that id or name. */
  selection(accountId: string, idOrName: string): Promise<TaskSelection | undefined>;
  /** Fails the running fits of instances that went quiet (the sweeper calls it). */
  sweep(quietForMs: number, now: number): Promise<number>;
  /** Waits for this instance's fits to stop (they fail as interrupted). */
  close(): Promise<void>;
}

export function createTasksService(deps: TasksDeps): TasksService {
  const { tasks } = deps;
  // Which instance runs a fit: a fit whose owner stops writing progress is failed by any instance's sweep.
  const owner = `inst_${randomBytes(6).toString("hex")}`;
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  const taskOf = (record: TaskRecord): Task => ({ record, definition: JSON.parse(record.definition) as TaskDefinition });
  const get = async (accountId: string, idOrName: string) => {
    const record = await tasks.get(accountId, idOrName);
    return record && taskOf(record);
  };

  return {
    async create(accountId, input) {
      const record = await tasks.create({
        accountId,
        name: input.name,
        definition: JSON.stringify(input.definition),
        examples: input.examples.map((example) => JSON.stringify(example)),
        maxTasks: deps.maxTasksPerAccount,
      });
      return taskOf(record);
    },
    get,
    list: (accountId) => tasks.list(accountId),
    async remove(accountId, idOrName) {
      const task = await get(accountId, idOrName);
      return task ? tasks.remove(accountId, task.record.id) : false;
    },
    async fit(task, model, payer, options = {}) {
      if (stopping.signal.aborted) throw new TasksStoppingError("this instance is stopping; start the fit again on another");
      const examples = (await tasks.examples(task.record.id)).map((body) => JSON.parse(body) as TaskExample);
      if (examples.length === 0) throw new TaskInputError("the task has no examples to fit on");
      const seed = options.seed ?? 0;
      const fit = await tasks.startFit({
        taskId: task.record.id,
        accountId: payer.accountId,
        keyId: payer.keyId,
        model: model.id,
        total: examples.length,
        owner,
      });
      const job: FitJob = { fit, definition: task.definition, examples, model, payer, seed, heads: options.heads };
      const context: FitContext = { judging: deps.judging, tasks, signal: stopping.signal };
      let first: Awaited<ReturnType<typeof readExample>>;
      try {
        first = await readExample(context, job, 0);
      } catch (error) {
        // Refused as a request is (402, 502 …): the fit is taken back, and nothing was charged.
        await tasks.discardFit(fit.id).catch(() => undefined);
        throw error;
      }
      const work = runFit(context, job, first).finally(() => running.delete(work));
      running.add(work);
      return { ...fit, done: 0 };
    },
    getFit: (task, fitId) => tasks.getFit(task.record.id, fitId),
    fits: (task, limit) => tasks.fits(task.record.id, limit),
    versions: (task, limit) => tasks.versions(task.record.id, limit),
    version: (task, version) => tasks.version(task.record.id, version),
    async selection(accountId, idOrName) {
      const task = await get(accountId, idOrName);
      if (!task) return undefined;
      const versions = await tasks.versions(task.record.id);
      return {
        id: task.record.id,
        name: task.record.name,
        questions: task.definition.questions,
        abstainBelow: task.definition.abstainBelow,
        versions: versions.map((v) => ({
          version: v.version,
          binding: JSON.parse(v.binding) as ModelBinding,
          heads: JSON.parse(v.heads) as Record<string, Head>,
        })),
      };
    },
    sweep: (quietForMs, now) => tasks.sweepStale(now - quietForMs),
    async close() {
      stopping.abort();
      await Promise.allSettled([...running]);
    },
  };
}
