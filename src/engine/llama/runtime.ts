import path from "node:path";
import { getLlama, LlamaLogLevel, resolveChatWrapper, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel } from "node-llama-cpp";
import { createChatPromptTemplate, type ChatPromptTemplate } from "../chat-prompt.js";
import { findModelFile } from "./model-file.js";
import { STRICT_BATCH } from "../strict-shapes.js";
import { messageOf } from "../../error-message.js";

/** Which llama.cpp build to run on: `auto` takes a GPU when a prebuilt binary for it works here. */
export type LlamaGpu = "auto" | "cuda" | "vulkan" | "metal" | "off";

export interface LoadSettings {
  /** A local GGUF path or an `hf:` URI. */
  model: string;
  modelsDir: string;
  /** Tokens each slot can hold: the per-question budget (state + question + the longest label). */
  contextSize: number;
  threads: number;
  gpu: LlamaGpu;
  slots: number;
  showDownloadProgress?: boolean;
}

export interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  /** One sequence per slot, each keeping its own cached prefix. */
  sequences: LlamaContextSequence[];
  template: ChatPromptTemplate;
  /** "cpu", or the GPU backend node-llama-cpp chose ("cuda", "vulkan", "metal"). */
  backend: string;
}

export async function loadModel(settings: LoadSettings, report: (detail: string) => void): Promise<LoadedModel> {
  report(`looking for ${settings.model} (downloading it into ${settings.modelsDir} if missing)`);
  const modelPath = await findModelFile(settings, report);
  report("loading the model");
  const llama = await openLlama(settings.gpu);
  // Every context of the model gets these, the hidden-state reader's too (features.ts: node-llama-cpp's
  // embedding context takes no attention options of its own); why they are off and on is below.
  const model = await llama.loadModel({ modelPath, defaultContextFlashAttention: false, defaultContextSwaFullCache: true });
  const context = await model.createContext({
    // node-llama-cpp gives every sequence its own `contextSize` cells (the KV cache holds
    // contextSize × sequences tokens), so each slot keeps the full per-question budget and the
    // cache's memory grows with the slots: 12 KB per token for Qwen2.5-0.5B, 28 KB for 1.5B,
    // i.e. 4 slots of 8192 tokens take 0.4 GB and 0.9 GB.
    contextSize: settings.contextSize,
    sequences: settings.slots,
    threads: settings.threads === 0 ? defaultThreads(llama.cpuMathCores) : settings.threads,
    // llama.cpp's CPU flash attention accumulates in f16 and its result depends on how tokens
    // are batched (~1e-3 in logits): a cached prefix would then answer differently from a
    // fresh one. Without it, batches of two or more tokens give identical logits however they
    // are split (see sequence-brancher.ts for the batch of one).
    flashAttention: false,
    // A sliding-window model (Gemma 3: 512 tokens) would otherwise keep only the window's
    // cache, and a prefix kept across requests or a rolled-back label branch would then attend
    // to cells already dropped: answers would depend on what was evaluated before.
    swaFullCache: true,
    // Strict mode's decode size (llama-server's default ubatch, too): a longer run is cut at
    // the same places on both engines and in the test reference (strict-shapes.ts).
    batchSize: STRICT_BATCH,
  });
  const sequences = Array.from({ length: settings.slots }, () => context.getSequence());
  const template = createChatPromptTemplate(resolveChatWrapper(model), bosTextOf(model));
  return { model, context, sequences, template, backend: llama.gpu || "cpu" };
}

/**
 * Exactness is defined on the CPU build: there, with flash attention off and no batch of one,
 * the engine's logits equal a fresh evaluation of the same tokens bit for bit, and its
 * probabilities the reference's within 1e-9 (float64 rounding). A GPU build is not held to
 * that: its kernels reduce in other orders and take f16 paths (cuBLAS/Vulkan matrix products
 * with f16 accumulation, fused attention), and several slots decode in one batch, so its
 * logits differ from the CPU's by rounding of f16 size, ~1e-3 relative (the size CPU flash
 * attention's f16 accumulation causes here), i.e. probabilities that agree to ~1e-4, not 1e-9,
 * and may differ in the last digits between a cached and a fresh read. Not measured on this
 * project's machines (no GPU); use `off` where the last digits matter.
 *
 * Never builds llama.cpp from source (minutes of compiling at start-up, and no compiler in most
 * images): only prebuilt binaries, and an explicit GPU choice without one is a load failure.
 */
async function openLlama(gpu: LlamaGpu): Promise<Llama> {
  const unusable = (why: string) => `no usable prebuilt llama.cpp binary for gpu ${gpu} on this machine (${why}); use auto or off`;
  let llama: Llama;
  try {
    llama = await getLlama({ gpu: gpu === "off" ? false : gpu, build: "never", logLevel: LlamaLogLevel.error });
  } catch (error) {
    if (gpu === "off" || gpu === "auto") throw error;
    throw new Error(unusable(messageOf(error)), { cause: error });
  }
  // node-llama-cpp falls back to the CPU build for a GPU type it knows cannot run here (metal
  // on Linux): an explicit choice that is not honoured is a configuration error, not a quiet CPU.
  if (gpu !== "off" && gpu !== "auto" && llama.gpu !== gpu) {
    await llama.dispose();
    throw new Error(unusable(`node-llama-cpp offered ${llama.gpu || "cpu"}`));
  }
  return llama;
}

/**
 * JUDGE_THREADS=0: one thread fewer than the math cores, at least one. llama.cpp's threads spin
 * at every barrier of a decode, so when another process takes a core a thread of ours waits for
 * is descheduled and every other thread spins until it runs again: on 2 cores beside a load of
 * ~1.3 cores, 2 threads answered 2.6× slower than on a quiet machine and 1.4× slower than 1
 * thread, which did not slow down at all (scripts/bench-contention.sh, docs/measurements/
 * 2026-12-02-threads-under-contention.md). The core left over also serves the service's own
 * event loop (HTTP, JSON, the database). In process there is no polling setting to turn off
 * (node-llama-cpp gives ggml no thread pool of its own), so the thread count is the only lever.
 */
export function defaultThreads(mathCores: number): number {
  return Math.max(1, mathCores - 1);
}

/** The BOS token as text (special tokens spelled out), for createChatPromptTemplate. */
export function bosTextOf(model: LlamaModel): string | undefined {
  const bos = model.tokens.bos;
  return bos === null ? undefined : model.detokenize([bos], true);
}

export function modelIdFrom(model: string): string {
  const file = model.startsWith("hf:") ? model.split("/").pop()! : path.basename(model);
  return file.replace(/\.gguf$/i, "");
}
