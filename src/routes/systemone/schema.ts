import { z } from "@hono/zod-openapi";
import { CalibrationMode, DiagnosticsFlag, TaskName } from "../judging/extensions.js";
import { DEBIAS_MODES, MAX_SHIFTS, SHIFT_TOLERANCE } from "../../judgment/debias.js";
import { Answer, Content, explain, noEmptyKeys, Question, recordOf } from "../../judgment/schema.js";

/**
 * Request and response schemas of POST /v1/systemone, over the question and answer schemas of
 * judgment/. The handler validates with these and the OpenAPI document is generated from them.
 */

export {
  Answer,
  MAX_CHOICE_OPTIONS,
  MAX_SCORE_LEVELS,
  MIN_CHOICE_OPTIONS,
  MIN_SCORE_LEVELS,
  Question,
  type ChoiceQuestion,
  type NoulQuestion,
  type ScoreQuestion,
} from "../../judgment/schema.js";

export const JudgmentRequest = z
  .object({
    state: z.union([Content, z.null()]).optional().openapi({ description: "What the questions are about." }),
    questions: recordOf(Question, "Question", explain("questions must be an object of question id to question"))
      .refine(noEmptyKeys("question ids").check, { error: noEmptyKeys("question ids").error })
      .refine((q) => Object.keys(q).length > 0, { error: "questions must contain at least one question" }),
    model: z.string({ error: "model must be a string" }).optional().openapi({
      description: "jev-latest, jev-preview or the served model's id; any other name is rejected.",
    }),
    include_logits: z
      .boolean({ error: "include_logits must be true or false" })
      .optional()
      .openapi({
        description:
          "Extension of this server: when true, every answer also carries `logits`, the model's raw " +
          "uncalibrated log-probability of each label (for calibration tools).",
      }),
    x_diagnostics: DiagnosticsFlag,
    x_calibration: CalibrationMode,
    x_task: TaskName,
    x_debias: z
      .enum(DEBIAS_MODES, { error: 'x_debias must be one of "none", "canonical", "shift"' })
      .optional()
      .openapi({
        description:
          "Extension of this server: option-order debiasing of choice questions (score and noul are never reordered). " +
          '"canonical" shows the options sorted by key, so the answer does not depend on their order; "shift" averages ' +
          `the log-probabilities over up to ${MAX_SHIFTS} cyclic rotations, stopping once no probability moves by more than ` +
          `${SHIFT_TOLERANCE}; only the rotations read are billed. Absent: the server's default (JUDGE_DEBIAS, "none" unless set).`,
      }),
  })
  .openapi("JudgmentRequest");

export type JudgmentRequest = z.infer<typeof JudgmentRequest>;

export const JudgmentResponse = z
  .object({
    model: z.string(),
    answers: z.record(z.string(), Answer),
    usage: z.object({ input_tokens: z.number().int().min(0), output_tokens: z.number().int().min(0) }),
    timing_ms: z.number().min(0),
    x_debias: z
      .object({
        mode: z.enum(["canonical", "shift"]),
        presentations_read: z.number().int().min(1),
        presentations: z.number().int().min(1),
      })
      .optional()
      .openapi({
        description:
          "Present when the request was debiased: question presentations the model read, of those held for " +
          "(one per question; one per rotation read for a shift choice). usage.input_tokens counts only those read.",
      }),
  })
  .openapi("JudgmentResponse");
export type JudgmentResponse = z.infer<typeof JudgmentResponse>;
