import type { JudgmentEngine } from "../../engine/types.js";
import type { Temperatures } from "../../judgment/answers.js";
import type { DebiasMode } from "../../judgment/debias.js";
import type { NumberTexts } from "../../judgment/render.js";
import type { Question } from "../../judgment/schema.js";
import type { Payer } from "../billing.js";
import type { TaskSelection } from "./task-heads.js";

/**
 * The one request that crosses into judging. Each route maps its wire format to the questions
 * and how to answer them; the edge adds what it knows of the request (who asks, its
 * Idempotency-Key, the client's signal, the models to try). Nothing else reaches judge().
 */
export interface JudgmentRequest {
  state: unknown;
  /** The questions' ids, in order: named in a refusal's message. */
  ids: string[];
  questions: Question[];
  includeLogits: boolean;
  debias: DebiasMode;
  /** `x_diagnostics`: label mass and top token per answer. */
  diagnostics?: boolean;
  /** `x_calibration: "contextual"`: divide each answer by the question's answer about content-free states. */
  contextual?: boolean;
  /** The body's numbers as the client wrote them, where JSON.parse changed them (http/json-numbers.ts): the prompt prints them so. */
  numberTexts?: NumberTexts;
  caller: Payer;
  requestId: string;
  /** The client's Idempotency-Key, already validated; undefined when it sent none. */
  idempotencyKey: string | undefined;
  /** The digest of the body as read: a retry's Idempotency-Key compares it. */
  bodyDigest: string;
  /** Aborted when the client leaves. */
  signal: AbortSignal;
  /**
   * The model asked, then those that answer in turn while it is down (its fallbacks): never
   * empty. A fallback is tried only when a model is unavailable, never after a charge.
   */
  models: readonly ModelChoice[];
  /** `x_task`: the task named, resolved in the key's account; its matching questions are answered through its heads. */
  task?: TaskSelection;
  /**
   * A task's fit reads its examples through this flow, billed like requests: the answers then
   * carry the raw readings: the label log-probabilities, and with "features" the hidden states
   * too where the engine gives them (an extra evaluation per question, only level 2 needs).
   */
  collectReadings?: "labels" | "features";
}

/** One served model of the chain, as judging needs it: the route maps the registry's chain to these. */
export interface ModelChoice {
  id: string;
  engine: JudgmentEngine;
  /** price_multiplier in thousandths. */
  multiplierMilli: number;
  /** Read per request: a calibration profile applies once the model it names is loaded. */
  temperatures: () => Temperatures;
  /** Where the weights come from (ServedModel.source): a task's version is bound to it. */
  source?: string;
}
