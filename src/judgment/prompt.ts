import type { Question } from "./schema.js";
import { renderValue, type NumberTexts } from "./render.js";
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
  source?: { state: unknown; questions: readonly Question[]; numberTexts?: NumberTexts };
  /** Asks the engine for label diagnostics (`x_diagnostics`); engines that cannot read them ignore it. */
  diagnostics?: boolean;
  /**
   * Built with `auto` cues: the text above is the default style's, and an engine that applies a
   * chat template rebuilds it for its template's family (`styledFor`) when it tokenises. Chosen
   * there, not before, because only a loaded model knows its template, and a model may load (or
   * a server connect) between the two.
   */
  auto?: boolean;
}

export const SYSTEM_TEXT = "You are a careful, impartial judge. Read the state, then answer the question about it " + "with nothing but the requested label.";

/**
 * The system text of the short cues: how every type is answered is said once per request here,
 * so each question carries only its own content and a short cue.
 */
export const SHORT_CUES_SYSTEM_TEXT = SYSTEM_TEXT + " Answer options and levels by their number or letters, statements with Yes or No.";

/** The compact cues' system text: short cues for options and levels only (a statement keeps its full cue). */
export const COMPACT_CUES_SYSTEM_TEXT = SYSTEM_TEXT + " Answer options and levels by their number or letters.";

/**
 * How the prompt is laid out: the variants `scripts/prompt-ab.ts` compares on real models
 * (docs/evaluation/prompt-ab.md). The default is the one the measurements chose.
 */
export interface PromptStyle {
  /** Choice labels: letters A, B, … or digits 1…9 (letters beyond 9 options, where digits would not be one token). */
  choiceLabels: "letters" | "digits";
  /** The judge's standing instructions: in the system text (Gemma's template folds it into the user turn), or left out. */
  system: "judge" | "none";
  /**
   * The answer cue that ends each question: "full" spells the answer out in every question
   * ("Answer with the number of the best option."); "short" says how each type is answered
   * once in the system text and ends a question with a short cue ("Answer with a number.",
   * "Yes or No?"), so asking several questions in one request costs each only its own tokens.
   * "compact" is short for choices and scores and full for statements (short statement cues
   * cost Gemma 3 its noul quality; docs/evaluation/prompt-ab.md).
   */
  cues: "full" | "short" | "compact";
}

/**
 * Digits: on the held-out test split, numbered options beat letters on both real models (choice
 * NLL 1.42 → 1.16 and 2.41 → 1.26; docs/evaluation/prompt-ab.md). Full cues: the style for a
 * chat format no measurement has covered.
 */
export const DEFAULT_PROMPT_STYLE: PromptStyle = { choiceLabels: "digits", system: "judge", cues: "full" };

/** The chat format a model's template writes, as far as the prompt style cares (engine/chat-prompt.ts tells it). */
export type TemplateFamily = "chatml" | "gemma" | "other";

/** `JUDGE_PROMPT_CUES`: `auto` takes the measured cues for the model's chat format; the others fix them for every model. */
export type PromptCuesSetting = "auto" | PromptStyle["cues"];

/**
 * The cues the A/B chose per chat format, on dev and confirmed on the test split
 * (docs/evaluation/prompt-ab.md): short for ChatML (SmolLM2 overall NLL 1.102 → 1.045 dev, 1.152 →
 * 1.024 test), compact for Gemma (1.113 → 1.058, 1.142 → 1.074); both also bring the economy of
 * several questions in one request to 4×. No measurement covers another format: full cues.
 */
const CUES_BY_FAMILY: Record<TemplateFamily, PromptStyle["cues"]> = { chatml: "short", gemma: "compact", other: "full" };

/** The style a request is built with, for a model whose template family is `family` (undefined: not known). */
export function promptStyleFor(family: TemplateFamily | undefined, setting: PromptCuesSetting = "auto"): PromptStyle {
  const cues = setting !== "auto" ? setting : family === undefined ? DEFAULT_PROMPT_STYLE.cues : CUES_BY_FAMILY[family];
  return { ...DEFAULT_PROMPT_STYLE, cues };
}

/** `auto`: styled by the engine for its template family (see `JudgmentPrompt.auto`). */
export function buildPrompt(
  state: unknown,
  questions: Question[],
  style: PromptStyle | "auto" = DEFAULT_PROMPT_STYLE,
  numberTexts?: NumberTexts,
): JudgmentPrompt {
  const fixed = style === "auto" ? DEFAULT_PROMPT_STYLE : style;
  return {
    system: systemText(fixed),
    state: stateSection(renderValue(state, numberTexts)),
    questions: questions.map((q) => questionPrompt(q, fixed, numberTexts)),
    source: { state, questions, ...(numberTexts && { numberTexts }) },
    ...(style === "auto" && { auto: true }),
  };
}

/** The prompt as a model of `family` reads it: rebuilt in that family's style when built with `auto`, else as it is. */
export function styledFor(prompt: JudgmentPrompt, family: TemplateFamily): JudgmentPrompt {
  if (!prompt.auto || !prompt.source) return prompt;
  // The state section is the same in every style, so the (possibly large) state is not rendered again.
  const style = promptStyleFor(family);
  const { questions, numberTexts } = prompt.source;
  return { ...prompt, system: systemText(style), questions: questions.map((q) => questionPrompt(q, style, numberTexts)), auto: false };
}

/** What a request is built with under JUDGE_PROMPT_CUES: `auto` (styled by the engine), or one style for every model. */
export function promptStyleSetting(setting: PromptCuesSetting = "auto"): PromptStyle | "auto" {
  return setting === "auto" ? "auto" : promptStyleFor(undefined, setting);
}

const SYSTEM_TEXTS: Record<PromptStyle["cues"], string> = { full: SYSTEM_TEXT, short: SHORT_CUES_SYSTEM_TEXT, compact: COMPACT_CUES_SYSTEM_TEXT };

function systemText(style: PromptStyle): string {
  return style.system === "none" ? "" : SYSTEM_TEXTS[style.cues];
}

/** Ends with a blank line so the question's tokens start on a clean boundary. */
function stateSection(text: string): string {
  return `State:\n${text === "" ? "(empty)" : text}\n\n`;
}

/** `numberTexts`: the request's numbers as written (see NumberTexts), printed so in its descriptions. */
export function questionPrompt(question: Question, style: PromptStyle = DEFAULT_PROMPT_STYLE, numberTexts?: NumberTexts): PromptQuestion {
  const render = (value: unknown) => renderValue(value, numberTexts);
  switch (question.type) {
    case "choice":
      return choicePrompt(question.instructions, Object.entries(question.criteria), style, render);
    case "noul":
      return noulPrompt(question.instructions, question.criteria ?? {}, style, render);
    case "score":
      return scorePrompt(question.instructions, question.criteria, style, render);
  }
}

function choicePrompt(instructions: unknown, options: [string, unknown][], style: PromptStyle, render: Render): PromptQuestion {
  const digits = style.choiceLabels === "digits" && options.length <= 9;
  const labels = digits ? options.map((_, i) => String(i + 1)) : choiceLabels(options.length);
  const lines = options.map(([key, description], i) => {
    const text = render(description);
    return text === "" ? `${labels[i]}. ${key}` : `${labels[i]}. ${key}: ${text}`;
  });
  const code = digits ? "number" : labels[0].length === 1 ? "letter" : "two-letter code";
  const text =
    style.cues !== "full"
      ? `${render(instructions)}\n${lines.join("\n")}\nAnswer with a ${code}.`
      : `Question: ${render(instructions)}\nOptions:\n${lines.join("\n")}\nAnswer with the ${code} of the best option.`;
  return { text, labels };
}

function noulPrompt(instructions: unknown, criteria: { true?: unknown; false?: unknown }, style: PromptStyle, render: Render): PromptQuestion {
  const ifTrue = render(criteria.true);
  const ifFalse = render(criteria.false);
  const lines = [`Statement: ${render(instructions)}`];
  // The criteria read alike in every style: the decisions gateway writes them into a predicate's
  // instructions in these words (it cannot know the upstream's style), so this service upstream
  // reads what a direct request reads. Only the closing cue is short.
  if (ifTrue !== "") lines.push(`It holds when: ${ifTrue}`);
  if (ifFalse !== "") lines.push(`It does not hold when: ${ifFalse}`);
  lines.push(style.cues === "short" ? "Yes or No?" : "Does the statement hold? Answer Yes or No.");
  return { text: lines.join("\n"), labels: [...NOUL_LABELS] };
}

type Render = (value: unknown) => string;

function scorePrompt(instructions: unknown, levels: unknown[], style: PromptStyle, render: Render): PromptQuestion {
  const labels = scoreLabels(levels.length);
  const lines = levels.map((description, i) => {
    const text = render(description);
    return text === "" ? `${labels[i]}` : `${labels[i]}: ${text}`;
  });
  const text =
    style.cues !== "full"
      ? `${render(instructions)}\n${lines.join("\n")}\nAnswer with a number.`
      : `Question: ${render(instructions)}\nLevels (lowest first):\n${lines.join("\n")}\n` + "Answer with the number of the level that fits best.";
  return { text, labels };
}
