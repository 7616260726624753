import path from "node:path";
import {
  getLlama,
  LlamaLogLevel,
  resolveChatWrapper,
  resolveModelFile,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
  type LlamaText,
} from "node-llama-cpp";
import type { JudgmentPrompt } from "../judgment/prompt.js";
import { createChatPromptTemplate, type ChatPromptTemplate } from "./chat-prompt.js";
import {
  branchTokenCount,
  buildLabelTrie,
  readLabelLogProbs,
  trieDepth,
  type LabelTrieNode,
  type Token,
} from "./label-trie.js";
import { createSerialQueue } from "./serial-queue.js";
import { createSequenceBrancher } from "./sequence-brancher.js";
import {
  BudgetError,
  EngineFailedError,
  EngineUnavailableError,
  RequestAbortedError,
  throwIfAborted,
  type EngineResult,
  type EngineStatus,
  type JudgmentEngine,
  type PreparedJudgment,
} from "./types.js";

export interface LlamaEngineOptions {
  /** A local GGUF path or an `hf:` URI. */
  model: string;
  modelsDir: string;
  modelId?: string;
  contextSize: number;
  maxRequestTokens: number;
  threads: number;
  /** Shows a download progress bar for a missing model. */
  showDownloadProgress?: boolean;
}

interface Loaded {
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  template: ChatPromptTemplate;
}

interface PreparedQuestion {
  tokens: Token[];
  trie: LabelTrieNode;
  labelCount: number;
}

class PreparedLlamaJudgment implements PreparedJudgment {
  readonly inputTokensExact = true;
  constructor(
    readonly prefixTokens: Token[],
    readonly questions: PreparedQuestion[],
    readonly inputTokens: number,
  ) {}
}

/**
 * A judgment engine over node-llama-cpp. Returns at once; the model loads in the background
 * (downloading it first when needed) and `status()` reports progress.
 */
export function createLlamaEngine(options: LlamaEngineOptions): JudgmentEngine & { ready: Promise<void> } {
  let status: EngineStatus = { state: "loading", detail: "starting" };
  let loaded: Loaded | undefined;
  const queue = createSerialQueue();
  const modelId = options.modelId ?? modelIdFrom(options.model);

  const ready = load(options, (detail) => (status = { state: "loading", detail })).then(
    (result) => {
      loaded = result;
      status = { state: "ready" };
    },
    (error: unknown) => {
      status = { state: "failed", detail: `model failed to load: ${messageOf(error)}` };
    },
  );

  const requireLoaded = (): Loaded => {
    if (loaded) return loaded;
    const detail = status.state === "ready" ? "closed" : status.detail;
    throw new EngineUnavailableError(`the model is not available (${detail})`);
  };

  return {
    modelId,
    description: { kind: "llama", backend: "cpu", slots: 1 },
    ready,
    status: () => status,
    async prepare(prompt, signal) {
      throwIfAborted(signal);
      return prepareJudgment(requireLoaded(), prompt, options);
    },
    async evaluate(prepared, signal) {
      const target = requireLoaded();
      if (!(prepared instanceof PreparedLlamaJudgment)) throw new TypeError("not prepared by this engine");
      return queue.run(() => evaluateJudgment(target, prepared, signal));
    },
    async close() {
      await ready;
      const closing = loaded;
      loaded = undefined;
      status = { state: "failed", detail: "engine closed" };
      // The model (and its context) are this engine's; the Llama runtime may be shared.
      if (closing) await queue.run(() => closing.model.dispose());
    },
  };
}

async function load(options: LlamaEngineOptions, report: (detail: string) => void): Promise<Loaded> {
  report(`looking for ${options.model} (downloading it into ${options.modelsDir} if missing)`);
  const modelPath = await resolveModelFile(asModelUri(options.model), {
    directory: options.modelsDir,
    cli: options.showDownloadProgress ?? false,
    // /health reports download progress, for logs and orchestrators that see no terminal.
    onProgress: ({ totalSize, downloadedSize }) =>
      report(`downloading the model: ${totalSize > 0 ? Math.floor((100 * downloadedSize) / totalSize) : 0}%`),
  });
  report("loading the model");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({
    contextSize: options.contextSize,
    sequences: 1,
    // node-llama-cpp's own default oversubscribes small machines (4+ threads on 2 cores runs
    // ~7x slower as llama.cpp's threads spin against each other), so default to the math cores.
    threads: options.threads === 0 ? llama.cpuMathCores : options.threads,
    // llama.cpp's CPU flash attention accumulates in f16 and its result depends on how tokens
    // are batched (~1e-3 in logits): a cached prefix would then answer differently from a
    // fresh one. Without it every batching gives the same logits.
    flashAttention: false,
  });
  const sequence = context.getSequence();
  const template = createChatPromptTemplate(resolveChatWrapper(model));
  return { model, context, sequence, template };
}

function prepareJudgment(loaded: Loaded, prompt: JudgmentPrompt, options: LlamaEngineOptions): PreparedLlamaJudgment {
  const tokenize = (text: LlamaText) => text.tokenize(loaded.model.tokenizer) as Token[];
  const prefixTokens = tokenize(loaded.template.prefix(prompt.system, prompt.state));
  const budget = loaded.context.contextSize;
  let inputTokens = prefixTokens.length;
  const questions = prompt.questions.map((question, index) => {
    const tokens = tokenize(loaded.template.suffix(question.text));
    const trie = buildLabelTrie(question.labels.map((label) => loaded.model.tokenize(label) as Token[]));
    const needed = prefixTokens.length + tokens.length + trieDepth(trie);
    if (needed > budget) {
      throw new BudgetError(
        `the state and question need ${needed} tokens, over the model's context budget of ${budget}`,
        index,
      );
    }
    inputTokens += tokens.length + branchTokenCount(trie);
    return { tokens, trie, labelCount: question.labels.length };
  });
  if (inputTokens > options.maxRequestTokens) {
    throw new BudgetError(
      `the request needs ${inputTokens} input tokens, over the limit of ${options.maxRequestTokens} per request`,
    );
  }
  return new PreparedLlamaJudgment(prefixTokens, questions, inputTokens);
}

async function evaluateJudgment(
  loaded: Loaded,
  prepared: PreparedLlamaJudgment,
  signal: AbortSignal | undefined,
): Promise<EngineResult> {
  // A request whose client left while it waited in the queue costs the model nothing.
  throwIfAborted(signal);
  const started = performance.now();
  const brancher = createSequenceBrancher(loaded.sequence);
  try {
    await brancher.reuseOrEvaluatePrefix(prepared.prefixTokens);
    const labelLogProbs: number[][] = [];
    for (const question of prepared.questions) {
      throwIfAborted(signal);
      const logProbs = await readLabelLogProbs(brancher, question.trie, question.tokens, question.labelCount);
      // −∞ is a label the model rules out; NaN or +∞ means broken weights, never an answer.
      if (logProbs.some((lp) => Number.isNaN(lp) || lp === Infinity)) throw new Error("the model produced non-finite logits");
      labelLogProbs.push(logProbs);
      await brancher.rollbackTo(prepared.prefixTokens.length);
    }
    return { labelLogProbs, inputTokens: prepared.inputTokens, timingMs: performance.now() - started };
  } catch (error) {
    // The sequence may hold a half-evaluated branch: start the next request from scratch.
    await brancher.rollbackTo(0).catch(() => undefined);
    if (error instanceof RequestAbortedError) throw error;
    throw new EngineFailedError(`the model failed while evaluating: ${messageOf(error)}`, { cause: error });
  }
}

/**
 * A local path is taken relative to the working directory, as users expect; node-llama-cpp
 * would otherwise look for it inside the models directory.
 */
function asModelUri(model: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(model) && !/^[a-z]:[\\/]/i.test(model) ? model : path.resolve(model);
}

function modelIdFrom(model: string): string {
  const file = model.startsWith("hf:") ? model.split("/").pop()! : path.basename(model);
  return file.replace(/\.gguf$/i, "");
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
