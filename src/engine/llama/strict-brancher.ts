import type { ControlledEvaluateInputItem, LlamaContextSequence } from "node-llama-cpp";
import type { Token } from "../label-trie.js";
import { prefixChunks, stemLength } from "../strict-shapes.js";
import { readLogits, type SequenceBrancher } from "./sequence-brancher.js";

/**
 * JUDGE_EXACTNESS=strict on the in-process engine: the sequence extended only in the fixed
 * shapes of strict-shapes.ts (prefix chunks from position 0, the question's stem, each trie
 * node's tail and path), so a read after a cached prefix, after other questions or after other
 * requests runs the very decodes a fresh evaluation runs, and gives the same bits by
 * construction, whatever the kernels do with batch shapes (they are not batch invariant: Gemma 3
 * moved by up to 0.04 between splits). The prefix is reused only as strictReuse allows.
 */
export interface StrictBrancher extends SequenceBrancher {
  /** Keeps `reused` prefix tokens (strictReuse's figure), evaluates the rest in the prefix's chunks. */
  evaluatePrefix(prefix: Token[], reused: number): Promise<void>;
}

export function createStrictBrancher(sequence: LlamaContextSequence): StrictBrancher {
  // Where the current question's stem ends and its last tokens, once its root was read.
  let question: { stemEnd: number; tail: Token[]; path: Token[] } | undefined;
  const rollbackTo = async (length: number) => {
    const end = sequence.nextTokenIndex;
    if (end > length) await sequence.eraseContextTokenRanges([{ start: length, end }]);
    if (question && length < question.stemEnd) question = undefined;
  };
  const batchSize = sequence.context.batchSize;

  /** One decode per `batchSize` tokens, in order; the logits after the last token when asked. */
  const evaluate = async (tokens: Token[], next?: NonNullable<Extract<ControlledEvaluateInputItem, unknown[]>[1]["generateNext"]>) => {
    let logits: Map<Token, number> | undefined;
    for (let start = 0; start < tokens.length; start += batchSize) {
      const batch: ControlledEvaluateInputItem[] = tokens.slice(start, start + batchSize);
      const last = start + batch.length === tokens.length;
      if (last && next) batch[batch.length - 1] = [tokens[tokens.length - 1], { generateNext: next }];
      const output = await sequence.controlledEvaluate(batch);
      if (last && next) logits = output[batch.length - 1]?.next.logits;
    }
    return logits;
  };
  /** `tokens` and a spare token in one batch, the spare then dropped (the shape llama-server's strict reads run). */
  const evaluateWithSpare = async (tokens: Token[]) => {
    const end = sequence.nextTokenIndex + tokens.length;
    // Which token is spare changes nothing kept: only its own row and cache entry, dropped at once.
    await evaluate([...tokens, tokens[0] ?? sequence.contextTokens[0] ?? (0 as Token)]);
    await sequence.eraseContextTokenRanges([{ start: end, end: end + 1 }]);
  };

  return {
    rollbackTo,
    async evaluatePrefix(prefix, reused) {
      await rollbackTo(reused);
      for (const [start, end] of prefixChunks(reused, prefix.length)) await evaluateWithSpare(prefix.slice(start, end));
    },
    async reuseOrEvaluatePrefix(prefix) {
      await this.evaluatePrefix(prefix, 0);
      return 0;
    },
    async extend(tokens, candidates, normalised, diagnose) {
      if (!question) {
        // The question's root: its stem once, then the tail.
        const stem = stemLength(tokens.length);
        await evaluateWithSpare(tokens.slice(0, stem));
        question = { stemEnd: sequence.nextTokenIndex, tail: tokens.slice(stem), path: [] };
      } else {
        question.path.push(...tokens);
        await rollbackTo(question.stemEnd);
      }
      const next = await evaluate([...question.tail, ...question.path], {
        logits: normalised || diagnose ? true : { filter: { tokens: candidates } },
        options: { temperature: 0 },
      });
      return readLogits(next, candidates, normalised, diagnose);
    },
    async retract(count) {
      if (question) question.path.splice(question.path.length - count, count);
      else await rollbackTo(sequence.nextTokenIndex - count);
    },
  };
}
