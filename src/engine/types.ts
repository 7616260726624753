import type { JudgmentPrompt } from "../judgment/prompt.js";

/**
 * The engine reads label probabilities from a language model. It is split in two steps so the
 * exact token count (and so the exact charge) is known before the model runs.
 */
export interface JudgmentEngine {
  /** The model's own id, reported in responses. */
  readonly modelId: string;
  /** Settles when loading has ended, loaded or failed (engines that load nothing may omit it). */
  readonly ready?: Promise<void>;
  status(): EngineStatus;
  /** Tokenises the prompt and checks it against the budgets; throws `BudgetError`. */
  prepare(prompt: JudgmentPrompt): PreparedJudgment;
  /** Runs the model; throws `EngineUnavailableError` or `EngineFailedError`. */
  evaluate(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult>;
  close(): Promise<void>;
}

export type EngineStatus =
  | { state: "loading"; detail: string }
  | { state: "ready" }
  | { state: "failed"; detail: string };

export interface PreparedJudgment {
  /** Tokens the model will read: the shared prefix once plus each question's own tokens. */
  readonly inputTokens: number;
}

export interface EngineResult {
  /** Per question (in prompt order), log P(label) for each label, by the chain rule over its tokens. */
  labelLogProbs: number[][];
  inputTokens: number;
  /** Time the model spent evaluating, excluding time waiting for the model. */
  timingMs: number;
}

/** The request does not fit the model's context or the per-request token budget (a 400). */
export class BudgetError extends Error {
  override name = "BudgetError";
}

/** The model is not loaded (yet), or failed to load (a 502). */
export class EngineUnavailableError extends Error {
  override name = "EngineUnavailableError";
}

/** The model failed while evaluating (a 502). */
export class EngineFailedError extends Error {
  override name = "EngineFailedError";
}

/** The client went away; nothing was answered (the status is never seen, but it is logged). */
export class RequestAbortedError extends Error {
  override name = "RequestAbortedError";
}
