import type { JudgmentPrompt } from "../../../judgment/prompt.js";
import { renderValue, type NumberTexts } from "../../../judgment/render.js";
import type { Question } from "../../../judgment/schema.js";
import { BudgetError, type PreparedJudgment } from "../../types.js";
import { checkUpstreamLimits, inputTokensUpperBound, upstreamId, type UpstreamLimits } from "../systemone/upstream-request.js";

/**
 * What the decisions gateway sends upstream: the request's own questions (never our rendered
 * prompt) in OpenAI's Decisions format, in as few calls as the upstream takes, and what each
 * call must answer. Everything is rendered to text here, exactly as this service would show it
 * to its own model, so an upstream that is this service answers exactly as a direct request:
 *
 * - the state is the `input` string: text as is, JSON rendered as a JSON state is (keys sorted,
 *   numbers as the client wrote them; `input_json` would lose `1.0` and `1e999` to JSON.stringify);
 * - `noul` is a `predicate`; its `true` / `false` criteria, which the format has no field for,
 *   are lines of the instructions, worded as our own prompt words them;
 * - `choice` options are string `choices` (option key as value, description rendered);
 * - `score` levels are `levels` whose `label` is the level's description (rendered);
 * - each question is named q1…qN (request order), which the answer must echo.
 */

/** One answer the upstream owes: where it sits, its name, its type, and the values of its probabilities. */
export interface ExpectedDecision {
  /** The `name` sent, which the answer must echo: q1…qN over the whole request. */
  name: string;
  type: "predicate" | "choice" | "score";
  /** choice: the option keys (string values); score: the level labels, lowest first; predicate: none. */
  values: string[];
}

/** One upstream call: its serialised body and what it must answer, in order. */
export interface DecisionsCall {
  body: string;
  expected: ExpectedDecision[];
}

export class DecisionsPrepared implements PreparedJudgment {
  readonly inputTokensExact = false;
  constructor(
    readonly calls: DecisionsCall[],
    /** An upper bound of what the upstream may bill for all the calls together. */
    readonly inputTokens: number,
  ) {}
}

/** The hosted service's only model; a self-hosted Decisions server takes it as an alias of its own. */
export const DEFAULT_DECISIONS_MODEL = "gpt-6-luna";

/**
 * Validates the prompt against the upstream's limits (options, levels: a 400 before anything is
 * sent) and builds the calls: at most `limits.questions` questions each, so a request over it is
 * split rather than refused. The hold bounds every call, the state counted once per call.
 */
export function prepareDecisionsRequest(
  prompt: JudgmentPrompt,
  options: { model: string; limits: UpstreamLimits; maxRequestTokens: number },
): DecisionsPrepared {
  const source = prompt.source;
  if (!source || source.questions.length !== prompt.questions.length) {
    throw new Error("the decisions gateway needs the request's own questions: build the prompt with buildPrompt");
  }
  checkUpstreamLimits(source.questions, { ...options.limits, questions: Number.POSITIVE_INFINITY });
  const size = options.limits.questions;
  const input = renderValue(source.state, source.numberTexts);
  const calls: DecisionsCall[] = [];
  let inputTokens = 0;
  for (let start = 0; start < source.questions.length; start += size) {
    const indices = source.questions.slice(start, start + size).map((_, k) => start + k);
    inputTokens += inputTokensUpperBound({ ...prompt, questions: indices.map((i) => prompt.questions[i]) });
    const questions = indices.map((i) => decisionsQuestion(source.questions[i], upstreamId(i), source.numberTexts));
    calls.push({
      body: JSON.stringify({ model: options.model, input, questions: questions.map((q) => q.sent) }),
      expected: questions.map((q) => q.expected),
    });
  }
  if (inputTokens > options.maxRequestTokens) {
    throw new BudgetError(
      `the request may need up to ${inputTokens} input tokens (counted as UTF-8 bytes: the gateway has no tokenizer), ` +
        `over the limit of ${options.maxRequestTokens} per request`,
    );
  }
  return new DecisionsPrepared(calls, inputTokens);
}

function decisionsQuestion(
  question: Question,
  name: string,
  numberTexts: NumberTexts | undefined,
): { sent: Record<string, unknown>; expected: ExpectedDecision } {
  const render = (value: unknown) => renderValue(value, numberTexts);
  const instructions = render(question.instructions);
  switch (question.type) {
    case "noul": {
      const lines = [instructions];
      const ifTrue = render(question.criteria?.true);
      const ifFalse = render(question.criteria?.false);
      // The same words as our own prompt in every cue style (judgment/prompt.ts), so this service upstream reads the same text.
      if (ifTrue !== "") lines.push(`It holds when: ${ifTrue}`);
      if (ifFalse !== "") lines.push(`It does not hold when: ${ifFalse}`);
      return { sent: { type: "predicate", name, instructions: lines.join("\n") }, expected: { name, type: "predicate", values: [] } };
    }
    case "choice": {
      const entries = Object.entries(question.criteria);
      const choices = entries.map(([value, description]) => {
        const text = render(description);
        return text === "" ? { value } : { value, description: text };
      });
      return { sent: { type: "choice", name, instructions, choices }, expected: { name, type: "choice", values: entries.map(([value]) => value) } };
    }
    case "score": {
      const labels = question.criteria.map((level) => render(level));
      const levels = labels.map((label) => ({ label }));
      return { sent: { type: "score", name, instructions, levels }, expected: { name, type: "score", values: labels } };
    }
  }
}
