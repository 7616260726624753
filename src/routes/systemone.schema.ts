import { z } from "@hono/zod-openapi";
import { Answer, Content, explain, noEmptyKeys, Question, recordOf } from "../judgment/schema.js";

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
} from "../judgment/schema.js";

export const JudgmentRequest = z
  .object({
    state: z.union([Content, z.null()]).optional().openapi({ description: "What the questions are about." }),
    questions: recordOf(Question, "Question", explain("questions must be an object of question id to question"))
      .refine(noEmptyKeys("question ids").check, { error: noEmptyKeys("question ids").error })
      .refine((q) => Object.keys(q).length > 0, { error: "questions must contain at least one question" }),
    model: z.string({ error: "model must be a string" }).optional().openapi({
      description: "jev-latest, jev-preview or the served model's id; any other name is rejected.",
    }),
    include_logits: z.boolean({ error: "include_logits must be true or false" }).optional().openapi({
      description:
        "Extension of this server: when true, every answer also carries `logits`, the model's raw " +
        "uncalibrated log-probability of each label (for calibration tools).",
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
  })
  .openapi("JudgmentResponse");
export type JudgmentResponse = z.infer<typeof JudgmentResponse>;
