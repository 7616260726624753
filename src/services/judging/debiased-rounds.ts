import { BudgetError, UpstreamLimitError, type EngineResult, type PreparedJudgment } from "../../engine/types.js";
import { PresentationAverage, presentations, withOptionOrder, type DebiasMode } from "../../judgment/debias.js";
import { buildPrompt, type JudgmentPrompt, type PromptStyle } from "../../judgment/prompt.js";
import { plural } from "../../judgment/plural.js";
import type { NumberTexts } from "../../judgment/render.js";
import type { Question } from "../../judgment/schema.js";

/**
 * Runs a request with option-order debiasing (judgment/debias.ts) on the engine seam: every
 * question is expanded into its presentations, the whole expansion is prepared once (the budget
 * checks and the hold), then read in rounds over the same state prefix, so the engine's prefix
 * cache makes each later round read only question parts. A `shift` question stops being read
 * once its average settles; what was not read is not billed.
 */

/** The engine calls, bounded (time, client gone) by the caller: the route owns deadlines. */
export interface DebiasSteps {
  prepare(prompt: JudgmentPrompt): Promise<PreparedJudgment>;
  evaluate(prepared: PreparedJudgment): Promise<EngineResult>;
}

/** One question of the request and how it is shown: once, or once per rotation. */
interface Expansion {
  question: Question;
  shown: Question[];
  /** Index of its first presentation in the whole expansion. */
  first: number;
}

/** What has been read of one expansion so far. */
interface Reading {
  expansion: Expansion;
  read: number;
  /** Choice questions: the running average. Others: the one reading, as the engine gave it. */
  average?: PresentationAverage;
  raw?: number[];
}

export interface DebiasPlan {
  readonly mode: Exclude<DebiasMode, "none">;
  readonly state: unknown;
  readonly numberTexts?: NumberTexts;
  /** Every round is built in the style the whole expansion was prepared in. */
  readonly style: PromptStyle | "auto";
  readonly expansions: readonly Expansion[];
  /** The whole expansion, prepared: its `inputTokens` is the hold (an upper bound for `shift`). */
  readonly prepared: PreparedJudgment;
}

export interface DebiasedAnswer {
  /** The question the log-probabilities are over: the canonical order of a choice, else as asked. */
  shown: Question;
  labelLogProbs: number[];
}

export interface DebiasedResult {
  /** Per question of the request, in its order. */
  answers: DebiasedAnswer[];
  /**
   * What to bill, never above the hold: the prefix once and the question parts of the
   * presentations read where the engine counts them, else what each round's call reported.
   */
  inputTokens: number;
  timingMs: number;
  presentations: { read: number; planned: number };
}

/**
 * Expands and prepares. A refusal (budget, upstream limit) names the request's own question, so
 * the client's refusal points at what it sent; one about the whole request says how debiasing grew it.
 */
export async function planDebiased(
  state: unknown,
  questions: readonly Question[],
  mode: DebiasPlan["mode"],
  style: PromptStyle | "auto",
  prepare: DebiasSteps["prepare"],
  numberTexts?: NumberTexts,
): Promise<DebiasPlan> {
  let first = 0;
  const expansions = questions.map((question): Expansion => {
    const shown = presentations(question, mode);
    first += shown.length;
    return { question, shown, first: first - shown.length };
  });
  const owner = expansions.flatMap((e, i) => e.shown.map(() => i));
  try {
    const prepared = await prepare(
      buildPrompt(
        state,
        expansions.flatMap((e) => e.shown),
        style,
        numberTexts,
      ),
    );
    return { mode, state, numberTexts, style, expansions, prepared };
  } catch (error) {
    if (!(error instanceof BudgetError) && !(error instanceof UpstreamLimitError)) throw error;
    const index = error.questionIndex === undefined ? undefined : owner[error.questionIndex];
    const why =
      index !== undefined || owner.length === questions.length
        ? error.message
        : `${error.message} (x_debias "${mode}" counts each question once per presentation: ${owner.length} for ${plural(questions.length, "question")})`;
    throw error instanceof UpstreamLimitError ? new UpstreamLimitError(why, index) : new BudgetError(why, index);
  }
}

/** Reads the plan round by round; the first round is the prepared expansion itself when it is all of it. */
export async function judgeDebiased(plan: DebiasPlan, steps: DebiasSteps): Promise<DebiasedResult> {
  const readings: Reading[] = plan.expansions.map((expansion) => ({ expansion, read: 0 }));
  const total = plan.expansions.reduce((n, e) => n + e.shown.length, 0);
  const read: number[] = [];
  let roundTokens = 0;
  let timingMs = 0;
  // Round 1: every question, and a second rotation of each shift question (settling needs two).
  let round = readings.flatMap((r) => r.expansion.shown.slice(0, plan.mode === "shift" ? 2 : 1).map((_, j) => ({ r, j })));
  while (round.length > 0) {
    const shown = round.map(({ r, j }) => r.expansion.shown[j]);
    const prepared = round.length === total ? plan.prepared : await steps.prepare(buildPrompt(plan.state, shown, plan.style, plan.numberTexts));
    const result = await steps.evaluate(prepared);
    roundTokens += result.inputTokens;
    timingMs += result.timingMs;
    round.forEach(({ r, j }, i) => {
      record(r, shown[i], result.labelLogProbs[i]);
      read.push(r.expansion.first + j);
    });
    round = readings.filter((r) => r.read < r.expansion.shown.length && !r.average?.settled()).map((r) => ({ r, j: r.read }));
  }
  return {
    answers: readings.map(answerOf),
    inputTokens: Math.min(tokensRead(plan.prepared, read, roundTokens), plan.prepared.inputTokens),
    timingMs,
    presentations: { read: read.length, planned: total },
  };
}

function record(reading: Reading, shown: Question, labelLogProbs: number[]): void {
  reading.read++;
  if (shown.type !== "choice") {
    reading.raw = labelLogProbs;
    return;
  }
  reading.average ??= new PresentationAverage(Object.keys(shown.criteria));
  reading.average.add(Object.keys(shown.criteria), labelLogProbs);
}

function answerOf({ expansion, average, raw }: Reading): DebiasedAnswer {
  const { question } = expansion;
  if (question.type !== "choice" || !average) return { shown: question, labelLogProbs: raw! };
  return { shown: withOptionOrder(question, average.canonical), labelLogProbs: average.mean() };
}

/**
 * With per-question counts (exact engines): the prefix once and the presentations read. Without
 * (the gateway, whose upstream bills each call): what each round's call reported.
 */
function tokensRead(prepared: PreparedJudgment, read: readonly number[], roundTokens: number): number {
  const perQuestion = prepared.questionTokens;
  if (!prepared.inputTokensExact || !perQuestion) return roundTokens;
  const prefix = prepared.inputTokens - perQuestion.reduce((a, b) => a + b, 0);
  return read.reduce((sum, i) => sum + perQuestion[i], prefix);
}
