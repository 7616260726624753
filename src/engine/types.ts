import type { JudgmentPrompt, TemplateFamily } from "../judgment/prompt.js";
import type { LabelDiagnostics } from "./label-trie.js";

export type { LabelDiagnostics };

/**
 * The engine reads label probabilities from a language model. It is split in two steps so the
 * charge is known (exactly, or as an upper bound) before the model runs.
 */
export interface JudgmentEngine {
  /** The model's own id, reported in responses. */
  readonly modelId: string;
  /** Which engine serves, on what (logged at start and shown by /health). */
  readonly description: EngineDescription;
  /**
   * The chat format of the model's template, once loaded or connected: the prompt is styled for
   * it. Absent where no template is applied here (the gateways render their own prompts).
   */
  readonly templateFamily?: TemplateFamily;
  /** Settles when loading has ended, loaded or failed (engines that load nothing may omit it). */
  readonly ready?: Promise<void>;
  /** Remote engines ask their server (bounded by their timeout); /health awaits this. */
  status(): EngineStatus | Promise<EngineStatus>;
  /**
   * Tokenises the prompt (over HTTP for remote engines) and checks it against the budgets;
   * throws `BudgetError`, or `RequestAbortedError` once `signal` aborts.
   */
  prepare(prompt: JudgmentPrompt, signal?: AbortSignal): Promise<PreparedJudgment>;
  /** Runs the model; throws `EngineUnavailableError`, `EngineFailedError` or `UpstreamRejectedError`. */
  evaluate(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineResult>;
  /**
   * The model's final hidden state (after the output norm, before the LM head) at each
   * question's answer position: the last token of the very sequence the readout reads for it
   * (the prefix and that question's tokens), whose logits give the first label token. Task heads
   * (issue 34, level 2) fit on these. Deterministic: the same request gives the same bits alone
   * and beside other traffic. Throws as `evaluate` does. Engines whose API cannot give it beside
   * the readout omit it, and tasks fall back to heads on the label log-probabilities.
   */
  readFeatures?(prepared: PreparedJudgment, signal?: AbortSignal): Promise<EngineFeatures>;
  close(): Promise<void>;
  /** Running totals of the prefix cache, for /metrics; engines that cannot tell omit it. */
  stats?(): EngineStats;
}

export interface EngineStats {
  /** Prefix (system text + state) tokens found already cached. */
  prefixTokensReused: number;
  /** Prefix tokens the model had to read. */
  prefixTokensEvaluated: number;
}

export type EngineKind = "llama" | "llama-server" | "vllm" | "sglang" | "systemone" | "decisions";

export interface EngineDescription {
  kind: EngineKind;
  /** In-process: the compute backend (cpu, cuda, vulkan, metal); remote: the server's URL, no credentials. */
  backend: string;
  /** States kept cached at once (in-process slots, llama-server slots); absent where the server decides. */
  slots?: number;
  /** The exactness contract served (JUDGE_EXACTNESS) and what the start-up probe measured; absent until measured. */
  exactness?: ExactnessReport;
}

/**
 * strict: answers independent of caching and other traffic by construction (fixed shapes, one
 * request at a time); tolerant: parallel and batched, within a bound the start-up probe checks.
 */
export interface ExactnessReport {
  mode: "strict" | "tolerant";
  /** The largest |Δp| accepted at start-up (JUDGE_EXACTNESS_BOUND, or 1e-9 in strict). */
  bound: number;
  /** The probe's figure: max |Δp| between a cached and a fresh read, and alone against beside other traffic. */
  measured?: number;
  /** What the backend says of its own determinism, where it says (vLLM batch invariance, SGLang deterministic inference). */
  backendMode?: string;
}

export type EngineStatus = { state: "loading"; detail: string } | { state: "ready" } | { state: "failed"; detail: string };

export interface PreparedJudgment {
  /**
   * Tokens to hold the charge for: exactly what the model will read (the shared prefix once plus
   * each question's own tokens) when `inputTokensExact`, otherwise an upper bound of it.
   */
  readonly inputTokens: number;
  /** False for engines that cannot count before asking (the gateway); the result then says what was read. */
  readonly inputTokensExact: boolean;
  /**
   * Each question's own billed tokens (prompt order), where the engine counts them: `inputTokens`
   * less their sum is the shared prefix. A caller that evaluates the questions in several rounds
   * over the same prefix (option-order debiasing) bills the prefix once plus the questions read.
   */
  readonly questionTokens?: readonly number[];
}

export interface EngineFeatures {
  /** One vector per question, in prompt order, of the model's embedding length. */
  features: Float32Array[];
  /** Time the model spent on them, excluding time waiting for the model. */
  timingMs: number;
}

export interface EngineResult {
  /** Per question (in prompt order), log P(label) for each label, by the chain rule over its tokens. */
  labelLogProbs: number[][];
  /** Per question, when the prompt asked for `diagnostics` and the engine reads the whole vocabulary. */
  diagnostics?: LabelDiagnostics[];
  /** Tokens read: equal to the prepared count when it was exact; what the upstream reports otherwise. */
  inputTokens: number;
  /** Time the model spent evaluating, excluding time waiting for the model. */
  timingMs: number;
}

/** A request refused while preparing, because of one of its questions or of the whole request: the client's to fix. */
abstract class PreparationRefusal extends Error {
  /** The question (index in prompt order) at fault, when one question is the cause. */
  readonly questionIndex?: number;
  constructor(message: string, questionIndex?: number) {
    super(message);
    this.questionIndex = questionIndex;
  }
}

/** The request does not fit the model's context or the per-request token budget (`over_budget`). */
export class BudgetError extends PreparationRefusal {
  override name = "BudgetError";
}

/**
 * The request is over the upstream server's limits (options per choice, levels per score,
 * questions per request): `over_upstream_limit`, raised while preparing, so nothing has
 * been sent upstream or held. Not a BudgetError: the client can fix it only by splitting the
 * request, not by shortening text, and the code says which limit it met.
 */
export class UpstreamLimitError extends PreparationRefusal {
  override name = "UpstreamLimitError";
}

/** The model is not loaded (yet), failed to load, or its server cannot be reached (`model_unavailable`). */
export class EngineUnavailableError extends Error {
  override name = "EngineUnavailableError";
  constructor(
    message: string,
    /**
     * What API clients are told instead of `message`, when that names the server's own settings
     * (its key, its upstream's account): the message is then for the operator's log and /health.
     */
    readonly clientMessage?: string,
  ) {
    super(message);
  }
}

/** The model failed while evaluating, or its server answered with something unusable (`model_failed`). */
export class EngineFailedError extends Error {
  override name = "EngineFailedError";
  /** What API clients are told instead of `message`, when that names the server (its URL) or quotes it. */
  readonly clientMessage?: string;
  constructor(message: string, options?: ErrorOptions & { clientMessage?: string }) {
    super(message, options);
    this.clientMessage = options?.clientMessage;
  }
}

/** An upstream refused the request itself (its 4xx): the client's request is at fault (`upstream_rejected`). */
export class UpstreamRejectedError extends Error {
  override name = "UpstreamRejectedError";
}

/**
 * The request holds text this engine cannot send faithfully (control-token text that the
 * server's tokenizer would read as a control token): the client must change it (`invalid_request`).
 */
export class UnsupportedTextError extends Error {
  override name = "UnsupportedTextError";
}

/** The client went away; nothing was answered (the status is never seen, but it is logged). */
export class RequestAbortedError extends Error {
  override name = "RequestAbortedError";
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RequestAbortedError("the client closed the request before it was answered");
}
