import { z } from "@hono/zod-openapi";
import { CalibrationMode, DiagnosticsFlag, TaskName } from "../judging/extensions.js";
import { TaskFields } from "../../judgment/schema.js";
import { DEBIAS_MODES } from "../../judgment/debias.js";
import { explain, MAX_CHOICE_OPTIONS, MAX_SCORE_LEVELS, MIN_CHOICE_OPTIONS, MIN_SCORE_LEVELS } from "../../judgment/schema.js";
import { PUBLIC_CODES } from "../shared.schema.js";
import { DECISIONS_ERROR_TYPES } from "./errors.js";
import type { ErrorCode } from "../../errors.js";

/**
 * Request and response schemas of POST /v1/decisions (the OpenAI Decisions format). The input's
 * items and content parts are validated by mapping.ts, which can say what is not
 * supported (an image, a tool item) rather than that some union failed; the document shows the
 * shapes that are answered.
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const DecisionsInputText = z
  .object({ type: z.literal("input_text"), text: z.string() })
  .openapi("DecisionsInputText", { description: "Text. `prompt_cache_breakpoint` is accepted and ignored." });

export const DecisionsInputJson = z
  .object({ type: z.literal("input_json"), data: z.union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]) })
  .openapi("DecisionsInputJson", { description: "JSON, shown to the model as a JSON `state` of /v1/systemone is (keys sorted, numbers as written)." });

export const DecisionsUserMessage = z
  .object({
    role: z.literal("user"),
    type: z.literal("message").optional(),
    content: z.union([z.string(), z.array(z.union([DecisionsInputText, DecisionsInputJson]))]),
  })
  .openapi("DecisionsUserMessage", {
    description: "A user message. Images, developer/system/assistant messages and tool items are refused with 400 invalid_request, saying which.",
  });

/** Validated by mapping.ts (see above); documented as what is answered. */
const Parts = (description: string) =>
  z.union([z.string(), z.array(z.unknown())], { error: explain("must be a string or an array of content parts") }).openapi({
    description,
    anyOf: [{ type: "string" }, { type: "array", items: { anyOf: [ref("DecisionsInputText"), ref("DecisionsInputJson")] } }],
  });

const Input = z.union([z.string(), z.array(z.unknown())], { error: explain("must be a string or an array of user messages") }).openapi({
  description: "Text, or user messages whose parts are joined by a blank line (a lone JSON part is the state itself).",
  anyOf: [{ type: "string" }, { type: "array", items: ref("DecisionsUserMessage") }],
});

const Instructions = Parts("The question: text, or text and JSON parts joined by a blank line.");
const Name = z.string({ error: "name must be a string" }).nullish().openapi({ description: "Echoed in the answer (null when absent)." });

const ChoiceValue = z.union([z.string(), z.boolean()], { error: explain("must be a string or a boolean") }).openapi({
  description: 'A string or a boolean: "true" and true are different values (and cannot both be choices here).',
});

const PredicateQuestion = z
  .object({ type: z.literal("predicate"), instructions: Instructions, name: Name })
  .openapi("DecisionsPredicateQuestion", { description: "P(the instructions hold of the input)." });

const ChoiceQuestion = z
  .object({
    type: z.literal("choice"),
    instructions: Instructions,
    name: Name,
    choices: z
      .array(z.object({ value: ChoiceValue, description: z.string({ error: "description must be a string" }).nullish() }), {
        error: explain("choices must be an array of {value, description}"),
      })
      .min(MIN_CHOICE_OPTIONS, { error: `choice needs between ${MIN_CHOICE_OPTIONS} and ${MAX_CHOICE_OPTIONS} choices` })
      .max(MAX_CHOICE_OPTIONS, { error: `choice needs between ${MIN_CHOICE_OPTIONS} and ${MAX_CHOICE_OPTIONS} choices` }),
  })
  .openapi("DecisionsChoiceQuestion");

const ScoreQuestion = z
  .object({
    type: z.literal("score"),
    instructions: Instructions,
    name: Name,
    levels: z
      .array(
        z.object({ label: z.string({ error: explain("label must be a string") }), description: z.string({ error: "description must be a string" }).nullish() }),
        {
          error: explain("levels must be an array of {label, description}, lowest first"),
        },
      )
      .min(MIN_SCORE_LEVELS, { error: `score needs between ${MIN_SCORE_LEVELS} and ${MAX_SCORE_LEVELS} levels` })
      .max(MAX_SCORE_LEVELS, { error: `score needs between ${MIN_SCORE_LEVELS} and ${MAX_SCORE_LEVELS} levels` }),
  })
  .openapi("DecisionsScoreQuestion", { description: "Levels lowest first; each is shown to the model as `label: description`." });

const Question = z.discriminatedUnion("type", [PredicateQuestion, ChoiceQuestion, ScoreQuestion], {
  error: 'type must be one of "predicate", "choice", "score"',
});

const Ignored = z.unknown().optional().openapi({ description: "Accepted and ignored." });

export const DecisionsRequest = z
  .object({
    model: z.string({ error: explain("model must be a string") }).openapi({
      description: "The served model's id, or gpt-6-luna (the hosted service's model) as its alias; any other name is rejected.",
    }),
    input: Input,
    questions: z
      .array(Question, { error: explain("questions must be an array of questions") })
      .min(1, { error: "questions must contain at least one question" })
      .openapi({ description: "Answered in this order; at most JUDGE_MAX_QUESTIONS (64 by default)." }),
    safety_identifier: Ignored,
    prompt_cache_key: Ignored,
    prompt_cache_options: Ignored,
    x_diagnostics: DiagnosticsFlag,
    x_calibration: CalibrationMode,
    x_task: TaskName,
    x_debias: z
      .enum(DEBIAS_MODES, { error: 'x_debias must be one of "none", "canonical", "shift"' })
      .optional()
      .openapi({ description: "Extension of this server: option-order debiasing of choice questions, as on /v1/systemone." }),
  })
  .openapi("DecisionsRequest");
export type DecisionsRequest = z.infer<typeof DecisionsRequest>;

const Probability = z.number().min(0).max(1);
const AnswerName = z.string().nullable().openapi({ description: "The question's name, or null." });

const PredicateAnswer = z
  .object({ type: z.literal("predicate"), name: AnswerName, probability: Probability.openapi({ description: "P(the statement holds)." }), ...TaskFields })
  .openapi("DecisionsPredicateAnswer");

const ChoiceAnswer = z
  .object({
    type: z.literal("choice"),
    name: AnswerName,
    choice: ChoiceValue.openapi({ description: "The most likely value, with its type." }),
    probabilities: z.array(z.object({ value: ChoiceValue, probability: Probability })).openapi({ description: "Every choice, in request order; sums to 1." }),
    confidence: Probability,
    ...TaskFields,
  })
  .openapi("DecisionsChoiceAnswer");

const ScoreAnswer = z
  .object({
    type: z.literal("score"),
    name: AnswerName,
    score: z.number().openapi({ description: "Σ level × probability, levels numbered from 0." }),
    probabilities: z
      .array(z.object({ value: z.number().int().min(0), label: z.string(), probability: Probability }))
      .openapi({ description: "Every level, lowest first; `value` is its zero-based index." }),
    confidence: Probability,
    ...TaskFields,
  })
  .openapi("DecisionsScoreAnswer");

const Tokens = z.number().int().min(0);

export const DecisionsResponse = z
  .object({
    model: z.string().openapi({ description: "The model that answered (the served id, also when asked by its alias)." }),
    answers: z.array(z.union([PredicateAnswer, ChoiceAnswer, ScoreAnswer])).openapi({ description: "One per question, in request order." }),
    usage: z.object({
      input_tokens: Tokens.openapi({ description: "What the request is billed for." }),
      input_tokens_details: z.object({ cached_tokens: Tokens, cache_write_tokens: Tokens }),
      output_tokens: Tokens,
      output_tokens_details: z.object({ reasoning_tokens: Tokens }),
      total_tokens: Tokens,
    }),
    x_debias: z
      .object({ mode: z.enum(["canonical", "shift"]), presentations_read: z.number().int().min(1), presentations: z.number().int().min(1) })
      .optional()
      .openapi({ description: "Present when the request was debiased, as on /v1/systemone." }),
  })
  .openapi("DecisionsResponse");
export type DecisionsResponse = z.infer<typeof DecisionsResponse>;

export const DecisionsErrorBody = z
  .object({
    error: z.object({
      message: z.string().openapi({ description: "What went wrong, for people." }),
      type: z.enum(DECISIONS_ERROR_TYPES).openapi({ description: "The kind of failure, in the OpenAI SDKs' words (from the status)." }),
      param: z.string().nullable().openapi({ description: "The field at fault, such as `questions[2].choices`, or null." }),
      code: z.enum(PUBLIC_CODES as [ErrorCode, ...ErrorCode[]]).openapi({ description: "Stable, for programs: the same codes as /v1/systemone." }),
    }),
  })
  .openapi("DecisionsError");
