import type { RemoteEngineOptions } from "../remote/options.js";
import { describe } from "../remote/http.js";
import { createRemotePreparer, RemotePrepared } from "../remote/prepare.js";
import { createChatPromptTemplate } from "../chat-prompt.js";
import { createSlotRouter, type SlotRouter } from "../slot-router.js";
import { createSerialQueue } from "../serial-queue.js";
import type { Exactness } from "./batch-read.js";
import { strictReuse } from "../strict-shapes.js";
import {
  EngineFailedError,
  EngineUnavailableError,
  throwIfAborted,
  type EngineDescription,
  type ExactnessReport,
  type EngineStatus,
  type JudgmentEngine,
} from "../types.js";
import type { Token } from "../label-trie.js";
import type { TemplateFamily } from "../../judgment/prompt.js";
import { IncompatibleServerError, probeRawReadout, STRICT_BOUND, TOLERANT_BOUND } from "./probe.js";
import { builtinTokens, checkBatching, createServerTokenizer, spareTokens } from "./tokenizer.js";
import { ServerLoadingError } from "./completion.js";
import { chatWrapperFor, factsChanged, readServerFacts, type ServerFacts } from "./server-facts.js";
import { readLabelLogProbsOnSlot } from "./walk.js";
import type { LiftMemory } from "./lifted-read.js";
import { learnLabelDepths } from "./calibrate.js";
import { createFeaturesReader } from "./features.js";
import { messageOf } from "../../error-message.js";

/** Knobs for tests and operators; the defaults are what production runs with. */
export interface LlamaServerEngineTuning {
  /** Max |Δp| between a cached and a fresh read accepted at start-up (see probe.ts); defaults to the mode's bound. */
  batchingTolerance?: number;
  /** Counts `/completion` calls and reply bytes (tests, bench). */
  onCall?: (bytes: number) => void;
  /** First and longest wait between start-up attempts while the server is loading or unreachable. */
  retryMs?: { first: number; max: number };
}

interface Connected {
  facts: ServerFacts;
  spare: [Token, Token];
  router: SlotRouter;
  prepare: ReturnType<typeof createRemotePreparer>;
  family: TemplateFamily;
  measured: number;
  /** Where label tokens rank on this model (lifted-read.ts, calibrate.ts): a guess for speed only. */
  lifts: LiftMemory;
}

/** `status()` asks the server at most this long, so /health answers promptly when it is gone. */
const STATUS_TIMEOUT_MS = 2_000;

/**
 * A judgment engine on llama.cpp's llama-server: the same model and llama.cpp as the in-process
 * engine, on another machine or a GPU. Tokenises through the server, reads raw next-token
 * log-probabilities from `/completion` by token ids, one isolated branch per question, and pins
 * each state to a slot so its prefix stays cached. Returns at once; `ready` settles when the
 * server has been reached and checked (it keeps retrying while the server loads or is down).
 */
export function createLlamaServerEngine(options: RemoteEngineOptions, tuning: LlamaServerEngineTuning = {}): JudgmentEngine & { ready: Promise<void> } {
  const server = options.server;
  const backend = describe(server);
  const stop = new AbortController();
  let connected: Connected | undefined;
  // A permanent refusal (the server would answer inexactly) or the engine being closed.
  let refused: string | undefined;
  let lastProblem: unknown = new EngineUnavailableError("not contacted yet");
  const mode: Exactness = options.exactness ?? "strict";
  const bound = tuning.batchingTolerance ?? options.exactnessBound ?? (mode === "strict" ? STRICT_BOUND : TOLERANT_BOUND);
  // Strict: one request at a time on the whole server, so nothing is ever batched beside a read;
  // and what each slot's cache holds, to reuse a prefix only where its chunks are the same.
  const serial = createSerialQueue();
  const heldPrefix = new Map<number, readonly Token[]>();
  // Level 2's hidden states, from the features server when there is one; strict reads them one at a time too.
  const featuresReader = options.featuresServer && createFeaturesReader(server, options.featuresServer);
  const featuresQueue = createSerialQueue();

  const connect = async (): Promise<Connected> => {
    const facts = await readServerFacts(server, stop.signal);
    const tokenizer = createServerTokenizer(server, facts.vocabularySize);
    const builtins = await builtinTokens(facts, tokenizer);
    let spare: [Token, Token];
    let measured: number;
    try {
      spare = await spareTokens(tokenizer, stop.signal);
      await checkBatching(tokenizer, stop.signal);
      ({ measured } = await probeRawReadout(server, facts, tokenizer, builtins, spare, mode, bound, stop.signal));
      heldPrefix.clear();
    } catch (error) {
      // A server that answers the probe with something unusable (processed values, ignored
      // fields, missing ids) would do so for every request: refuse it for good.
      if (error instanceof EngineFailedError) throw new IncompatibleServerError(`${backend} failed the start-up check: ${error.message}`);
      throw error;
    }
    const template = createChatPromptTemplate(chatWrapperFor(facts), facts.bosToken);
    const prepare = createRemotePreparer({
      template,
      builtinTokens: builtins,
      tokenizer,
      contextSize: Math.min(options.contextSize, facts.slotContext),
      maxRequestTokens: options.maxRequestTokens,
    });
    let lifts: LiftMemory;
    try {
      lifts = await learnLabelDepths(prepare, { server, slot: 0, spareTokens: spare, exactness: mode, prefixReused: 0 }, stop.signal);
    } catch (error) {
      if (error instanceof EngineFailedError) throw new IncompatibleServerError(`${backend} failed the start-up check: ${error.message}`);
      throw error;
    }
    return { facts, spare, router: createSlotRouter(facts.slots), prepare, family: template.family, measured, lifts };
  };

  const ready = (async () => {
    const retry = tuning.retryMs ?? { first: 250, max: 5_000 };
    for (let wait = retry.first; !stop.signal.aborted; wait = Math.min(wait * 2, retry.max)) {
      try {
        connected = await connect();
        return;
      } catch (error) {
        if (stop.signal.aborted) return;
        if (error instanceof IncompatibleServerError) {
          refused = error.message;
          return;
        }
        // Loading, unreachable, or a reply that is not llama-server's yet (a proxy in front of
        // a server still starting): keep trying; status() reports the server's current state.
        lastProblem = error;
      }
      await sleep(wait, stop.signal);
    }
  })();

  const requireConnected = (): Connected => {
    if (connected && refused === undefined) return connected;
    throw new EngineUnavailableError(`the model server is not available: ${refused ?? `still connecting to ${backend} (${messageOf(lastProblem)})`}`);
  };

  return {
    get modelId() {
      return options.modelId ?? connected?.facts.modelName ?? "llama-server";
    },
    get templateFamily() {
      return connected?.family;
    },
    get description(): EngineDescription {
      const exactness: ExactnessReport = { mode, bound, measured: connected?.measured };
      return { kind: "llama-server", backend, slots: connected?.facts.slots, exactness };
    },
    ready,
    async status(): Promise<EngineStatus> {
      if (refused !== undefined) return { state: "failed", detail: refused };
      try {
        const facts = await readServerFacts({ ...server, timeoutMs: Math.min(server.timeoutMs, STATUS_TIMEOUT_MS) }, undefined, "props only");
        if (!connected) {
          // Reachable and serving, but the last start-up attempt found something wrong.
          if (lastProblem instanceof EngineFailedError) return { state: "failed", detail: lastProblem.message };
          return { state: "loading", detail: `checking the model server at ${backend}` };
        }
        const changed = factsChanged(connected.facts, facts);
        if (changed) return { state: "failed", detail: `the model server at ${backend} was restarted with other settings (${changed}); restart this service` };
        return { state: "ready" };
      } catch (error) {
        if (error instanceof ServerLoadingError) {
          return { state: "loading", detail: `the model server at ${backend} is loading the model` };
        }
        return { state: "failed", detail: messageOf(error) };
      }
    },
    async prepare(prompt, signal) {
      throwIfAborted(signal);
      return requireConnected().prepare(prompt, signal);
    },
    async evaluate(prepared, signal) {
      const target = requireConnected();
      if (!(prepared instanceof RemotePrepared)) throw new TypeError("not prepared by this engine");
      throwIfAborted(signal);
      // The state's slot, waited for in arrival order: its cache then holds this prefix.
      const lease = await target.router.acquire(prepared.prefixTokens);
      const run = async () => {
        throwIfAborted(signal);
        const started = performance.now();
        const prefix = prepared.prefixTokens;
        const session = {
          server,
          slot: lease.slot,
          spareTokens: target.spare,
          exactness: mode,
          prefixReused: strictReuse(heldPrefix.get(lease.slot), prefix),
          onCall: tuning.onCall,
          lifts: target.lifts,
        };
        heldPrefix.delete(lease.slot);
        const labelLogProbs = await readLabelLogProbsOnSlot(prepared, session, signal);
        heldPrefix.set(lease.slot, prefix);
        return { labelLogProbs, inputTokens: prepared.inputTokens, timingMs: performance.now() - started };
      };
      try {
        return await (mode === "strict" ? serial.run(run) : run());
      } finally {
        lease.release();
      }
    },
    ...(featuresReader && {
      async readFeatures(prepared, signal) {
        requireConnected();
        if (!(prepared instanceof RemotePrepared)) throw new TypeError("not prepared by this engine");
        const read = () => featuresReader.read(prepared, signal);
        return mode === "strict" ? featuresQueue.run(read) : read();
      },
    }),
    async close() {
      // Requests in flight finish on their own; only the start-up attempts stop.
      stop.abort();
      await ready;
      refused ??= "engine closed";
      connected = undefined;
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
