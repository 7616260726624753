import type { LabelTrieNode, Token } from "../label-trie.js";
import type { RemotePrepared } from "../remote/prepare.js";
import { checkedLogProb } from "../remote/readout.js";
import { readingCalls, readNodes, type BatchSession, type NodeToRead } from "./batch-read.js";

/**
 * Why reads are shaped as they are, and not by the shared parallel walk (remote/readout.ts):
 *
 * llama-server reuses the longest common prefix of a slot's cache and evaluates the rest of the
 * prompt as one batch (when the prompt is cached whole, it evaluates the last token again). Its
 * CPU kernels give a token evaluated alone slightly different numbers than the same token in a
 * batch of two or more (3e-7 in p on the tiny fixture; 3e-5 in a label's renormalised
 * probability after a long state), while every batch of two or more gives the same numbers.
 * So every read makes the server evaluate at least its last two tokens together (tolerant), or
 * the whole question suffix after a prefix evaluated in fixed chunks (strict, see
 * batch-read.ts): each read then sees the same cache state whatever the slot held before, which
 * makes the answers independent of the other questions, their order and earlier requests. A
 * slot's reads run one at a time, in a fixed order (one call's prompts run in order on its slot).
 *
 * A question costs a call of fills and one reading call when its labels are one token each,
 * whatever its options (batch-read.ts); a read made again (its lift missed) costs one more.
 * Two-token labels cost two calls, fills included (relative-read.ts). A request stays within
 * two calls per question: the fills get a call of their own only while that leaves a call for
 * each question still to come and one for a read made again; otherwise they open the reading
 * call, where each costs ~27 ms more (logits and sampling on a 152k vocabulary, two CPU cores).
 */
export type SlotSession = Omit<BatchSession, "prefixLength">;

/**
 * log P(label) for every label of every question (full log-softmax values, chain rule over the
 * trie). Each question's nodes are read in calls of their own, so a question's answer never
 * depends on the others beside it.
 */
export async function readLabelLogProbsOnSlot(prepared: RemotePrepared, session: SlotSession, signal?: AbortSignal): Promise<number[][]> {
  const prefixLength = prepared.prefixTokens.length;
  const answers: number[][] = [];
  const budget = 2 * prepared.questions.length;
  let made = 0;
  const onCall = (bytes: number) => {
    made++;
    session.onCall?.(bytes);
  };
  for (const [index, question] of prepared.questions.entries()) {
    const nodes: NodeToRead[] = [];
    const stem = prefixLength + Math.max(0, question.tokens.length - 2);
    const collect = (context: Token[], node: LabelTrieNode) => {
      nodes.push({ context, candidates: [...node.children.keys()], stem });
      for (const [token, child] of node.children) if (child.labelIndex === undefined) collect([...context, token], child);
    };
    collect([...prepared.prefixTokens, ...question.tokens], question.trie);
    const prefixReused = index === 0 ? session.prefixReused : prefixLength;
    const later = prepared.questions.length - index - 1;
    const separateFills = made + 1 + readingCalls(nodes) + later + 1 <= budget;
    const reads = await readNodes({ ...session, prefixLength, prefixReused, separateFills, onCall }, nodes, signal);

    // The same traversal order as `collect`, so the n-th internal node met is nodes[n].
    let next = 0;
    const out = new Array<number>(question.labelCount).fill(Number.NaN);
    const walk = (node: LabelTrieNode, logProbSoFar: number) => {
      const read = reads[next++];
      for (const [token, child] of node.children) {
        const logProb = logProbSoFar + checkedLogProb(read, token);
        if (child.labelIndex !== undefined) out[child.labelIndex] = logProb;
        else walk(child, logProb);
      }
    };
    walk(question.trie, 0);
    answers.push(out);
  }
  return answers;
}
