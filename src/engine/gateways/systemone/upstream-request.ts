import type { JudgmentPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { keyed } from "../../../judgment/keyed.js";
import { BudgetError, UpstreamLimitError, type PreparedJudgment } from "../../types.js";

/**
 * What the gateway sends upstream, built from the request's own questions (never our rendered
 * prompt: the upstream renders its own), and what it expects back.
 */

export interface UpstreamLimits {
  options: number;
  levels: number;
  questions: number;
}

/** One question as the upstream will answer it: its id there, its type, and the keys of its answer. */
export interface ExpectedAnswer {
  id: string;
  type: Question["type"];
  /** choice: the option names; score: "0".."n-1"; noul: "true", "false" (the keys of `logits`). */
  keys: string[];
}

/** Always the last field of the body, so the request without it is a cut, not a second serialisation. */
const LOGITS_FIELD = ',"include_logits":true}';

export class SystemOnePrepared implements PreparedJudgment {
  readonly inputTokensExact = false;
  constructor(
    /** The upstream request, serialised once, ending with `include_logits`. */
    readonly body: string,
    readonly expected: ExpectedAnswer[],
    /** An upper bound of what the upstream may bill (see `inputTokensUpperBound`). */
    readonly inputTokens: number,
  ) {}

  /** The same request without `include_logits`, for an upstream that refuses unknown fields. */
  bodyWithoutLogits(): string {
    return `${this.body.slice(0, -LOGITS_FIELD.length)}}`;
  }
}

/**
 * Chat-template tokens a message may add beyond its text: role markers, separators, BOS/EOS
 * (ChatML, Llama 3 and Gemma add 5 per message, Mistral fewer), plus one for a SentencePiece
 * dummy prefix on each separately tokenised piece. 16 leaves room for longer templates.
 */
export const TEMPLATE_TOKENS_PER_MESSAGE = 16;
/** The prefix is a system message and the state's user message. */
export const PREFIX_MESSAGES = 2;
/** Each question is a user message and the assistant header its label follows. */
export const QUESTION_MESSAGES = 2;

/**
 * An upper bound of the input tokens an upstream bills for this prompt, without its tokenizer:
 * UTF-8 bytes of the system text and state, once, and per question of its text and its labels,
 * plus TEMPLATE_TOKENS_PER_MESSAGE per message. Byte-level BPE (GPT-2, Llama 3, Qwen) never
 * gives more than one token per byte, since merges only shorten; SentencePiece gives at most one
 * per character, or per byte with byte fallback. So it bounds any upstream that reads the same
 * content once (the state shared by the questions, as this service does) with framing no longer
 * than ours plus the allowance. An upstream billing more (its own long system prompt, the state
 * once per question) is clamped to this bound: the client never pays more than was held.
 */
export function inputTokensUpperBound(prompt: Pick<JudgmentPrompt, "system" | "state" | "questions">): number {
  let tokens = utf8Bytes(prompt.system) + utf8Bytes(prompt.state) + PREFIX_MESSAGES * TEMPLATE_TOKENS_PER_MESSAGE;
  for (const question of prompt.questions) {
    tokens += utf8Bytes(question.text) + QUESTION_MESSAGES * TEMPLATE_TOKENS_PER_MESSAGE;
    for (const label of question.labels) tokens += utf8Bytes(label);
  }
  return tokens;
}

const utf8Bytes = (text: string) => Buffer.byteLength(text, "utf8");

/** Over the upstream's limits is refused here, before anything is sent or held; never truncated. */
export function checkUpstreamLimits(questions: readonly Question[], limits: UpstreamLimits): void {
  if (questions.length > limits.questions) {
    throw new UpstreamLimitError(`${questions.length} questions; the upstream server answers at most ${limits.questions} per request`);
  }
  questions.forEach((question, index) => {
    if (question.type === "choice") {
      const options = Object.keys(question.criteria).length;
      if (options > limits.options) {
        throw new UpstreamLimitError(`${options} options; the upstream server answers at most ${limits.options} per choice question`, index);
      }
    } else if (question.type === "score" && question.criteria.length > limits.levels) {
      throw new UpstreamLimitError(`${question.criteria.length} levels; the upstream server answers at most ${limits.levels} per score question`, index);
    }
  });
}

/** Ids sent upstream: the client's ids never reach the engine (the model must not see them). */
export const upstreamId = (index: number) => `q${index + 1}`;

/**
 * Validates the prompt against the limits and builds the upstream request. `include_logits`
 * asks an upstream that has the extension (this service does) for its uncalibrated
 * log-probabilities, so calibration stays ours; the ecosystem's servers ignore unknown fields
 * (one that refuses it is asked again without it: see the engine).
 */
export function prepareUpstreamRequest(
  prompt: JudgmentPrompt,
  options: { model: string; limits: UpstreamLimits; maxRequestTokens: number },
): SystemOnePrepared {
  const source = prompt.source;
  if (!source || source.questions.length !== prompt.questions.length) {
    throw new Error("the System One gateway needs the request's own questions: build the prompt with buildPrompt");
  }
  checkUpstreamLimits(source.questions, options.limits);
  const inputTokens = inputTokensUpperBound(prompt);
  if (inputTokens > options.maxRequestTokens) {
    throw new BudgetError(
      `the request may need up to ${inputTokens} input tokens (counted as UTF-8 bytes: the gateway has no tokenizer), ` +
        `over the limit of ${options.maxRequestTokens} per request`,
    );
  }
  const expected = source.questions.map((question, index) => ({ id: upstreamId(index), type: question.type, keys: answerKeys(question) }));
  const questions = keyed(
    expected.map((e) => e.id),
    source.questions.map(forwardedQuestion),
  );
  // An absent or null state is "" here, as it is for us; some upstreams refuse a missing state.
  const body = JSON.stringify({ model: options.model, state: source.state ?? "", questions }).slice(0, -1) + LOGITS_FIELD;
  return new SystemOnePrepared(body, expected, inputTokens);
}

/** Only the fields of the contract: whatever else the parsed question carries stays here. */
function forwardedQuestion(question: Question): Record<string, unknown> {
  return { type: question.type, instructions: question.instructions, criteria: question.criteria };
}

function answerKeys(question: Question): string[] {
  switch (question.type) {
    case "choice":
      return Object.keys(question.criteria);
    case "noul":
      return ["true", "false"];
    case "score":
      return question.criteria.map((_, i) => String(i));
  }
}
