import type { Question } from "../judgment/schema.js";
import { formatEuros } from "../money/money.js";
import type { Task } from "../services/tasks/service.js";
import type { FitRecord, VersionRecord } from "../services/types.js";
import { isoTime } from "./money.js";

/**
 * A task, its fits and versions as /v1/tasks… writes them (docs/interface/tasks.md): snake_case,
 * ISO times, money as an exact decimal string. The route's schema describes these shapes, and
 * `judge tasks … --json` prints them too, so a script moves between the CLI and HTTP unchanged.
 */

export interface FitJson {
  id: string;
  state: FitRecord["state"];
  model: string;
  examples: number;
  examples_read: number;
  input_tokens: number;
  charged_eur: string;
  version: number | null;
  error: { code: string; message: string } | null;
  created_at: string;
  finished_at: string | null;
}

export interface VersionSummaryJson {
  version: number;
  model: string;
  fit: string;
  created_at: string;
  heads: Record<string, string>;
}

export interface VersionJson extends VersionSummaryJson {
  binding: { model: string; weights: string; promptStyle: string; template: string };
  report: Record<string, unknown>;
}

export interface TaskJson {
  id: string;
  name: string;
  questions: Record<string, Question>;
  abstain_below: Record<string, number>;
  examples: number;
  created_at: string;
  versions: VersionSummaryJson[];
  latest_fit: FitJson | null;
}

export function fitJson(fit: FitRecord): FitJson {
  return {
    id: fit.id,
    state: fit.state,
    model: fit.model,
    examples: fit.total,
    examples_read: fit.done,
    input_tokens: fit.inputTokens,
    charged_eur: formatEuros(fit.chargedMicro),
    version: fit.version ?? null,
    error: fit.error ?? null,
    created_at: isoTime(fit.createdAt),
    finished_at: fit.finishedAt === undefined ? null : isoTime(fit.finishedAt),
  };
}

export function versionSummaryJson(version: VersionRecord): VersionSummaryJson {
  const heads = JSON.parse(version.heads) as Record<string, { kind: string }>;
  return {
    version: version.version,
    model: version.model,
    fit: version.fitId,
    created_at: isoTime(version.createdAt),
    heads: Object.fromEntries(Object.entries(heads).map(([id, head]) => [id, head.kind])),
  };
}

export function versionJson(version: VersionRecord): VersionJson {
  return { ...versionSummaryJson(version), binding: JSON.parse(version.binding), report: JSON.parse(version.report) };
}

/** The task with its versions (newest first) and its latest fit. */
export function taskJson(task: Task, versions: readonly VersionRecord[], latest: FitRecord | undefined): TaskJson {
  return {
    id: task.record.id,
    name: task.record.name,
    questions: task.definition.questions,
    abstain_below: task.definition.abstainBelow,
    examples: task.record.examples,
    created_at: isoTime(task.record.createdAt),
    versions: versions.map(versionSummaryJson),
    latest_fit: latest ? fitJson(latest) : null,
  };
}
