import { buildPrompt, promptStyleSetting, type JudgmentPrompt, type PromptCuesSetting, type PromptStyle } from "../../judgment/prompt.js";
import type { EngineResult, JudgmentEngine, LabelDiagnostics, PreparedJudgment } from "../../engine/types.js";
import { CONTENT_FREE_STATES, contentFreeDistribution, contextuallyCalibrated } from "../../judgment/contextual.js";
import { BudgetError, RequestAbortedError, UpstreamLimitError } from "../../engine/types.js";
import { JudgingRefusal } from "./errors.js";
import { stepOf, type Deadline } from "./deadline.js";
import { buildAnswer, keyedLogits } from "../../judgment/answers.js";
import { answerInClientOrder, type DebiasMode } from "../../judgment/debias.js";
import type { Answer } from "../../judgment/schema.js";
import { judgeDebiased, planDebiased, type DebiasedResult, type DebiasSteps } from "./debiased-rounds.js";
import { evaluateWithin, modelTimeout } from "./model.js";
import type { JudgmentRequest, ModelChoice } from "./request.js";
import { readKey, type ReadCache } from "./read-cache.js";
import { bindingOf, needsFeatures, planTask, promptQuestions, taskAnswer, type ModelBinding, type TaskPlan } from "./task-heads.js";

/**
 * The model side of the judging flow (judge.ts): prepared before the charge is
 * held (which needs its token count), answered after. Without debiasing one prepare and one
 * evaluate, as always; with it, the rounds of debiased-rounds.ts. What comes back is our
 * answers, in question order; each route writes them in its own wire format.
 */

export interface PendingJudgment {
  /** Tokens to hold the charge for. */
  inputTokens: number;
  /** Runs the model: the answers, and the tokens to settle at when not the hold. */
  answer(): Promise<{ judged: Judged; actualInputTokens?: number }>;
}

/** What the model answered, before any wire format. */
export interface Judged {
  /** The model that answered. */
  model: string;
  /** One per question, in question order (with `logits` when asked). */
  answers: Answer[];
  /** What the request is billed for: the tokens read. */
  inputTokens: number;
  /** The model's own evaluation time, every round together. */
  timingMs: number;
  /** Per question, when `x_diagnostics` asked for them. */
  diagnostics?: LabelDiagnostics[];
  /** Present when debiased: question presentations read, of those held for. */
  debias?: { mode: Exclude<DebiasMode, "none">; presentations_read: number; presentations: number };
  /** When the request collected readings (a task's fit): per question the raw label log-probabilities, the hidden states where the engine gives them, and what the model was bound to. */
  readings?: { logProbs: number[][]; features?: Float32Array[]; binding: ModelBinding };
}

/**
 * `deadline`: the request's one deadline, over preparing and answering (and every model tried);
 * aborted when the client leaves too. `promptCues`: JUDGE_PROMPT_CUES; `auto` (the default)
 * styles the prompt for the engine's template family.
 */
export async function prepareJudgment(
  model: ModelChoice,
  request: JudgmentRequest,
  deadline: Deadline,
  promptCues?: PromptCuesSetting,
  readCache?: ReadCache,
): Promise<PendingJudgment> {
  const mode = request.debias;
  if (request.diagnostics) refuseDiagnostics(model.engine, mode);
  if (request.contextual && mode !== "none") {
    throw new JudgingRefusal(
      "invalid_request",
      `x_calibration "contextual" corrects the options as sent: use it with x_debias "none" (this request: "${mode}")`,
    );
  }
  if (request.task && (mode !== "none" || request.contextual)) {
    const what = mode !== "none" ? `x_debias "${mode}"` : 'x_calibration "contextual"';
    throw new JudgingRefusal(
      "invalid_request",
      `x_task answers through the task's heads, which were fitted on the options as sent: it cannot be used with ${what}`,
    );
  }
  // `auto`: the engine styles the prompt for its model's template as it tokenises it.
  const style = promptStyleSetting(promptCues);
  return mode === "none" ? preparePlain(model, request, deadline, style, readCache) : prepareDebiased(model, request, deadline, mode, style);
}

/**
 * Diagnostics describe the one presentation the client sent, read over the whole vocabulary:
 * only the in-process engine reads that, and a debiased answer mixes several presentations.
 */
function refuseDiagnostics(engine: JudgmentEngine, mode: DebiasMode): void {
  if (engine.description.kind !== "llama") {
    throw new JudgingRefusal("invalid_request", `x_diagnostics needs the in-process engine (JUDGE_ENGINE=llama); this server uses ${engine.description.kind}`);
  }
  if (mode !== "none") {
    throw new JudgingRefusal(
      "invalid_request",
      `x_diagnostics describes the answer to the options as sent: use it with x_debias "none" (this request: "${mode}")`,
    );
  }
}

async function preparePlain(
  model: ModelChoice,
  input: JudgmentRequest,
  deadline: Deadline,
  style: PromptStyle | "auto",
  readCache: ReadCache | undefined,
): Promise<PendingJudgment> {
  const { engine } = model;
  const { state, ids, questions, numberTexts } = input;
  const binding = input.task || input.collectReadings ? await bindingOf(model, style) : undefined;
  const plan: TaskPlan | undefined = input.task && binding && planTask(input.task, binding, ids, questions, engine.readFeatures !== undefined);
  const features = needsFeatures(plan) || input.collectReadings === "features";
  const shown = promptQuestions(plan, questions);
  const prompt = { ...buildPrompt(state, shown, style, numberTexts), ...(input.diagnostics && { diagnostics: true }) };
  const prepared = await explainingRefusals(ids, () => prepareWithin(engine, prompt, deadline));
  // The content-free prompts are read like any other, so they are held for and billed.
  const contentFree = input.contextual
    ? await explainingRefusals(ids, () =>
        Promise.all(CONTENT_FREE_STATES.map((cf) => prepareWithin(engine, buildPrompt(cf, questions, style, numberTexts), deadline))),
      )
    : [];
  const exact = prepared.inputTokensExact && contentFree.every((p) => p.inputTokensExact);
  const hold = prepared.inputTokens + contentFree.reduce((sum, p) => sum + p.inputTokens, 0);
  return {
    inputTokens: hold,
    async answer() {
      // Only a strict engine's plain read is kept (read-cache.ts): there a kept read is the read.
      const key =
        readCache && contentFree.length === 0 && !input.diagnostics && engine.description.exactness?.mode === "strict"
          ? readKey(input.caller.accountId, model.id, engine.modelId, prompt)
          : undefined;
      const kept = key ? readCache!.get(key) : undefined;
      const result =
        kept?.result ??
        (contentFree.length === 0 ? await evaluateWithin(engine, prepared, deadline) : await evaluateContextual(engine, prepared, contentFree, deadline));
      // The hidden states are read from the same prepared tokens: one more pass where the engine cannot give both at once.
      const read =
        features && engine.readFeatures
          ? kept?.features
            ? { features: kept.features, timingMs: 0 }
            : await readFeaturesWithin(engine, prepared, deadline)
          : undefined;
      if (key && (!kept || (read && !kept.features))) readCache!.set(key, { result, ...(read && { features: read.features }) });
      // A hold for an upper bound (the gateway) is settled at what was read, never above the hold.
      const billed = exact ? hold : Math.min(result.inputTokens, hold);
      const answers = shown.map((q, i) => {
        const plain = buildAnswer(q, result.labelLogProbs[i], model.temperatures());
        const answer = input.includeLogits ? { ...plain, logits: keyedLogits(q, result.labelLogProbs[i]) } : plain;
        return plan ? taskAnswer(plan, i, questions[i], answer, result.labelLogProbs[i], read?.features[i], input.includeLogits) : answer;
      });
      const judged: Judged = {
        model: engine.modelId,
        answers,
        inputTokens: billed,
        timingMs: (kept ? 0 : result.timingMs) + (read?.timingMs ?? 0),
        ...(input.diagnostics && result.diagnostics && { diagnostics: result.diagnostics }),
        ...(input.collectReadings && binding && { readings: { logProbs: result.labelLogProbs, ...(read && { features: read.features }), binding } }),
      };
      return { judged, actualInputTokens: exact ? undefined : billed };
    },
  };
}

async function prepareDebiased(
  model: ModelChoice,
  input: JudgmentRequest,
  deadline: Deadline,
  mode: Exclude<DebiasMode, "none">,
  style: PromptStyle | "auto",
): Promise<PendingJudgment> {
  const { engine } = model;
  const { state, ids, questions } = input;
  const plan = await explainingRefusals(ids, () =>
    planDebiased(state, questions, mode, style, (prompt) => prepareWithin(engine, prompt, deadline), input.numberTexts),
  );
  const hold = plan.prepared.inputTokens;
  return {
    inputTokens: hold,
    async answer() {
      // Every round within the request's one deadline, as without debiasing.
      const steps: DebiasSteps = {
        prepare: (prompt) => prepareWithin(engine, prompt, deadline),
        evaluate: (prepared) => evaluateWithin(engine, prepared, deadline),
      };
      let result: DebiasedResult;
      try {
        result = await judgeDebiased(plan, steps);
      } catch (error) {
        throw deadline.timedOut ? modelTimeout(deadline.timeoutMs) : error;
      }
      const answers = result.answers.map((a, i) => answerInClientOrder(questions[i], a.shown, a.labelLogProbs, model.temperatures(), input.includeLogits));
      const judged: Judged = {
        model: engine.modelId,
        answers,
        inputTokens: result.inputTokens,
        timingMs: result.timingMs,
        debias: { mode, presentations_read: result.presentations.read, presentations: result.presentations.planned },
      };
      const settledAtHold = plan.prepared.inputTokensExact && result.inputTokens === hold;
      return { judged, actualInputTokens: settledAtHold ? undefined : result.inputTokens };
    },
  };
}

/** The request and its content-free prompts within the request's deadline; answers divided by the content-free ones. */
async function evaluateContextual(
  engine: JudgmentEngine,
  prepared: PreparedJudgment,
  contentFree: PreparedJudgment[],
  deadline: Deadline,
): Promise<EngineResult> {
  try {
    const result = await evaluateWithin(engine, prepared, deadline);
    const free: EngineResult[] = [];
    for (const p of contentFree) free.push(await evaluateWithin(engine, p, deadline));
    const labelLogProbs = result.labelLogProbs.map((lp, i) => contextuallyCalibrated(lp, contentFreeDistribution(free.map((r) => r.labelLogProbs[i]))));
    const sum = (f: (r: EngineResult) => number) => free.reduce((total, r) => total + f(r), f(result));
    return { ...result, labelLogProbs, inputTokens: sum((r) => r.inputTokens), timingMs: sum((r) => r.timingMs) };
  } catch (error) {
    throw deadline.timedOut ? modelTimeout(deadline.timeoutMs) : error;
  }
}

/** The hidden states within the request's deadline, as evaluating is. */
async function readFeaturesWithin(engine: JudgmentEngine, prepared: PreparedJudgment, deadline: Deadline) {
  const step = stepOf(deadline);
  try {
    return await engine.readFeatures!(prepared, step.signal);
  } catch (error) {
    throw error instanceof RequestAbortedError && step.timedOut ? modelTimeout(deadline.timeoutMs) : error;
  } finally {
    step.dispose();
  }
}

/** Tokenising (and loading a model on demand) may take long, so it counts in the request's deadline and ends with the client. */
async function prepareWithin(engine: JudgmentEngine, prompt: JudgmentPrompt, deadline: Deadline): Promise<PreparedJudgment> {
  const step = stepOf(deadline);
  try {
    return await engine.prepare(prompt, step.signal);
  } catch (error) {
    throw error instanceof RequestAbortedError && step.timedOut ? modelTimeout(deadline.timeoutMs) : error;
  } finally {
    step.dispose();
  }
}

/** A preparation refused (budget, upstream limit) is the client's fault: its message names the question by the client's id. */
async function explainingRefusals<T>(ids: string[], prepare: () => Promise<T>): Promise<T> {
  try {
    return await prepare();
  } catch (error) {
    if (!(error instanceof BudgetError || error instanceof UpstreamLimitError) || error.questionIndex === undefined) throw error;
    const why = `question ${JSON.stringify(ids[error.questionIndex])}: ${error.message}`;
    throw error instanceof UpstreamLimitError ? new UpstreamLimitError(why) : new BudgetError(why);
  }
}
