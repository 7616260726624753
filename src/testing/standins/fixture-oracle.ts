import { getLlama, LlamaLogLevel, type LlamaContextSequence, type LlamaModel, type Token } from "node-llama-cpp";
import { BATCH, evaluateWithoutLoneToken } from "../reference.js";

/**
 * The numbers behind the stand-in servers: the real fixture model run by node-llama-cpp, as a
 * vLLM or SGLang server would run the real model. Next-token logits come from one sequence
 * that keeps the longest common prefix of consecutive requests (a prefix cache: with flash
 * attention off, batches of two or more tokens give the same logits however a sequence is
 * split), and the log-softmax is taken over the whole vocabulary in float64.
 */
export interface FixtureOracle {
  vocabSize: number;
  contextSize: number;
  /** HF semantics: control-token text is always read as the control token. */
  tokenize(text: string, addSpecialTokens: boolean): Token[];
  detokenize(token: Token): string;
  /** Raw next-token logits after `tokens`, indexed by token id. */
  logits(tokens: Token[]): Promise<Float64Array>;
  close(): Promise<void>;
}

export async function loadFixtureOracle(modelPath: string, contextSize = 8192): Promise<FixtureOracle> {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  // One thread: llama.cpp's threads spin against each other (and the engine under test) on a
  // busy two-core machine, making every evaluation ~100x slower.
  const context = await model.createContext({ contextSize, batchSize: BATCH + 1, sequences: 1, threads: 1, flashAttention: false });
  const sequence = context.getSequence();
  const vocabSize = vocabularySize(model);
  let queue: Promise<unknown> = Promise.resolve();

  return {
    vocabSize,
    contextSize,
    tokenize(text, addSpecialTokens) {
      const tokens = model.tokenize(text, true);
      return addSpecialTokens && model.tokens.shouldPrependBosToken && model.tokens.bos !== null ? [model.tokens.bos, ...tokens] : tokens;
    },
    detokenize: (token) => model.detokenize([token], true),
    logits(tokens) {
      const run = queue.then(() => nextLogits(sequence, tokens, vocabSize));
      queue = run.catch(() => undefined);
      return run;
    },
    async close() {
      await queue;
      await model.dispose();
    },
  };
}

function vocabularySize(model: LlamaModel): number {
  const tokens = model.fileInfo.metadata.tokenizer?.ggml?.tokens;
  if (!Array.isArray(tokens)) throw new Error("the fixture model has no token list");
  return tokens.length;
}

async function nextLogits(sequence: LlamaContextSequence, tokens: Token[], vocabSize: number): Promise<Float64Array> {
  if (tokens.length === 0) throw new Error("no tokens to evaluate");
  const cached = sequence.contextTokens;
  let keep = 0;
  while (keep < cached.length && keep < tokens.length && cached[keep] === tokens[keep]) keep++;
  // On CPU only a batch of one token gives (slightly, ~1e-6) different logits: at least the last
  // two tokens are evaluated again, and a lone last token joins the batch before it.
  keep = Math.max(0, Math.min(keep, tokens.length - 2));
  if (keep < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
  const logits = await evaluateWithoutLoneToken(sequence, tokens.slice(keep));
  if (!logits) throw new Error("the model returned no logits");
  const out = new Float64Array(vocabSize).fill(-Infinity);
  for (const [token, value] of logits) out[token] = value;
  return out;
}

/** log-softmax of logits / temperature over the whole vocabulary, in float64. */
export function logSoftmax(logits: Float64Array, temperature = 1): Float64Array {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v / temperature);
  let total = 0;
  for (const v of logits) total += Math.exp(v / temperature - max);
  const normaliser = max + Math.log(total);
  return logits.map((v) => v / temperature - normaliser);
}

/** The `k` most likely tokens, most likely first. */
export function topTokens(logProbs: Float64Array, k: number): Token[] {
  const ids = Array.from(logProbs.keys()) as Token[];
  return ids.sort((a, b) => logProbs[b] - logProbs[a]).slice(0, k);
}
