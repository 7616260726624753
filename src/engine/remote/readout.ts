import type { LabelTrieNode, Token } from "../label-trie.js";
import { EngineFailedError, throwIfAborted } from "../types.js";
import type { RemotePrepared } from "./prepare.js";

/**
 * One stateless question to a server: given these token ids, the raw (full-vocabulary,
 * unbiased, temperature-free) log-probability of each candidate as the next token. A reader
 * returns every candidate or throws; the server's prefix cache makes repeated prefixes cheap.
 */
export interface NodeReader {
  read(tokens: Token[], candidates: Token[], signal?: AbortSignal): Promise<Map<Token, number>>;
}

/**
 * log P(label) for every label of every question, by the chain rule over the label trie: one
 * read per internal trie node (one per question for single-token labels), each on the prompt
 * plus that node's path, so every question is an isolated branch of the shared prefix.
 */
export async function readLabelLogProbsRemote(prepared: RemotePrepared, reader: NodeReader, signal?: AbortSignal): Promise<number[][]> {
  return Promise.all(
    prepared.questions.map(async (question) => {
      const out = new Array<number>(question.labelCount).fill(Number.NaN);
      await walk(reader, [...prepared.prefixTokens, ...question.tokens], question.trie, 0, out, signal);
      return out;
    }),
  );
}

async function walk(
  reader: NodeReader,
  tokens: Token[],
  node: LabelTrieNode,
  logProbSoFar: number,
  out: number[],
  signal: AbortSignal | undefined,
): Promise<void> {
  throwIfAborted(signal);
  const candidates = [...node.children.keys()];
  const read = await reader.read(tokens, candidates, signal);
  const deeper: Promise<void>[] = [];
  for (const [token, child] of node.children) {
    const logProb = checkedLogProb(read, token);
    if (child.labelIndex !== undefined) out[child.labelIndex] = logProbSoFar + logProb;
    else deeper.push(walk(reader, [...tokens, token], child, logProbSoFar + logProb, out, signal));
  }
  await Promise.all(deeper);
}

/** A log-probability is ≤ 0 or −∞ (a token the model rules out); anything else is a broken reply. */
export function checkedLogProb(read: Map<Token, number>, token: Token): number {
  const value = read.get(token);
  if (value === undefined) throw new EngineFailedError(`the engine server omitted the requested token ${token}`);
  if (typeof value !== "number" || Number.isNaN(value) || value === Infinity || value > 1e-4) {
    throw new EngineFailedError(`the engine server returned ${String(value)} as the log-probability of token ${token}`);
  }
  return Math.min(value, 0);
}
