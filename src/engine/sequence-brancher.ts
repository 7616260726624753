import type { ControlledEvaluateInputItem, LlamaContextSequence } from "node-llama-cpp";
import type { BranchingSequence, Token } from "./label-trie.js";

/**
 * The model's sequence as a `BranchingSequence`: extends by evaluating tokens, retracts by
 * erasing them from the KV cache, and keeps a prefix cached across requests.
 */
export interface SequenceBrancher extends BranchingSequence {
  /** Keeps the longest cached match of `prefix`, erases the rest, evaluates what is missing. */
  reuseOrEvaluatePrefix(prefix: Token[]): Promise<void>;
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
      if (common < prefix.length) await sequence.controlledEvaluate(prefix.slice(common));
    },
    async extend(tokens, candidates, normalised) {
      // Only the requested logits cross into JavaScript unless the normaliser is needed.
      const logits = normalised ? true : { filter: { tokens: candidates } };
      const input: ControlledEvaluateInputItem[] = tokens.slice(0, -1);
      input.push([tokens[tokens.length - 1], { generateNext: { logits, options: { temperature: 0 } } }]);
      const output = await sequence.controlledEvaluate(input);
      const next = output[tokens.length - 1]?.next.logits;
      if (!next) throw new Error("the model returned no logits");
      return normalised ? logProbsOf(next, candidates) : pick(next, candidates);
    },
    async retract(count) {
      await rollbackTo(sequence.nextTokenIndex - count);
    },
  };
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
