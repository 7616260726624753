import type { Token } from "./label-trie.js";
import { commonPrefix } from "./slot-router.js";

/**
 * JUDGE_EXACTNESS=strict, the shapes every engine that reads llama.cpp token by token evaluates
 * (in-process: llama/strict-brancher.ts; llama-server: llama-server/batch-read.ts), so that a
 * read after a cached prefix runs exactly the decodes a fresh read runs:
 *
 * 1. the state prefix in chunks of STRICT_CHUNK tokens from position 0, the last one shorter,
 *    each followed by one spare token that is then dropped;
 * 2. each question's stem (its tokens but the last two) as one batch after the prefix, followed
 *    by a spare token that is then dropped;
 * 3. each label-trie node as one batch after the stem: the question's last two tokens and the
 *    node's path.
 *
 * Why fixed shapes and not "any batch of two or more": llama.cpp's CPU kernels are not batch
 * invariant in general. Quantized matrix products run groups of 4 rows through repacked GEMM
 * kernels and the leftover rows through GEMV ones, a lone token takes other kernels again, so a
 * token's numbers depend on how many tokens shared its batch and where it sat in it: measured
 * 1.25e-4 in p on the 0.5B Q4_0 fixture and 0.002–0.04 on Gemma 3 270M (Q4_K_M) between two
 * splits of the same tokens. Rows of a batch do not otherwise mix (attention is causal; a
 * dropped spare token is attended by nothing kept), so the same shapes give the same bits.
 */
export const STRICT_CHUNK = 256;

/** Tokens per decode: a longer run is cut every 512 tokens (llama-server's default ubatch). */
export const STRICT_BATCH = 512;

/**
 * Prefix tokens a slot holds evaluated in this prefix's own chunks: the same prefix, all of it;
 * another one sharing a start, the whole chunks they share (a partial last chunk was evaluated
 * in another shape); unknown (a failed read, a new slot), none.
 */
export function strictReuse(held: readonly Token[] | undefined, prefix: readonly Token[]): number {
  if (!held) return 0;
  const common = commonPrefix(held, prefix);
  if (common === prefix.length && held.length === prefix.length) return common;
  return Math.floor(common / STRICT_CHUNK) * STRICT_CHUNK;
}

/** The [start, end) ranges of the prefix chunks still to evaluate after `reused` tokens (a chunk boundary or the whole prefix). */
export function prefixChunks(reused: number, length: number): Array<[number, number]> {
  const chunks: Array<[number, number]> = [];
  if (reused >= length) return chunks;
  for (let start = Math.floor(reused / STRICT_CHUNK) * STRICT_CHUNK; start < length; start += STRICT_CHUNK) {
    chunks.push([start, Math.min(start + STRICT_CHUNK, length)]);
  }
  return chunks;
}

/** Tokens of a question evaluated once per question (the stem); the last ones are re-read with each node's path. */
export const stemLength = (questionTokens: number): number => Math.max(0, questionTokens - 2);
