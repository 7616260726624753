import { z } from "zod";
import { keyed } from "./keyed.js";

/**
 * Questions and answers: the types judgment works on, and the schemas the HTTP edge validates
 * requests with and documents (OpenAPI) from, so the two cannot drift apart. Plain zod: the
 * document's names and descriptions are zod metadata (`.meta`), which the OpenAPI generator reads.
 */

export const MAX_CHOICE_OPTIONS = 255;
export const MIN_CHOICE_OPTIONS = 2;
export const MAX_SCORE_LEVELS = 10;
export const MIN_SCORE_LEVELS = 2;

/** The message for a wrong value, or "is required" when the field is missing altogether. */
export const explain = (message: string) => (issue: { input: unknown }) => (issue.input === undefined ? "is required" : message);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `z.record(z.string(), value)` that keeps every key. zod's own record silently drops a key
 * named "__proto__", and option names and question ids are arbitrary strings. Validated as a
 * Map (which has no such key), returned as an object with every key its own; the document
 * shows it as the plain JSON object it is.
 */
export function recordOf<V extends z.ZodType>(value: V, valueSchemaName: string, error: ReturnType<typeof explain>) {
  return z
    .preprocess((v) => (isPlainObject(v) ? new Map(Object.entries(v)) : v), z.map(z.string(), value, { error }))
    .transform((map) => keyed([...map.keys()], [...map.values()]))
    .meta({ type: "object", additionalProperties: { $ref: `#/components/schemas/${valueSchemaName}` } });
}

/** Any JSON object, passed through untouched (so a "__proto__" key in a state survives). */
const JsonObject = z.custom<Record<string, unknown>>(isPlainObject, { error: "must be an object" }).meta({ type: "object" });

/** Any JSON array, passed through untouched: a copy would lose the number texts the body reader recorded. */
const JsonArray = z.custom<unknown[]>(Array.isArray, { error: "must be an array" }).meta({ type: "array", items: {} });

export const noEmptyKeys = (what: string) => ({
  error: `${what} must be non-empty strings`,
  check: (record: object) => !Object.keys(record).includes(""),
});

/** Text, or structured content rendered to stable JSON for the model. */
export const Content = z
  .union([z.string(), JsonObject, JsonArray], {
    error: explain("must be a string, an object or an array"),
  })
  .meta({ id: "Content", description: "Text, or a JSON object/array rendered to text." });

const OptionalContent = z
  .union([z.string(), JsonObject, JsonArray, z.null()], {
    error: explain("must be a string, an object, an array or null"),
  })
  .meta({ id: "OptionalContent" });

const ChoiceQuestion = z
  .object({
    type: z.literal("choice"),
    instructions: OptionalContent,
    criteria: recordOf(OptionalContent, "OptionalContent", explain("choice criteria must be an object of option key to description"))
      .refine(noEmptyKeys("option keys").check, { error: noEmptyKeys("option keys").error })
      .refine((c) => Object.keys(c).length >= MIN_CHOICE_OPTIONS && Object.keys(c).length <= MAX_CHOICE_OPTIONS, {
        error: `choice needs between ${MIN_CHOICE_OPTIONS} and ${MAX_CHOICE_OPTIONS} options`,
      }),
  })
  .meta({ id: "ChoiceQuestion" });

const NoulQuestion = z
  .object({
    type: z.literal("noul"),
    instructions: OptionalContent,
    criteria: z
      .strictObject(
        { true: OptionalContent.optional(), false: OptionalContent.optional() },
        { error: 'noul criteria must be an object with optional "true" and "false" descriptions' },
      )
      .nullish(),
  })
  .meta({ id: "NoulQuestion" });

const ScoreQuestion = z
  .object({
    type: z.literal("score"),
    instructions: OptionalContent,
    criteria: z
      .array(OptionalContent, { error: explain("score criteria must be an array of level descriptions, lowest first") })
      .min(MIN_SCORE_LEVELS, { error: `score needs between ${MIN_SCORE_LEVELS} and ${MAX_SCORE_LEVELS} levels` })
      .max(MAX_SCORE_LEVELS, { error: `score needs between ${MIN_SCORE_LEVELS} and ${MAX_SCORE_LEVELS} levels` }),
  })
  .meta({ id: "ScoreQuestion" });

export const Question = z
  .discriminatedUnion("type", [ChoiceQuestion, NoulQuestion, ScoreQuestion], {
    error: 'type must be one of "choice", "noul", "score"',
  })
  .meta({ id: "Question" });

export type Question = z.infer<typeof Question>;
export type ChoiceQuestion = z.infer<typeof ChoiceQuestion>;
export type NoulQuestion = z.infer<typeof NoulQuestion>;
export type ScoreQuestion = z.infer<typeof ScoreQuestion>;

const Probability = z.number().min(0).max(1);

/** Present only when the request asked for `include_logits`: keyed like `probabilities`. */
const Logits = z.record(z.string(), z.number().nullable()).optional().meta({
  description:
    'Raw log P of each label before calibration; noul is keyed "true" and "false". null is log 0 (−∞, which JSON cannot write): a label the model rules out.',
});

/** Present only when the request named a task (`x_task`). */
export const TaskFields = {
  x_task: z
    .object({
      id: z.string(),
      version: z.number().int().nullable().meta({ description: "The task version whose head answered; null when none did (then `reason` says why)." }),
      head: z
        .enum(["plain", "level1", "level2"])
        .optional()
        .meta({ description: "Which head of the version answered: the plain readout kept, the label log-probability head, or the hidden-state head." }),
      reason: z.string().optional(),
    })
    .optional()
    .meta({ id: "TaskNote", description: "x_task: which version of the task answered this question, or why none did." }),
  x_abstain: z
    .literal(true)
    .optional()
    .meta({ description: "x_task: the answer's confidence is below the task's floor for this question (the probabilities are still given)." }),
};

/** Present only when the request asked for `x_diagnostics`. */
const DiagnosticFields = {
  label_mass: Probability.optional().meta({
    description: "x_diagnostics: the probability the whole vocabulary gave this question's labels (their first tokens) at the first label position.",
  }),
  top_token_is_label: z.boolean().optional().meta({ description: "x_diagnostics: whether the most likely next token there was one of the labels." }),
};

const ChoiceAnswer = z
  .object({
    type: z.literal("choice"),
    choice: z.string().meta({ description: "Key of the most likely option." }),
    probabilities: z.record(z.string(), Probability).meta({ description: "Option key to probability; sums to 1." }),
    confidence: Probability,
    logits: Logits,
    ...DiagnosticFields,
    ...TaskFields,
  })
  .meta({ id: "ChoiceAnswer" });

const NoulAnswer = z
  .object({ type: z.literal("noul"), noul: Probability.meta({ description: "P(statement holds)." }), logits: Logits, ...DiagnosticFields, ...TaskFields })
  .meta({ id: "NoulAnswer" });

const ScoreAnswer = z
  .object({
    type: z.literal("score"),
    score: z.number().meta({ description: "Σ level × probability, levels numbered from 0." }),
    probabilities: z.record(z.string(), Probability).meta({ description: 'Level "0"…"n-1" to probability.' }),
    legend: z.record(z.string(), z.union([z.string(), JsonObject, JsonArray])).meta({
      description: 'Level "0"…"n-1" to its description as the request sent it (an object stays that object), never null: a null level comes back as "".',
    }),
    confidence: Probability,
    logits: Logits,
    ...DiagnosticFields,
    ...TaskFields,
  })
  .meta({ id: "ScoreAnswer" });

export const Answer = z.union([ChoiceAnswer, NoulAnswer, ScoreAnswer]).meta({ id: "Answer" });
export type Answer = z.infer<typeof Answer>;
