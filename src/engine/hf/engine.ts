import { probeExactness, STRICT_BOUND, TOLERANT_BOUND } from "./exactness-probe.js";
/**
 * The life of an engine on an HF-tokenizer inference server (vLLM, SGLang): wait for the server,
 * check it, then prepare through its tokenizer and read label probabilities node by node.
 * (Shared by vllm/ and sglang/; it belongs in engine/remote/ — see the report.)
 */
import type { JudgmentPrompt, TemplateFamily } from "../../judgment/prompt.js";
import type { Token } from "../label-trie.js";
import { describe } from "../remote/http.js";
import type { RemoteEngineOptions } from "../remote/options.js";
import { createRemotePreparer, RemotePrepared } from "../remote/prepare.js";
import { readLabelLogProbsRemote, type NodeReader } from "../remote/readout.js";
import { builtinTokenIds, guardedTokenizer, readTokenizerConfig, remoteChat } from "./tokenizer-config.js";
import {
  EngineFailedError,
  EngineUnavailableError,
  RequestAbortedError,
  throwIfAborted,
  type EngineStatus,
  type JudgmentEngine,
  type EngineDescription,
  type ExactnessReport,
  type EngineFeatures,
  type PreparedJudgment,
} from "../types.js";
import { createSerialQueue } from "../serial-queue.js";
import { pingHealth, servedModel, serverTokenizer } from "./server.js";
import { probeCandidates, probeRawLogprobs } from "./probe.js";
import { messageOf } from "../../error-message.js";

export interface HfServerAdapter {
  kind: "vllm" | "sglang";
  /** The request field naming the candidate ids (for messages about a server ignoring it). */
  idsField: string;
  /** Fields a /tokenize body carries besides the text (vLLM takes the model name). */
  tokenizeFields(model: string): Record<string, unknown>;
  /**
   * A reader for one evaluation (or the probe), at a sampling temperature (0 except when
   * probing); `force` (the probe) makes that token the generated one where the server reports it.
   */
  createReader(model: string, temperature: number, force?: Token): NodeReader;
  /** Where the model's hidden states come from (vLLM: a second server run as a pooling model); none: level 2 is left out. */
  features?: { read(prepared: RemotePrepared, signal?: AbortSignal): Promise<EngineFeatures> };
}

interface Started {
  model: string;
  family: TemplateFamily;
  exactness: ExactnessReport;
  prepare: (prompt: JudgmentPrompt, signal?: AbortSignal) => Promise<RemotePrepared>;
}

/** A fixed judgment the probe prepares, so a broken template fails at start-up, not on a request. */
const PROBE_PROMPT: JudgmentPrompt = {
  system: "You are a careful judge.",
  state: "State:\nThe sky is blue.\n\n",
  questions: [{ text: "Statement: The sky is blue.\nDoes the statement hold? Answer Yes or No.", labels: ["Yes", "No"] }],
};

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;
const STATUS_TIMEOUT_MS = 2_000;

export function createHfServerEngine(options: RemoteEngineOptions, adapter: HfServerAdapter): JudgmentEngine {
  const { server } = options;
  const where = `${adapter.kind} at ${describe(server)}`;
  let started: Started | undefined;
  let phase: EngineStatus = { state: "loading", detail: `waiting for ${where}` };
  const closing = new AbortController();
  const featuresQueue = createSerialQueue();

  const ready = (async () => {
    try {
      const config = options.tokenizerConfigPath ? await readTokenizerConfig(options.tokenizerConfigPath) : undefined;
      for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
        try {
          started = await connect(options, adapter, config, closing.signal);
          phase = { state: "ready" };
          return;
        } catch (error) {
          if (closing.signal.aborted) return;
          if (!(error instanceof EngineUnavailableError)) throw error;
          phase = { state: "loading", detail: `waiting for ${where}: ${error.message}` };
          await sleep(delay, closing.signal);
        }
      }
    } catch (error) {
      if (!closing.signal.aborted) phase = { state: "failed", detail: `refusing ${where}: ${messageOf(error)}` };
    }
  })();

  const requireStarted = (): Started => {
    if (started && phase.state === "ready") return started;
    throw new EngineUnavailableError(`the model is not available (${phase.state === "ready" ? "closed" : phase.detail})`);
  };

  return {
    get modelId() {
      return options.modelId ?? started?.model ?? options.upstreamModel ?? adapter.kind;
    },
    get templateFamily() {
      return started?.family;
    },
    get description(): EngineDescription {
      const exactness = started?.exactness ?? { mode: options.exactness ?? "strict", bound: exactnessBound(options) };
      return { kind: adapter.kind, backend: describe(server), exactness };
    },
    ready,
    async status(): Promise<EngineStatus> {
      if (phase.state !== "ready") return phase;
      const health = await pingHealth(server, Math.min(STATUS_TIMEOUT_MS, server.timeoutMs));
      if ("unreachable" in health) return { state: "failed", detail: `${where}: ${health.unreachable}` };
      if (health.status === 200) return phase;
      if (health.status === 503) return { state: "loading", detail: `${where} says it is not ready (/health answered 503)` };
      return { state: "failed", detail: `${where}: /health answered ${health.status}` };
    },
    async prepare(prompt, signal) {
      throwIfAborted(signal);
      return requireStarted().prepare(prompt, signal);
    },
    async evaluate(prepared, signal) {
      const { model } = requireStarted();
      if (!(prepared instanceof RemotePrepared)) throw new TypeError("not prepared by this engine");
      throwIfAborted(signal);
      const begun = performance.now();
      try {
        const labelLogProbs = await readLabelLogProbsRemote(prepared, adapter.createReader(model, 0), signal);
        return { labelLogProbs, inputTokens: prepared.inputTokens, timingMs: performance.now() - begun };
      } catch (error) {
        if (error instanceof RequestAbortedError || error instanceof EngineUnavailableError || error instanceof EngineFailedError) throw error;
        throw new EngineFailedError(`${where} failed while evaluating: ${messageOf(error)}`, { cause: error });
      }
    },
    ...(adapter.features && {
      async readFeatures(prepared: PreparedJudgment, signal?: AbortSignal) {
        requireStarted();
        if (!(prepared instanceof RemotePrepared)) throw new TypeError("not prepared by this engine");
        const read = () => adapter.features!.read(prepared, signal);
        // Strict reads one at a time, the hidden states as the readout.
        return (options.exactness ?? "strict") === "strict" ? featuresQueue.run(read) : read();
      },
    }),
    async close() {
      closing.abort();
      await ready;
      started = undefined;
      phase = { state: "failed", detail: "engine closed" };
    },
  };
}

/** One start-up attempt: EngineUnavailableError means "try again", anything else "refuse". */
async function connect(
  options: RemoteEngineOptions,
  adapter: HfServerAdapter,
  config: Awaited<ReturnType<typeof readTokenizerConfig>> | undefined,
  signal: AbortSignal,
): Promise<Started> {
  const { server } = options;
  const health = await pingHealth(server, server.timeoutMs);
  if ("unreachable" in health) throw new EngineUnavailableError(health.unreachable);
  if (health.status !== 200) throw new EngineUnavailableError(`/health answered ${health.status}`);
  const served = await servedModel(server, options.upstreamModel, signal);
  const chat = remoteChat(config);
  const tokenizer = guardedTokenizer(serverTokenizer(server, adapter.tokenizeFields(served.name)), chat, adapter.kind);
  const prepare = createRemotePreparer({
    template: chat.template,
    builtinTokens: await builtinTokenIds(chat, tokenizer),
    tokenizer,
    contextSize: Math.min(options.contextSize, served.maxModelLen ?? Infinity),
    maxRequestTokens: options.maxRequestTokens,
  });
  const probe = await prepare(PROBE_PROMPT, signal);
  const tokens: Token[] = [...probe.prefixTokens, ...probe.questions[0].tokens];
  const read = (at: Token[], candidates: Token[], temperature: number, force?: Token) =>
    adapter.createReader(served.name, temperature, force).read(at, candidates, signal);
  const candidates = await probeCandidates(tokenizer);
  await probeRawLogprobs(read, tokens, candidates, adapter.idsField);
  const exactness = await probeExactness(
    read,
    tokens,
    candidates,
    options.exactness ?? "strict",
    exactnessBound(options),
    { server, kind: adapter.kind },
    signal,
  );
  return { model: served.name, prepare, family: chat.template.family, exactness };
}

function exactnessBound(options: RemoteEngineOptions): number {
  return options.exactnessBound ?? ((options.exactness ?? "strict") === "strict" ? STRICT_BOUND : TOLERANT_BOUND);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}
