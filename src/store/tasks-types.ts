/**
 * Tasks as the store keeps them. The store knows nothing of questions or heads: the definition,
 * a version's binding, heads and report are JSON the tasks service writes and reads.
 */
export interface TaskRecord {
  id: string;
  accountId: string;
  name: string;
  /** JSON: the task's questions and settings (services/tasks/definition.ts). */
  definition: string;
  examples: number;
  createdAt: number;
}

export type FitState = "running" | "succeeded" | "failed";

export interface FitRecord {
  id: string;
  taskId: string;
  accountId: string;
  keyId: string | null;
  model: string;
  state: FitState;
  /** Examples to read, and read so far. */
  total: number;
  done: number;
  inputTokens: number;
  chargedMicro: number;
  error?: { code: string; message: string };
  /** The version it wrote, once succeeded. */
  version?: number;
  /** The instance running it, and when it last said so: a fit whose owner went quiet is failed by the sweep. */
  owner: string;
  heartbeatAt: number;
  createdAt: number;
  finishedAt?: number;
}

export interface VersionRecord {
  taskId: string;
  version: number;
  fitId: string;
  model: string;
  /** JSON: what the heads are bound to (model, its file's hash, prompt style, template). */
  binding: string;
  heads: string;
  report: string;
  createdAt: number;
}

export interface NewTask {
  accountId: string;
  name: string;
  definition: string;
  /** Each example's JSON, in upload order. */
  examples: readonly string[];
  /** The account's quota of tasks: creating one more is refused with task_quota_exceeded. */
  maxTasks: number;
}

export interface NewFit {
  taskId: string;
  accountId: string;
  keyId?: string;
  model: string;
  total: number;
  owner: string;
}

export interface TasksRepository {
  /** Throws task_exists (the name is taken in the account) or task_quota_exceeded; all or nothing. */
  create(input: NewTask): Promise<TaskRecord>;
  /** By id first, then by name, within the account only: another account's task is not found. */
  get(accountId: string, idOrName: string): Promise<TaskRecord | undefined>;
  list(accountId: string): Promise<TaskRecord[]>;
  examples(taskId: string): Promise<string[]>;
  /** Deletes the task with its examples, fits and versions; false when there was none. Refused (fit_in_progress) while a fit runs. */
  remove(accountId: string, taskId: string): Promise<boolean>;
  /** Throws fit_in_progress when one is running for the task. */
  startFit(input: NewFit): Promise<FitRecord>;
  /** Progress of a fit, recorded even once a sweep failed it (the examples were paid); false when it is no longer running. */
  progress(fitId: string, update: { done: number; inputTokens: number; chargedMicro: number }): Promise<boolean>;
  /** Ends a running fit with a new version (numbered next, in the same transaction); false when it was no longer running. */
  succeed(fitId: string, version: Omit<VersionRecord, "taskId" | "version" | "fitId" | "createdAt">): Promise<VersionRecord | undefined>;
  fail(fitId: string, error: { code: string; message: string }): Promise<boolean>;
  /** Takes back a running fit that was refused before it read anything (its first example could not be paid). */
  discardFit(fitId: string): Promise<void>;
  getFit(taskId: string, fitId: string): Promise<FitRecord | undefined>;
  /** Newest first. */
  fits(taskId: string, limit?: number): Promise<FitRecord[]>;
  /** Newest first; all of them unless `limit`. */
  versions(taskId: string, limit?: number): Promise<VersionRecord[]>;
  version(taskId: string, version: number): Promise<VersionRecord | undefined>;
  /** Fails running fits whose owner has not said anything since `quietSince` (an instance that stopped); how many. */
  sweepStale(quietSince: number): Promise<number>;
}
