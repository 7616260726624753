/**
 * The ceiling: how fast the model reads a prompt through node-llama-cpp with nothing else
 * around it (no HTTP, no accounts, no judgment logic), set up as the server's engine sets up
 * its context, so the service's input tokens/s can be stated as a share of it.
 */
import { getLlama, LlamaLogLevel, type LlamaContext, type LlamaContextSequence, type Token } from "node-llama-cpp";

export interface RawReader {
  modelPath: string;
  threads: number;
  tokenize(text: string): Token[];
  /** Seconds to read `tokens` into an empty context, as one prompt. */
  readSeconds(tokens: Token[]): Promise<number>;
  close(): Promise<void>;
}

/** The server engine's context size; grown only for longer prompts. */
const CONTEXT_SIZE = 8192;

/** `threads` 0 means one fewer than the math cores (at least one), as the server's JUDGE_THREADS=0 does. */
export async function openRawReader(modelPath: string, options: { threads?: number } = {}): Promise<RawReader> {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  const threads = options.threads || Math.max(1, llama.cpuMathCores - 1);
  let context: LlamaContext | undefined;
  let sequence: LlamaContextSequence | undefined;

  const sequenceFor = async (length: number): Promise<LlamaContextSequence> => {
    if (sequence && context && context.contextSize >= length) return sequence;
    await context?.dispose();
    const contextSize = Math.min(model.trainContextSize, Math.max(CONTEXT_SIZE, length));
    if (length > contextSize) throw new RangeError(`${length} tokens do not fit the model's context of ${contextSize}`);
    // The engine's settings: flash attention off (it is off in the server for exactness) and
    // its default threads (more oversubscribes small machines).
    context = await model.createContext({ contextSize, sequences: 1, threads, flashAttention: false });
    sequence = context.getSequence();
    await sequence.controlledEvaluate(model.tokenize("warm up") as Token[]);
    return sequence;
  };

  return {
    modelPath,
    threads,
    tokenize: (text) => model.tokenize(text) as Token[],
    async readSeconds(tokens) {
      const target = await sequenceFor(tokens.length);
      await target.eraseContextTokenRanges([{ start: 0, end: target.nextTokenIndex }]);
      const started = performance.now();
      await target.controlledEvaluate(tokens);
      return (performance.now() - started) / 1000;
    },
    async close() {
      await model.dispose();
    },
  };
}
