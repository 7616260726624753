import { z } from "@hono/zod-openapi";
import { Content, Question } from "../../judgment/schema.js";
import { TASK_LIMITS } from "../../services/tasks/definition.js";
import type { Task } from "../../services/tasks/service.js";
import type { FitRecord, VersionRecord } from "../../services/types.js";
import { fitJson, taskJson, versionJson } from "../../views/tasks.js";

/** The wire shapes of /v1/tasks… (docs/interface/tasks.md), and the views that write them. */

const Example = z
  .object({
    id: z.unknown().optional().openapi({ description: "Ignored: for the tenant's own bookkeeping." }),
    state: Content,
    gold: z.record(z.string(), z.unknown()).openapi({
      description:
        "The gold answer of some of the task's questions: choice, an option key or { key: probability }; noul, true/false or P(true); score, a level index or one probability per level.",
    }),
  })
  .strict()
  .openapi("TaskExample");

export const CreateTaskBody = z
  .object({
    name: z
      .string()
      .min(1)
      .max(TASK_LIMITS.maxNameLength)
      .openapi({
        description: `Unique in the account; 1–${TASK_LIMITS.maxNameLength} characters, no control characters, not starting with "task_", not "." or "..".`,
      }),
    questions: z
      .record(z.string(), Question)
      .openapi({ description: "The questions the task answers, by id, as a request writes them (at least one; at most JUDGE_MAX_QUESTIONS)." }),
    abstain_below: z.record(z.string(), z.number().gt(0).lt(1)).optional().openapi({
      description:
        "Per question of the task, a floor in (0, 1) for the top probability of its head's answer: an answer whose top probability is below it carries x_abstain: true.",
    }),
    examples: z.array(Example).openapi({
      description: `Labelled examples: at most ${TASK_LIMITS.maxExamples.toLocaleString("en")}, each state at most ${TASK_LIMITS.maxStateBytes / 1024} KB as JSON, the whole body at most ${TASK_LIMITS.maxUploadBytes / 1_048_576} MB.`,
    }),
  })
  .strict()
  .openapi("CreateTask");

export const FitBody = z
  .object({
    model: z.string().optional().openapi({ description: "The served model to fit on (default: the default model)." }),
    seed: z.number().int().min(0).max(2_147_483_647).optional().openapi({ description: "Folds and fitting are deterministic for a seed (default 0)." }),
    heads: z
      .array(z.enum(["level1", "level2"]))
      .min(1)
      .optional()
      .openapi({
        description:
          "The heads that may replace a question's readout (default both); a fit without level 2 reads no hidden states (cheaper), and its report leaves level 2 out.",
      }),
  })
  .strict()
  .openapi("FitTask");

export const FitView = z
  .object({
    id: z.string(),
    state: z.enum(["running", "succeeded", "failed"]),
    model: z.string(),
    examples: z.number().int().openapi({ description: "Examples to read." }),
    examples_read: z.number().int(),
    input_tokens: z.number().int().openapi({ description: "Tokens read and billed so far." }),
    charged_eur: z.string().openapi({
      description: "What the balance paid so far, in euros, an exact decimal (two to six decimals); examples the plan's allowance paid add 0.",
    }),
    version: z.number().int().nullable().openapi({ description: "The version it wrote, once succeeded." }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .openapi("TaskFit");

export const VersionSummary = z
  .object({ version: z.number().int(), model: z.string(), fit: z.string(), created_at: z.string(), heads: z.record(z.string(), z.string()) })
  .openapi("TaskVersionSummary");

export const TaskView = z
  .object({
    id: z.string(),
    name: z.string(),
    questions: z.record(z.string(), Question),
    abstain_below: z.record(z.string(), z.number()),
    examples: z.number().int(),
    created_at: z.string(),
    versions: z.array(VersionSummary).openapi({ description: "Newest first." }),
    latest_fit: FitView.nullable(),
  })
  .openapi("Task");

export const VersionView = VersionSummary.extend({
  binding: z.object({ model: z.string(), weights: z.string(), promptStyle: z.string(), template: z.string() }),
  report: z
    .record(z.string(), z.unknown())
    .openapi({ description: "Held-out k-fold figures per question: prior, plain readout and each head; the reliability diagram." }),
}).openapi("TaskVersion");

// The views are shared with the CLI (src/views/tasks.ts); the schemas above describe what they write.
export const fitView: (fit: FitRecord) => z.infer<typeof FitView> = fitJson;
export const versionView: (version: VersionRecord) => z.infer<typeof VersionView> = versionJson;
export const taskView: (task: Task, versions: VersionRecord[], latest: FitRecord | undefined) => z.infer<typeof TaskView> = taskJson;
