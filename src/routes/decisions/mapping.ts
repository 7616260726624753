import { keyed } from "../../judgment/keyed.js";
import { renderValue, type NumberTexts } from "../../judgment/render.js";
import type { Answer, Question } from "../../judgment/schema.js";
import type { JudgmentRequest } from "../../services/judging/request.js";

/**
 * The OpenAI Decisions format (POST /v1/decisions) onto our questions and back, as pure
 * functions. The route has validated the shape of the questions; the input's items and
 * content parts are checked here, because what cannot be mapped (images, tool items, other
 * roles) deserves a message saying so rather than a schema's "invalid union".
 *
 * - `input`: a string is the state; the text parts of user messages are the state, joined by
 *   a blank line (message boundaries are not kept). An `input_json` part is JSON, rendered as a
 *   JSON state is; a lone one is the state itself, exactly as /v1/systemone would get it.
 * - `predicate` → `noul`; `choice` → `choice` with the values as option keys (booleans as
 *   "true"/"false", their type restored on the way out); `score` → `score` with each level
 *   shown as `label: description`.
 * - Questions get the ids q1…qN, in request order; answers come back as a list in that order.
 */

export type ChoiceValue = string | boolean;

export interface DecisionsChoice {
  value: ChoiceValue;
  description?: string | null;
}

export interface DecisionsLevel {
  label: string;
  description?: string | null;
}

interface QuestionBase {
  name?: string | null;
  /** Text, or a list of content parts (checked here). */
  instructions: string | readonly unknown[];
}

export type DecisionsQuestion =
  | (QuestionBase & { type: "predicate" })
  | (QuestionBase & { type: "choice"; choices: readonly DecisionsChoice[] })
  | (QuestionBase & { type: "score"; levels: readonly DecisionsLevel[] });

export interface DecisionsRequest {
  /** Text, or a list of input items (checked here). */
  input: string | readonly unknown[];
  questions: readonly DecisionsQuestion[];
}

export type DecisionAnswer =
  | { type: "predicate"; name: string | null; probability: number }
  | {
      type: "choice";
      name: string | null;
      choice: ChoiceValue;
      probabilities: { value: ChoiceValue; probability: number }[];
      confidence: number;
    }
  | {
      type: "score";
      name: string | null;
      score: number;
      probabilities: { value: number; label: string; probability: number }[];
      confidence: number;
    };

/** A request this server cannot answer as asked; `param` is where (`input[1].content[0]`). */
export class UnsupportedDecisionError extends Error {
  override name = "UnsupportedDecisionError";
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(`${param}: ${message}`);
  }
}

/** Text, or a JSON object or array (an `input_json` part's value). */
type Content = string | Record<string, unknown> | unknown[];

/** What a Decisions request asks, in the one JudgmentRequest's terms; its state is text or an `input_json` value. */
export type MappedDecisions = Pick<JudgmentRequest, "ids" | "questions"> & { state: Content };

/** `numberTexts`: the body's numbers as written, for the pieces joined into one text here. */
export function toJudgment(request: DecisionsRequest, numberTexts?: NumberTexts): MappedDecisions {
  const questions = request.questions.map((question, i) => toQuestion(question, `questions[${i}]`, numberTexts));
  return { state: stateOf(request.input, numberTexts), ids: questions.map((_, i) => `q${i + 1}`), questions };
}

/** The key a choice value has among our options: a boolean as its text. */
export const choiceKey = (value: ChoiceValue): string => (typeof value === "boolean" ? String(value) : value);

function toQuestion(question: DecisionsQuestion, where: string, numberTexts: NumberTexts | undefined): Question {
  const instructions = contentOf(question.instructions, `${where}.instructions`, numberTexts);
  switch (question.type) {
    case "predicate":
      return { type: "noul", instructions };
    case "choice":
      return { type: "choice", instructions, criteria: criteriaOf(question.choices, `${where}.choices`) };
    case "score":
      return { type: "score", instructions, criteria: question.levels.map(levelText) };
  }
}

function criteriaOf(choices: readonly DecisionsChoice[], where: string): Record<string, string | null> {
  const seen = new Map<string, ChoiceValue>();
  choices.forEach(({ value }, i) => {
    const key = choiceKey(value);
    if (key === "") throw new UnsupportedDecisionError("choice values must be non-empty", `${where}[${i}].value`);
    const earlier = seen.get(key);
    if (earlier === value) throw new UnsupportedDecisionError(`${JSON.stringify(value)} is listed twice; each choice must be unique`, `${where}[${i}].value`);
    if (earlier !== undefined) {
      throw new UnsupportedDecisionError(
        `the string "${key}" and the boolean ${key} are both choices; they are different values, but this server names options by their text, so it cannot tell them apart`,
        `${where}[${i}].value`,
      );
    }
    seen.set(key, value);
  });
  return keyed(
    choices.map((c) => choiceKey(c.value)),
    choices.map((c) => c.description ?? null),
  );
}

/** `label: description`, or the label alone. */
function levelText(level: DecisionsLevel): string {
  return level.description ? `${level.label}: ${level.description}` : level.label;
}

/** The state: the input's text, or a lone JSON part's value. */
function stateOf(input: string | readonly unknown[], numberTexts: NumberTexts | undefined): Content {
  if (typeof input === "string") return input;
  return joined(
    input.flatMap((item, i) => userContent(item, `input[${i}]`)),
    numberTexts,
  );
}

function userContent(item: unknown, where: string): Content[] {
  if (!isObject(item)) throw new UnsupportedDecisionError('an input item must be a message object {"role": "user", "content": …}', where);
  const { type, role } = item;
  if (typeof type === "string" && TOOL_ITEMS.includes(type)) {
    throw new UnsupportedDecisionError(
      `${type} items are not supported: this server judges text from user messages, not tool calls or their outputs`,
      `${where}.type`,
    );
  }
  if (type !== undefined && type !== "message") {
    throw new UnsupportedDecisionError(`input items of type ${JSON.stringify(type)} are not supported; send user messages`, `${where}.type`);
  }
  if (role !== "user") {
    const why = typeof role === "string" && role in OTHER_ROLES ? OTHER_ROLES[role] : 'only role "user" is supported';
    throw new UnsupportedDecisionError(
      `${typeof role === "string" ? `${role} messages are not supported: ` : "a message needs a role: "}${why}`,
      `${where}.role`,
    );
  }
  return pieces(item.content, `${where}.content`);
}

const TOOL_ITEMS = ["function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output"];

const OTHER_ROLES: Record<string, string> = {
  developer: "this server's own instructions frame the judgment; put the text in a user message or in a question's instructions",
  system: "this server's own instructions frame the judgment; put the text in a user message or in a question's instructions",
  assistant: "messages are joined into one text, so who said what would be lost; send a transcript as the text of a user message",
};

/** Instructions: their text, or a lone JSON part's value. */
function contentOf(content: unknown, where: string, numberTexts: NumberTexts | undefined): Content {
  return joined(pieces(content, where), numberTexts);
}

/** A string is one piece; a list of parts gives one per part: its text, or its JSON value. */
function pieces(content: unknown, where: string): Content[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) throw new UnsupportedDecisionError("must be a string or an array of content parts", where);
  return content.map((part, i) => partValue(part, `${where}[${i}]`));
}

function partValue(part: unknown, where: string): Content {
  if (!isObject(part)) throw new UnsupportedDecisionError('a content part must be an object such as {"type": "input_text", "text": …}', where);
  switch (part.type) {
    case "input_text":
      if (typeof part.text !== "string") throw new UnsupportedDecisionError("must be a string", `${where}.text`);
      return part.text;
    case "input_json":
      if (!isObject(part.data) && !Array.isArray(part.data)) throw new UnsupportedDecisionError("must be a JSON object or array", `${where}.data`);
      return part.data;
    case "input_image":
      throw new UnsupportedDecisionError(
        "images (input_image) are not supported: this server's models read text only; describe the image in an input_text part",
        where,
      );
    default:
      throw new UnsupportedDecisionError(
        `content parts of type ${JSON.stringify(part.type)} are not supported; send input_text or input_json parts`,
        `${where}.type`,
      );
  }
}

/**
 * One piece is itself (a JSON value stays JSON, rendered like a JSON state); several are their
 * texts, joined by a blank line. None is no text.
 */
function joined(values: Content[], numberTexts: NumberTexts | undefined): Content {
  if (values.length === 1) return values[0];
  return values.map((value) => renderValue(value, numberTexts)).join("\n\n");
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Our answers (one per question, in order) in the Decisions format, values and names as the request had them. */
export function toDecisionAnswers(questions: readonly DecisionsQuestion[], answers: readonly Answer[]): DecisionAnswer[] {
  if (answers.length !== questions.length) throw new Error(`${answers.length} answers for ${questions.length} questions`);
  return questions.map((question, i) => toDecisionAnswer(question, answers[i]));
}

function toDecisionAnswer(question: DecisionsQuestion, answer: Answer): DecisionAnswer {
  const name = question.name ?? null;
  if (question.type === "predicate" && answer.type === "noul") return { type: "predicate", name, probability: answer.noul };
  if (question.type === "choice" && answer.type === "choice") {
    const probabilities = question.choices.map(({ value }) => ({ value, probability: own(answer.probabilities, choiceKey(value)) }));
    const chosen = question.choices.find(({ value }) => choiceKey(value) === answer.choice);
    if (!chosen) throw new Error(`the answer's choice ${JSON.stringify(answer.choice)} is none of the question's values`);
    return { type: "choice", name, choice: chosen.value, probabilities, confidence: answer.confidence };
  }
  if (question.type === "score" && answer.type === "score") {
    const probabilities = question.levels.map(({ label }, value) => ({ value, label, probability: own(answer.probabilities, String(value)) }));
    return { type: "score", name, score: answer.score, probabilities, confidence: answer.confidence };
  }
  throw new Error(`a ${answer.type} answer to a ${question.type} question`);
}

/** An own property, so a value named "__proto__" reads its probability, not the prototype. */
function own(record: Record<string, number>, key: string): number {
  const value = Object.getOwnPropertyDescriptor(record, key)?.value;
  if (typeof value !== "number") throw new Error(`no probability for ${JSON.stringify(key)}`);
  return value;
}

/** The format's usage: what we bill is read as input; nothing is generated, and no prefix is billed as cached. */
export function decisionsUsage(inputTokens: number) {
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens,
  };
}
