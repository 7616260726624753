import { z } from "zod";
import { Content, Question } from "../../judgment/schema.js";
import { canonicalQuestion as canonical } from "../judging/task-heads.js";
import { TaskInputError } from "./errors.js";

/**
 * A task as a tenant writes it (docs/concepts/tasks.md): a name, the questions it answers (the
 * same question objects as a request), optional confidence floors, and labelled examples, each a
 * state with the gold answer of some of the questions. Everything is checked before anything is
 * stored, and a refusal names the example (or JSONL line) and the field.
 */

/** The documented limits of an upload (docs/interface/tasks.md); the 256 KB limit is for judgments. */
export const TASK_LIMITS = {
  maxExamples: 5_000,
  maxUploadBytes: 8 * 1_048_576,
  maxStateBytes: 64 * 1024,
  maxNameLength: 100,
} as const;

export interface TaskDefinition {
  questions: Record<string, Question>;
  /** Per question: below this confidence an answer carries `x_abstain: true`. */
  abstainBelow: Record<string, number>;
}

/** The gold answer of one question: a class index (the question's order), or a distribution over its classes. */
export type Gold = number | number[];

export interface TaskExample {
  state: unknown;
  gold: Record<string, Gold>;
}

export interface TaskInput {
  name: string;
  definition: TaskDefinition;
  examples: TaskExample[];
}

/** The classes of a question, in the order heads and readouts use: options, [true, false], levels. */
export function classesOf(question: Question): string[] {
  if (question.type === "choice") return Object.keys(question.criteria);
  if (question.type === "noul") return ["true", "false"];
  return question.criteria.map((_, i) => String(i));
}

const Name = z
  .string({ error: "must be a string" })
  .min(1, { error: "must not be empty" })
  .max(TASK_LIMITS.maxNameLength, { error: `must be at most ${TASK_LIMITS.maxNameLength} characters` })
  .refine((name) => !/^task_/.test(name), { error: 'must not start with "task_" (ids do): a name is never mistaken for an id' })
  .refine((name) => !/[\u0000-\u001f\u007f]/.test(name), { error: "must not hold control characters" })
  // A URL's path cannot hold them as a segment: clients resolve /v1/tasks/.. to /v1.
  .refine((name) => name !== "." && name !== "..", { error: 'must not be "." or ".." (a URL cannot name them)' });

const Floors = z.record(z.string(), z.number().gt(0, { error: "must be above 0" }).lt(1, { error: "must be below 1" })).optional();

const Definition = z.strictObject({
  name: Name,
  questions: z.record(z.string(), Question, { error: "must be an object of question id to question" }),
  abstain_below: Floors,
  examples: z.array(z.unknown(), { error: "must be an array of examples" }),
});

const ExampleShape = z.strictObject({ id: z.unknown().optional(), state: Content, gold: z.record(z.string(), z.unknown(), { error: "must be an object" }) });
const LineShape = ExampleShape.extend({ questions: z.record(z.string(), Question).optional() });

/** A JSON body: `{ name, questions, abstain_below?, examples: [{ state, gold }] }`. */
export function parseTaskJson(body: unknown, maxQuestions: number): TaskInput {
  const parsed = Definition.safeParse(body);
  if (!parsed.success) throw new TaskInputError(describe(parsed.error));
  const { name, questions, abstain_below: floors = {}, examples } = parsed.data;
  const definition = checkedDefinition(questions, floors, maxQuestions);
  if (examples.length > TASK_LIMITS.maxExamples)
    throw new TaskInputError(`examples: ${examples.length} examples; a task holds at most ${TASK_LIMITS.maxExamples}`);
  return { name, definition, examples: examples.map((example, i) => parseExample(example, definition, `examples[${i}]`, ExampleShape)) };
}

/**
 * A JSONL body, one example a line in `judge eval`'s dataset format (`{ id?, state, questions,
 * gold }`): the task's questions are those the lines define, the same on every line that has one.
 */
export function parseTaskJsonl(name: unknown, text: string, floors: Record<string, number>, maxQuestions: number): TaskInput {
  const checkedName = Name.safeParse(name);
  if (!checkedName.success) throw new TaskInputError(`name: ${describe(checkedName.error)}`);
  const lines = text.split("\n").flatMap((line, i) => (line.trim() === "" ? [] : [{ line, where: `line ${i + 1}` }]));
  if (lines.length > TASK_LIMITS.maxExamples) throw new TaskInputError(`${lines.length} examples; a task holds at most ${TASK_LIMITS.maxExamples}`);
  const questions: Record<string, Question> = {};
  const definedAt: Record<string, string> = {};
  const rows = lines.map(({ line, where }) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new TaskInputError(`${where}: not valid JSON`);
    }
    const shape = LineShape.safeParse(value);
    if (!shape.success) throw new TaskInputError(`${where}: ${describe(shape.error)}`);
    for (const [id, question] of Object.entries(shape.data.questions ?? {})) {
      if (!(id in questions)) {
        questions[id] = question;
        definedAt[id] = where;
      } else if (canonical(questions[id]) !== canonical(question)) {
        throw new TaskInputError(`${where}: questions.${id} differs from its definition on ${definedAt[id]}`);
      }
    }
    return { value, where };
  });
  const definition = checkedDefinition(questions, floors, maxQuestions);
  return { name: checkedName.data, definition, examples: rows.map(({ value, where }) => parseExample(value, definition, where, LineShape)) };
}

function checkedDefinition(questions: Record<string, Question>, floors: Record<string, number>, maxQuestions: number): TaskDefinition {
  const ids = Object.keys(questions);
  if (ids.length === 0) throw new TaskInputError("questions: a task needs at least one question");
  if (ids.length > maxQuestions) throw new TaskInputError(`questions: ${ids.length} questions; a task has at most ${maxQuestions}, as a request does`);
  if (ids.includes("")) throw new TaskInputError("questions: question ids must be non-empty strings");
  for (const id of Object.keys(floors)) if (!(id in questions)) throw new TaskInputError(`abstain_below.${id}: not a question of the task`);
  return { questions, abstainBelow: floors };
}

function parseExample(value: unknown, definition: TaskDefinition, where: string, shape: typeof ExampleShape): TaskExample {
  const parsed = shape.safeParse(value);
  if (!parsed.success) throw new TaskInputError(`${where}: ${describe(parsed.error)}`);
  const { state, gold } = parsed.data;
  if (Buffer.byteLength(JSON.stringify(state)) > TASK_LIMITS.maxStateBytes) {
    throw new TaskInputError(`${where}.state: over ${TASK_LIMITS.maxStateBytes / 1024} KB`);
  }
  const labels = Object.entries(gold);
  if (labels.length === 0) throw new TaskInputError(`${where}.gold: labels none of the task's questions`);
  const out: Record<string, Gold> = {};
  for (const [id, answer] of labels) {
    const question = definition.questions[id];
    if (!question) throw new TaskInputError(`${where}.gold.${id}: not a question of the task (${Object.keys(definition.questions).join(", ")})`);
    out[id] = goldOf(question, answer, `${where}.gold.${id}`);
  }
  return { state, gold: out };
}

/** choice: an option key or { key: p }; noul: true/false or P(true); score: a level index or one p per level. */
function goldOf(question: Question, answer: unknown, where: string): Gold {
  const classes = classesOf(question);
  if (question.type === "choice") {
    if (typeof answer === "string") {
      const index = classes.indexOf(answer);
      if (index < 0) throw new TaskInputError(`${where}: ${JSON.stringify(answer)} is not an option (${classes.join(", ")})`);
      return index;
    }
    if (answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
      const entries = Object.entries(answer);
      for (const [key] of entries) if (!classes.includes(key)) throw new TaskInputError(`${where}: ${JSON.stringify(key)} is not an option`);
      return distribution(
        classes.map((key) => (answer as Record<string, unknown>)[key] ?? 0),
        where,
      );
    }
    throw new TaskInputError(`${where}: must be an option key or an object of option key to probability`);
  }
  if (question.type === "noul") {
    if (typeof answer === "boolean") return answer ? 0 : 1;
    if (typeof answer === "number" && answer >= 0 && answer <= 1) return [answer, 1 - answer];
    throw new TaskInputError(`${where}: must be true, false or a probability that the statement holds`);
  }
  if (typeof answer === "number" && Number.isInteger(answer) && answer >= 0 && answer < classes.length) return answer;
  if (Array.isArray(answer) && answer.length === classes.length) return distribution(answer, where);
  throw new TaskInputError(`${where}: must be a level index from 0 to ${classes.length - 1}, or ${classes.length} probabilities`);
}

function distribution(values: unknown[], where: string): number[] {
  if (!values.every((p): p is number => typeof p === "number" && p >= 0 && p <= 1))
    throw new TaskInputError(`${where}: probabilities must be numbers from 0 to 1`);
  const sum = values.reduce((a, b) => a + b, 0);
  if (Math.abs(sum - 1) > 1e-6) throw new TaskInputError(`${where}: probabilities must sum to 1 (they sum to ${sum})`);
  return values;
}

function describe(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
      return path ? `${path.replace(/^\./, "")}: ${issue.message}` : issue.message;
    })
    .join("; ");
}
