import type { ControlledEvaluateInputItem, LlamaContextSequence } from "node-llama-cpp";
import type { BranchingSequence, Extended, LabelDiagnostics, Token } from "../label-trie.js";

/**
 * The model's sequence as a `BranchingSequence`: extends by evaluating tokens, retracts by
 * erasing them from the KV cache, and keeps a prefix cached across requests. This is the
 * `tolerant` reading (strict-brancher.ts is `strict`'s): any cached prefix is reused and
 * tokens are evaluated in whatever batches the cache state leaves, never a batch of one.
 *
 * A token alone goes through other matrix kernels (llamafile's sgemm declines n < 2 and ggml's
 * vec_dot sums in another order: ~4e-6 on the tiny fixture, up to 0.4 on a random 24-layer Q4_0
 * fixture). Batches of two or more agree bit for bit on F32 and the tiny Q4_0 fixture
 * (batching.test.ts), but not in general: quantized products split rows between GEMM and GEMV
 * kernels by batch size (1.25e-4 on the 0.5B fixture, 0.002–0.04 on Gemma 3 270M), which is why
 * strict fixes the shapes instead.
 */
export interface SequenceBrancher extends BranchingSequence {
  /** Keeps the longest cached match of `prefix`, erases the rest, evaluates what is missing. */
  /** Resolves to how many of the prefix's tokens were already cached. */
  reuseOrEvaluatePrefix(prefix: Token[]): Promise<number>;
  rollbackTo(length: number): Promise<void>;
}

export function createSequenceBrancher(sequence: LlamaContextSequence): SequenceBrancher {
  const rollbackTo = async (length: number) => {
    const end = sequence.nextTokenIndex;
    if (end > length) await sequence.eraseContextTokenRanges([{ start: length, end }]);
  };

  return {
    rollbackTo,
    async reuseOrEvaluatePrefix(prefix) {
      const cached = sequence.contextTokens;
      let common = 0;
      while (common < prefix.length && common < cached.length && cached[common] === prefix[common]) common++;
      await rollbackTo(common);
      if (common < prefix.length) await evaluateInBatches(sequence, prefix.slice(common));
      return common;
    },
    async extend(tokens, candidates, normalised, diagnose) {
      // Only the requested logits cross into JavaScript unless the whole vocabulary is needed.
      const logits = normalised || diagnose ? true : { filter: { tokens: candidates } };
      const next = await evaluateInBatches(sequence, tokens, { logits, options: { temperature: 0 } });
      return readLogits(next, candidates, normalised, diagnose);
    },
    async retract(count) {
      await rollbackTo(sequence.nextTokenIndex - count);
    },
  };
}

type GenerateNext = NonNullable<Extract<ControlledEvaluateInputItem, unknown[]>[1]["generateNext"]>;

/**
 * Appends `tokens`, one decode per batch of at most the context's batch size and never a batch
 * of one: a lone token is evaluated again with the token before it (its cache entry is erased
 * and recomputed, bit-identically, since it too came from a batch of two or more), and a long
 * run is split so its last batch keeps two tokens. Returns the logits after the last token.
 */
async function evaluateInBatches(sequence: LlamaContextSequence, tokens: Token[], generateNext?: GenerateNext): Promise<Map<Token, number> | undefined> {
  let input = tokens;
  const end = sequence.nextTokenIndex;
  if (input.length === 1 && end > 0) {
    const previous = sequence.contextTokens[end - 1];
    await sequence.eraseContextTokenRanges([{ start: end - 1, end }]);
    input = [previous, ...input];
  }
  let logits: Map<Token, number> | undefined;
  let start = 0;
  for (const size of batchSizes(input.length, sequence.context.batchSize)) {
    const batch: ControlledEvaluateInputItem[] = input.slice(start, start + size);
    start += size;
    const last = start === input.length;
    if (last && generateNext) batch[size - 1] = [input[start - 1], { generateNext }];
    // One call per batch, awaited: node-llama-cpp would otherwise cut a long run at its batch
    // size and leave whatever remains, possibly one token, as the last batch.
    const output = await sequence.controlledEvaluate(batch);
    if (last && generateNext) logits = output[size - 1]?.next.logits;
  }
  return logits;
}

/** What `extend` returns from the logits after its last token. */
export function readLogits(next: Map<Token, number> | undefined, candidates: Token[], normalised: boolean, diagnose?: boolean): Extended {
  if (!next) throw new Error("the model returned no logits");
  // The candidates' values are the same numbers whichever way they were read.
  const values: Extended = normalised ? logProbsOf(next, candidates) : pick(next, candidates);
  if (diagnose) values.diagnostics = diagnosticsOf(next, candidates);
  return values;
}

/** Label mass and top token over the full distribution, in float64 like the readout. */
export function diagnosticsOf(logits: Map<Token, number>, candidates: Token[]): LabelDiagnostics {
  let max = -Infinity;
  let top: Token | undefined;
  for (const [token, value] of logits) {
    if (value > max) {
      max = value;
      top = token;
    }
  }
  let total = 0;
  for (const value of logits.values()) total += Math.exp(value - max);
  let mass = 0;
  for (const token of new Set(candidates)) mass += Math.exp(logitOf(logits, token) - max);
  // A tie for the top counts as a label when any label shares the top value.
  const topTokenIsLabel = candidates.some((token) => logitOf(logits, token) === max) || (top !== undefined && candidates.includes(top));
  return { labelMass: Math.min(1, mass / total), topTokenIsLabel };
}

/** Sizes of consecutive batches for `count` tokens: at most `max` each, none of one token. */
export function batchSizes(count: number, max: number): number[] {
  const sizes: number[] = [];
  let left = count;
  while (left > max) {
    // Leaving a single token for the last batch would make it a batch of one.
    const size = left - max === 1 && max > 2 ? max - 1 : max;
    sizes.push(size);
    left -= size;
  }
  if (left > 0) sizes.push(left);
  return sizes;
}

function pick(logits: Map<Token, number>, candidates: Token[]): Map<Token, number> {
  const result = new Map<Token, number>();
  for (const token of candidates) result.set(token, logitOf(logits, token));
  return result;
}

/** Greedy sampling (temperature 0) leaves every logit in place; a missing one is a bug, not a 0. */
function logitOf(logits: Map<Token, number>, token: Token): number {
  const logit = logits.get(token);
  if (logit === undefined) throw new Error(`the model returned no logit for token ${token}`);
  return logit;
}

/**
 * log softmax over the whole vocabulary, in float64: the native normaliser is a float32 sum,
 * too coarse for probabilities exact to 1e-6 once a label spans several tokens.
 */
export function logProbsOf(logits: Map<Token, number>, candidates: Token[]): Map<Token, number> {
  let max = -Infinity;
  for (const value of logits.values()) if (value > max) max = value;
  let total = 0;
  for (const value of logits.values()) total += Math.exp(value - max);
  const logNormaliser = max + Math.log(total);
  const result = new Map<Token, number>();
  for (const token of candidates) result.set(token, logitOf(logits, token) - logNormaliser);
  return result;
}
