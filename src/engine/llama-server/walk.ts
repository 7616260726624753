import type { LabelTrieNode, Token } from "../label-trie.js";
import type { RemoteServer } from "../remote/http.js";
import type { RemotePrepared } from "../remote/prepare.js";
import { checkedLogProb } from "../remote/readout.js";
import { throwIfAborted } from "../types.js";
import { fillCache, readCompletion } from "./completion.js";

/**
 * Why this walk, and not the shared parallel one (remote/readout.ts):
 *
 * llama-server reuses the longest common prefix of a slot's cache and evaluates the rest of the
 * prompt as one batch (when the prompt is cached whole, it evaluates the last token again). Its
 * CPU kernels give a token evaluated alone slightly different numbers than the same token in a
 * batch of two or more (3e-7 in p on the tiny fixture; 3e-5 in a label's renormalised
 * probability after a long state), while every batch of two or more gives the same numbers.
 * The in-process engine's runtime gives the same numbers either way. So every read here makes
 * the server evaluate at least its last two tokens together: it first rolls the slot back to
 * the prompt minus its last two tokens (by evaluating that plus one spare token: a prompt the
 * cache never holds whole, so no kept token is evaluated again), then reads. Each read then sees
 * the same cache state whatever the slot held before, which makes the answers independent of
 * the other questions, their order and earlier requests. For the same reason a slot's reads run
 * one at a time, in a fixed order; states on other slots run in parallel.
 */

/** A label set's first read asks for at least this many of the top tokens: labels a model means are near the top. */
const MIN_TOP = 64;
/** Candidates still missing after the first list: one wide list, then one forced read each. */
const WIDE_TOP = 4096;

export interface SlotSession {
  server: RemoteServer;
  slot: number;
  vocabularySize?: number;
  /** Two different token ids; a rollback appends whichever differs from the prompt token it stands in for. */
  spareTokens: [Token, Token];
}

/** log P(label) for every label of every question (full log-softmax values, chain rule over the trie). */
export async function readLabelLogProbsOnSlot(prepared: RemotePrepared, session: SlotSession, signal?: AbortSignal): Promise<number[][]> {
  const answers: number[][] = [];
  for (const question of prepared.questions) {
    const out = new Array<number>(question.labelCount).fill(Number.NaN);
    await walk(session, [...prepared.prefixTokens, ...question.tokens], question.trie, 0, out, signal);
    answers.push(out);
  }
  return answers;
}

async function walk(
  session: SlotSession,
  tokens: Token[],
  node: LabelTrieNode,
  logProbSoFar: number,
  out: number[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const read = await readNode(session, tokens, [...node.children.keys()], signal);
  for (const [token, child] of node.children) {
    const logProb = logProbSoFar + checkedLogProb(read, token);
    if (child.labelIndex !== undefined) out[child.labelIndex] = logProb;
    else await walk(session, [...tokens, token], child, logProb, out, signal);
  }
}

/**
 * The raw top list (candidates found there are done), then one wide list if any are missing,
 * then one forced read per candidate still missing: every value from the same raw softmax.
 */
async function readNode(
  session: SlotSession,
  tokens: Token[],
  candidates: Token[],
  signal: AbortSignal | undefined,
): Promise<Map<Token, number>> {
  const cap = (n: number) => Math.max(1, Math.min(n, session.vocabularySize ?? n));
  const wanted = new Set(candidates);
  const found = new Map<Token, number>();
  // Everything but the last two tokens, then a spare token that differs from the next one.
  const keep = Math.max(0, tokens.length - 2);
  const spare = session.spareTokens[tokens[keep] === session.spareTokens[0] ? 1 : 0];
  const rollback = [...tokens.slice(0, keep), spare];
  const read = async (nProbs: number, force: Token) => {
    throwIfAborted(signal);
    await fillCache(session.server, rollback, session.slot, signal);
    const result = await readCompletion(session.server, { tokens, nProbs, force, slot: session.slot }, signal);
    found.set(force, result.logProb);
    for (const [id, logProb] of result.top) if (wanted.has(id)) found.set(id, logProb);
  };
  const missing = () => candidates.filter((id) => !found.has(id));

  const first = cap(Math.max(MIN_TOP, 2 * candidates.length));
  await read(first, candidates[0]);
  if (missing().length > 0 && cap(WIDE_TOP) > first) await read(cap(WIDE_TOP), missing()[0]);
  while (missing().length > 0) await read(1, missing()[0]);
  return found;
}
