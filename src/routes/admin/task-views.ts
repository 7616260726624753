import { z } from "@hono/zod-openapi";
import { Question } from "../../judgment/schema.js";
import { formatEuros } from "../../money/money.js";
import { classesOf } from "../../services/tasks/definition.js";
import type { Task } from "../../services/tasks/service.js";
import type { FitRecord, VersionRecord } from "../../services/types.js";

/**
 * The admin API's JSON of a tenant's tasks (docs/concepts/tasks.md): what GET
 * /admin/v1/accounts/{id}/tasks and …/tasks/{task} answer. Money twice (µ€ and exact euros) and
 * times in ISO 8601 UTC, as every admin response; a version's report is the tasks service's own
 * JSON, as GET /v1/tasks/{task}/versions/{version} gives it to the tenant.
 */

const iso = (ms: number) => new Date(ms).toISOString();
const Time = z.string().openapi({ description: "ISO 8601, UTC." });

export const AdminTaskFit = z
  .object({
    id: z.string(),
    state: z.enum(["running", "succeeded", "failed"]),
    model: z.string(),
    key_id: z.string().nullable().openapi({ description: "The API key that started it (null: started without one, from the CLI)." }),
    examples: z.number().int().openapi({ description: "Examples to read (progress: examples_read of examples)." }),
    examples_read: z.number().int(),
    input_tokens: z.number().int().openapi({ description: "Tokens read and billed so far." }),
    charged_micro: z.number().int().openapi({ description: "What the balance paid so far, in micro-euros (examples the plan's allowance paid cost 0 here)." }),
    charged: z.string().openapi({ description: "The same, exact decimal euros." }),
    version: z.number().int().nullable().openapi({ description: "The version it wrote, once succeeded." }),
    error: z.object({ code: z.string(), message: z.string() }).nullable().openapi({ description: "Why it failed (fit_interrupted, …)." }),
    heartbeat_at: Time.openapi({ description: "When the instance running it last recorded progress." }),
    created_at: Time,
    finished_at: Time.nullable(),
  })
  .openapi("AdminTaskFit");

export const AdminTaskSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    questions: z.array(z.string()).openapi({ description: "The ids of the task's questions, in the task's order." }),
    examples: z.number().int(),
    created_at: Time,
    latest_fit: AdminTaskFit.nullable().openapi({ description: "The newest fit, running or done; null before the first." }),
    latest_version: z.number().int().nullable().openapi({ description: "The newest version's number; null before the first fit succeeds." }),
  })
  .openapi("AdminTaskSummary");

const Metrics = z
  .object({
    n: z.number().int(),
    accuracy: z.number().nullable(),
    macroF1: z.number().nullable(),
    nll: z.number().nullable(),
    ece: z.number().nullable(),
    brier: z.number().nullable(),
  })
  .openapi("AdminTaskMetrics", { description: "Held-out figures (k-fold), of one readout of one question." });

const Bin = z.object({
  lower: z.number(),
  upper: z.number(),
  count: z.number().int(),
  confidence: z.number().openapi({ description: "Mean top-class probability in the bin (0 when empty)." }),
  accuracy: z.number().openapi({ description: "Mean gold probability of the top class in the bin (0 when empty)." }),
});

const QuestionReport = z
  .object({
    classes: z.number().int(),
    examples: z.number().int(),
    perClass: z.array(z.number().int()).openapi({ description: "Examples per class, in the order of the version's `classes`." }),
    folds: z.number().int(),
    prior: Metrics,
    plain: Metrics,
    level1: Metrics,
    level2: Metrics.optional(),
    level2Omitted: z.string().optional().openapi({ description: "Why level 2 was not fitted." }),
    chosen: z.enum(["plain", "level1", "level2"]),
    reliability: z.object({ bins: z.array(Bin) }).openapi({ description: "The chosen head's reliability diagram, held-out." }),
    l2: z.number().optional(),
  })
  .openapi("AdminTaskQuestionReport");

const Report = z
  .object({
    seed: z.number().int(),
    examples: z.number().int(),
    inputTokens: z.number().int(),
    chargedMicro: z.number().int(),
    questions: z.record(z.string(), QuestionReport),
  })
  .openapi("AdminTaskReport", { description: "The version's report, as the tasks service wrote it (docs/concepts/tasks.md)." });

export const AdminTaskVersion = z
  .object({
    version: z.number().int(),
    model: z.string(),
    fit: z.string().openapi({ description: "The fit that wrote it." }),
    created_at: Time,
    heads: z.record(z.string(), z.string()).openapi({ description: "Per question, the head answering it: plain, level1 or level2." }),
    binding: z.record(z.string(), z.unknown()).openapi({ description: "What the heads are bound to: model, its weights' hash, prompt style, template." }),
    report: Report,
  })
  .openapi("AdminTaskVersion");

export const AdminTaskDetail = z
  .object({
    task: z.object({
      id: z.string(),
      name: z.string(),
      account_id: z.string(),
      questions: z.record(z.string(), Question),
      classes: z.record(z.string(), z.array(z.string())).openapi({
        description: "Per question, its classes in the order the report counts them: choice options, [true, false], score levels.",
      }),
      abstain_below: z.record(z.string(), z.number()),
      examples: z.number().int(),
      created_at: Time,
    }),
    fits: z.array(AdminTaskFit).openapi({ description: "Every fit, newest first." }),
    versions: z.array(AdminTaskVersion).openapi({ description: "Every version with its report, newest first." }),
  })
  .openapi("AdminTaskDetail");

export function adminFitView(fit: FitRecord): z.infer<typeof AdminTaskFit> {
  return {
    id: fit.id,
    state: fit.state,
    model: fit.model,
    key_id: fit.keyId,
    examples: fit.total,
    examples_read: fit.done,
    input_tokens: fit.inputTokens,
    charged_micro: fit.chargedMicro,
    charged: formatEuros(fit.chargedMicro),
    version: fit.version ?? null,
    error: fit.error ?? null,
    heartbeat_at: iso(fit.heartbeatAt),
    created_at: iso(fit.createdAt),
    finished_at: fit.finishedAt === undefined ? null : iso(fit.finishedAt),
  };
}

export function adminTaskSummary(task: Task, latestFit: FitRecord | undefined, latestVersion: VersionRecord | undefined): z.infer<typeof AdminTaskSummary> {
  return {
    id: task.record.id,
    name: task.record.name,
    questions: Object.keys(task.definition.questions),
    examples: task.record.examples,
    created_at: iso(task.record.createdAt),
    latest_fit: latestFit ? adminFitView(latestFit) : null,
    latest_version: latestVersion?.version ?? null,
  };
}

export function adminVersionView(version: VersionRecord): z.infer<typeof AdminTaskVersion> {
  const heads = JSON.parse(version.heads) as Record<string, { kind: string }>;
  return {
    version: version.version,
    model: version.model,
    fit: version.fitId,
    created_at: iso(version.createdAt),
    heads: Object.fromEntries(Object.entries(heads).map(([id, head]) => [id, head.kind])),
    binding: JSON.parse(version.binding),
    report: JSON.parse(version.report),
  };
}

export function adminTaskDetail(task: Task, fits: FitRecord[], versions: VersionRecord[]): z.infer<typeof AdminTaskDetail> {
  const { questions, abstainBelow } = task.definition;
  return {
    task: {
      id: task.record.id,
      name: task.record.name,
      account_id: task.record.accountId,
      questions,
      classes: Object.fromEntries(Object.entries(questions).map(([id, question]) => [id, classesOf(question)])),
      abstain_below: abstainBelow,
      examples: task.record.examples,
      created_at: iso(task.record.createdAt),
    },
    fits: fits.map(adminFitView),
    versions: versions.map(adminVersionView),
  };
}
