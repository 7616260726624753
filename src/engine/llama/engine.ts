import type { LlamaText } from "node-llama-cpp";
import { styledFor, type JudgmentPrompt } from "../../judgment/prompt.js";
import { branchTokenCount, buildLabelTrie, readLabelLogProbs, trieDepth, type LabelDiagnostics, type Token } from "../label-trie.js";
import { longestTokenBytes, refuseCertainlyOverBudget } from "../budget-bound.js";
import { loadModel, modelIdFrom, type LlamaGpu, type LoadedModel } from "./runtime.js";
import { createSequenceBrancher, type SequenceBrancher } from "./sequence-brancher.js";
import { createStrictBrancher } from "./strict-brancher.js";
import { strictReuse } from "../strict-shapes.js";
import { measureTolerance } from "./tolerance-probe.js";
import { createFeatureReader } from "./features.js";
import { createSerialQueue } from "../serial-queue.js";
import { createSlotRouter } from "../slot-router.js";
import {
  BudgetError,
  EngineFailedError,
  EngineUnavailableError,
  RequestAbortedError,
  throwIfAborted,
  type EngineDescription,
  type EngineStats,
  type EngineResult,
  type EngineStatus,
  type JudgmentEngine,
} from "../types.js";
import { PreparedTokens } from "../prepared-tokens.js";
import { messageOf } from "../../error-message.js";

export type { LlamaGpu };

export interface LlamaEngineOptions {
  /** A local GGUF path or an `hf:` URI. */
  model: string;
  modelsDir: string;
  modelId?: string;
  /** Tokens per slot: a state, one question and its longest label must fit. */
  contextSize: number;
  maxRequestTokens: number;
  threads: number;
  /** llama.cpp backend (JUDGE_GPU); `off` (the default here) is the CPU build, where exactness is defined. */
  gpu?: LlamaGpu;
  /** States kept cached at once (JUDGE_SLOTS); 1 by default. */
  slots?: number;
  /**
   * JUDGE_EXACTNESS: strict evaluates one request at a time in fixed shapes (strict-shapes.ts) on
   * every backend; tolerant lets slots decode in parallel and reuses any cached prefix.
   */
  exactness?: "strict" | "tolerant";
  /** JUDGE_EXACTNESS_BOUND, reported for tolerant (no start-up probe runs in-process yet); strict's is 1e-9. */
  exactnessBound?: number;
  /** Shows a download progress bar for a missing model. */
  showDownloadProgress?: boolean;
}

export interface LlamaEngine extends JudgmentEngine {
  readonly ready: Promise<void>;
  /** Tokens the model has evaluated since loading, re-reads included: what prefix caching saves shows here. */
  evaluatedTokens(): number;
  stats(): EngineStats;
}

/**
 * A judgment engine over node-llama-cpp. Returns at once; the model loads in the background
 * (downloading it first when needed) and `status()` reports progress.
 *
 * With several slots, each keeps the prefix (system text + state) of the last request it
 * served, and a request goes to the slot already holding its state (src/engine/slot-router.ts),
 * so tenants interleaving different states each keep reusing theirs.
 */
export function createLlamaEngine(options: LlamaEngineOptions): LlamaEngine {
  const gpu = options.gpu ?? "off";
  const slots = options.slots ?? 1;
  const router = createSlotRouter(slots);
  // strict (the default): one request evaluates at a time, whatever its slot and backend, in the
  // fixed shapes of strict-shapes.ts, so nothing is ever batched beside it and a cached prefix
  // reads exactly as a fresh one. tolerant: slots decode concurrently and node-llama-cpp packs
  // their tokens into shared batches (on a GPU that is where throughput comes from; on CPU prompt
  // reading is compute-bound, so it gains little), and a prefix is reused wherever it matches,
  // so answers may move with other traffic and cache history by what the kernels' batch
  // dependence gives (docs/concepts/exactness.md).
  const cpuQueue = createSerialQueue();
  const mode = options.exactness ?? "strict";
  const serialised = (_backend: string) => mode === "strict";
  const inFlight = new Set<Promise<unknown>>();
  let status: EngineStatus = { state: "loading", detail: "starting" };
  let loaded: LoadedModel | undefined;
  // Read from the vocabulary once per model, at its first request.
  const longestTokens = new WeakMap<LoadedModel, number | undefined>();
  let backend = gpu === "off" ? "cpu" : gpu;
  const modelId = options.modelId ?? modelIdFrom(options.model);

  const bound = options.exactnessBound ?? (mode === "strict" ? 1e-9 : 1e-3);
  let measured: number | undefined;
  const settings = { ...options, gpu, slots };
  const ready = loadModel(settings, (detail) => (status = { state: "loading", detail }))
    .then(async (result) => {
      backend = result.backend;
      if (mode === "tolerant") {
        status = { state: "loading", detail: "measuring the tolerance (start-up probe)" };
        const read = async (prompt: JudgmentPrompt) => (await evaluateOnSlot(result, prepareTokens(result, prompt, options))).labelLogProbs;
        try {
          measured = await measureTolerance({ read, slots });
        } catch (error) {
          status = { state: "failed", detail: `the start-up probe failed: ${messageOf(error)}` };
          await result.model.dispose();
          return;
        }
        if (measured > bound) {
          status = {
            state: "failed",
            detail: `refused: the start-up probe measured max |Δp| ${measured.toExponential(2)} between cached, fresh and batched reads, over the bound ${bound} (JUDGE_EXACTNESS_BOUND; or JUDGE_EXACTNESS=strict)`,
          };
          await result.model.dispose();
          return;
        }
      }
      loaded = result;
      status = { state: "ready" };
    })
    .catch((error: unknown) => {
      status = { state: "failed", detail: `model failed to load: ${messageOf(error)}` };
    });

  const requireLoaded = (): LoadedModel => {
    if (loaded) return loaded;
    const detail = status.state === "ready" ? "closed" : status.detail;
    throw new EngineUnavailableError(`the model is not available (${detail})`);
  };

  const prefixStats: EngineStats = { prefixTokensReused: 0, prefixTokensEvaluated: 0 };
  const countPrefix = (reused: number, evaluated: number) => {
    prefixStats.prefixTokensReused += reused;
    prefixStats.prefixTokensEvaluated += evaluated;
  };

  // Strict: the prefix each slot holds in its own chunks (strict-shapes.ts), unknown after a failure.
  const heldPrefix = new Map<number, readonly Token[]>();
  // Hidden states for task heads (features.ts): a context of their own, made at the first ask.
  const featureReader = createFeatureReader({ contextSize: options.contextSize, threads: options.threads });
  const tracked = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    return work.finally(() => inFlight.delete(work));
  };

  const evaluateOnSlot = async (target: LoadedModel, prepared: PreparedTokens, signal?: AbortSignal) => {
    const lease = await router.acquire(prepared.prefixTokens);
    try {
      const sequence = target.sequences[lease.slot];
      const run = async () => {
        if (mode === "tolerant")
          return evaluateJudgment(createSequenceBrancher(sequence), (b) => b.reuseOrEvaluatePrefix(prepared.prefixTokens), prepared, signal, countPrefix);
        const reused = strictReuse(heldPrefix.get(lease.slot), prepared.prefixTokens);
        heldPrefix.delete(lease.slot);
        const brancher = createStrictBrancher(sequence);
        const result = await evaluateJudgment(
          brancher,
          (b) => b.evaluatePrefix(prepared.prefixTokens, reused).then(() => reused),
          prepared,
          signal,
          countPrefix,
        );
        heldPrefix.set(lease.slot, prepared.prefixTokens);
        return result;
      };
      return await (serialised(target.backend) ? cpuQueue.run(run) : run());
    } finally {
      lease.release();
    }
  };

  return {
    modelId,
    get templateFamily() {
      return loaded?.template.family;
    },
    get description(): EngineDescription {
      return { kind: "llama", backend, slots, exactness: { mode, bound, ...(measured !== undefined && { measured }) } };
    },
    ready,
    status: () => status,
    stats: () => ({ ...prefixStats }),
    // node-llama-cpp meters a token whose logits were read as "output"; both were evaluated.
    evaluatedTokens: () => loaded?.sequences.reduce((sum, { tokenMeter }) => sum + tokenMeter.usedInputTokens + tokenMeter.usedOutputTokens, 0) ?? 0,
    async prepare(prompt, signal) {
      throwIfAborted(signal);
      const target = requireLoaded();
      if (!longestTokens.has(target)) longestTokens.set(target, longestTokenBytes(target.model));
      const styled = styledFor(prompt, target.template.family);
      refuseCertainlyOverBudget(styled, longestTokens.get(target), options.maxRequestTokens);
      return prepareTokens(target, styled, options);
    },
    async evaluate(prepared, signal) {
      const target = requireLoaded();
      if (!(prepared instanceof PreparedTokens)) throw new TypeError("not prepared by this engine");
      return tracked(evaluateOnSlot(target, prepared, signal));
    },
    async readFeatures(prepared, signal) {
      const target = requireLoaded();
      if (!(prepared instanceof PreparedTokens)) throw new TypeError("not prepared by this engine");
      // Strict: one evaluation at a time, readouts and hidden states alike.
      const read = () => featureReader.read(target.model, prepared, signal);
      return tracked(serialised(target.backend) ? cpuQueue.run(read) : read());
    },
    async close() {
      await ready;
      const closing = loaded;
      loaded = undefined;
      status = { state: "failed", detail: "engine closed" };
      await Promise.allSettled([...inFlight]);
      await featureReader.close();
      // The model (and its context) are this engine's; the Llama runtime may be shared.
      await closing?.model.dispose();
    },
  };
}

/**
 * Labels come from a small fixed set (A…Z, two-letter codes up to 255 options, noul's and
 * score's), the same in every question: tokenised once per model, not 255 times per question.
 */
const labelCache = new WeakMap<LoadedModel, Map<string, Token[]>>();
function labelTokens(loaded: LoadedModel, label: string): Token[] {
  let cache = labelCache.get(loaded);
  if (!cache) labelCache.set(loaded, (cache = new Map()));
  let tokens = cache.get(label);
  if (!tokens) cache.set(label, (tokens = loaded.model.tokenize(label) as Token[]));
  return tokens;
}

function prepareTokens(loaded: LoadedModel, prompt: JudgmentPrompt, options: LlamaEngineOptions): PreparedTokens {
  const tokenize = (text: LlamaText) => text.tokenize(loaded.model.tokenizer) as Token[];
  const prefixTokens = tokenize(loaded.template.prefix(prompt.system, prompt.state));
  // Per sequence: node-llama-cpp gives each slot this many cells of its own.
  const budget = loaded.context.contextSize;
  let inputTokens = prefixTokens.length;
  const questionTokens: number[] = [];
  const questions = prompt.questions.map((question, index) => {
    const tokens = tokenize(loaded.template.suffix(question.text));
    const trie = buildLabelTrie(question.labels.map((label) => labelTokens(loaded, label)));
    const needed = prefixTokens.length + tokens.length + trieDepth(trie);
    if (needed > budget) {
      throw new BudgetError(`the state and question need ${needed} tokens, over the model's context budget of ${budget}`, index);
    }
    // Billed: the prompt's tokens and one per label branch. The engine's re-reads (the token
    // before a label token, evaluated again so no batch holds one token) are its own cost.
    questionTokens.push(tokens.length + branchTokenCount(trie));
    inputTokens += questionTokens[index];
    // Over already: the questions left would only add tokens, so they are not tokenised.
    const left = prompt.questions.length - index - 1;
    if (left > 0 && inputTokens > options.maxRequestTokens) {
      throw new BudgetError(
        `the request needs more than ${inputTokens} input tokens (${inputTokens} counted before its last ${left} ${left === 1 ? "question" : "questions"}), over the limit of ${options.maxRequestTokens} per request`,
      );
    }
    return { tokens, trie, labelCount: question.labels.length };
  });
  if (inputTokens > options.maxRequestTokens) {
    throw new BudgetError(`the request needs ${inputTokens} input tokens, over the limit of ${options.maxRequestTokens} per request`);
  }
  return new PreparedTokens(prefixTokens, questions, inputTokens, questionTokens, prompt.diagnostics === true);
}

async function evaluateJudgment<B extends SequenceBrancher>(
  brancher: B,
  evaluatePrefix: (brancher: B) => Promise<number>,
  prepared: PreparedTokens,
  signal: AbortSignal | undefined,
  onPrefix: (reused: number, evaluated: number) => void,
): Promise<EngineResult> {
  // A request whose client left while it waited for the model costs the model nothing.
  throwIfAborted(signal);
  const started = performance.now();
  try {
    const reused = await evaluatePrefix(brancher);
    onPrefix(reused, prepared.prefixTokens.length - reused);
    const labelLogProbs: number[][] = [];
    const diagnostics: LabelDiagnostics[] = [];
    const diagnose = prepared.diagnostics ? (d: LabelDiagnostics) => diagnostics.push(d) : undefined;
    for (const question of prepared.questions) {
      throwIfAborted(signal);
      const logProbs = await readLabelLogProbs(brancher, question.trie, question.tokens, question.labelCount, diagnose);
      // −∞ is a label the model rules out; NaN or +∞ means broken weights, never an answer.
      if (logProbs.some((lp) => Number.isNaN(lp) || lp === Infinity)) throw new Error("the model produced non-finite logits");
      labelLogProbs.push(logProbs);
      await brancher.rollbackTo(prepared.prefixTokens.length);
    }
    const timingMs = performance.now() - started;
    return { labelLogProbs, inputTokens: prepared.inputTokens, timingMs, ...(prepared.diagnostics && { diagnostics }) };
  } catch (error) {
    // The sequence may hold a half-evaluated branch: start the next request from scratch.
    await brancher.rollbackTo(0).catch(() => undefined);
    if (error instanceof RequestAbortedError) throw error;
    throw new EngineFailedError(`the model failed while evaluating: ${messageOf(error)}`, { cause: error });
  }
}
