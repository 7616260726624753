import type { Question } from "./schema.js";
import { renderValue } from "./render.js";
import { choiceLabels, NOUL_LABELS, scoreLabels } from "./labels.js";

/**
 * What the engine needs to answer a request: one shared prefix (system text + state) and, per
 * question, the text that follows it and the labels whose probabilities are read.
 * Question ids appear nowhere here: the model never sees them.
 */
export interface PromptQuestion {
  text: string;
  labels: string[];
}

export interface JudgmentPrompt {
  system: string;
  state: string;
  questions: PromptQuestion[];
  /**
   * The request's own state and questions (still no ids), for an engine that forwards them to
   * a server rendering its own prompt (the System One gateway) rather than reading this text.
   */
  source?: { state: unknown; questions: readonly Question[] };
  /** Asks the engine for label diagnostics (`x_diagnostics`); engines that cannot read them ignore it. */
  diagnostics?: boolean;
}

export const SYSTEM_TEXT =
  "You are a careful, impartial judge. Read the state, then answer the question about it " +
  "with nothing but the requested label.";

/**
 * How the prompt is laid out: the variants `scripts/prompt-ab.ts` compares on real models (README,
 * "Prompt and readout A/B"). The default is the one the measurements chose.
 */
export interface PromptStyle {
  /** Choice labels: letters A, B, … or digits 1…9 (letters beyond 9 options, where digits would not be one token). */
  choiceLabels: "letters" | "digits";
  /** The judge's standing instructions: in the system text (Gemma's template folds it into the user turn), or left out. */
  system: "judge" | "none";
}

export const DEFAULT_PROMPT_STYLE: PromptStyle = { choiceLabels: "letters", system: "judge" };

export function buildPrompt(state: unknown, questions: Question[], style: PromptStyle = DEFAULT_PROMPT_STYLE): JudgmentPrompt {
  return {
    system: style.system === "judge" ? SYSTEM_TEXT : "",
    state: stateSection(state),
    questions: questions.map((q) => questionPrompt(q, style)),
    source: { state, questions },
  };
}

/** Ends with a blank line so the question's tokens start on a clean boundary. */
function stateSection(state: unknown): string {
  const text = renderValue(state);
  return `State:\n${text === "" ? "(empty)" : text}\n\n`;
}

export function questionPrompt(question: Question, style: PromptStyle = DEFAULT_PROMPT_STYLE): PromptQuestion {
  switch (question.type) {
    case "choice":
      return choicePrompt(question.instructions, Object.entries(question.criteria), style);
    case "noul":
      return noulPrompt(question.instructions, question.criteria ?? {});
    case "score":
      return scorePrompt(question.instructions, question.criteria);
  }
}

function choicePrompt(instructions: unknown, options: [string, unknown][], style: PromptStyle): PromptQuestion {
  const digits = style.choiceLabels === "digits" && options.length <= 9;
  const labels = digits ? options.map((_, i) => String(i + 1)) : choiceLabels(options.length);
  const lines = options.map(([key, description], i) => {
    const text = renderValue(description);
    return text === "" ? `${labels[i]}. ${key}` : `${labels[i]}. ${key}: ${text}`;
  });
  const code = digits ? "number" : labels[0].length === 1 ? "letter" : "two-letter code";
  const text =
    `Question: ${renderValue(instructions)}\nOptions:\n${lines.join("\n")}\n` +
    `Answer with the ${code} of the best option.`;
  return { text, labels };
}

function noulPrompt(instructions: unknown, criteria: { true?: unknown; false?: unknown }): PromptQuestion {
  const ifTrue = renderValue(criteria.true);
  const ifFalse = renderValue(criteria.false);
  const lines = [`Statement: ${renderValue(instructions)}`];
  if (ifTrue !== "") lines.push(`It holds when: ${ifTrue}`);
  if (ifFalse !== "") lines.push(`It does not hold when: ${ifFalse}`);
  lines.push("Does the statement hold? Answer Yes or No.");
  return { text: lines.join("\n"), labels: [...NOUL_LABELS] };
}

function scorePrompt(instructions: unknown, levels: unknown[]): PromptQuestion {
  const labels = scoreLabels(levels.length);
  const lines = levels.map((description, i) => {
    const text = renderValue(description);
    return text === "" ? `${labels[i]}` : `${labels[i]}: ${text}`;
  });
  const text =
    `Question: ${renderValue(instructions)}\nLevels (lowest first):\n${lines.join("\n")}\n` +
    "Answer with the number of the level that fits best.";
  return { text, labels };
}
