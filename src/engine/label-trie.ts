/**
 * Label probabilities by the chain rule: P(label) = Π P(tokenᵢ | prompt, token₁…tokenᵢ₋₁).
 * Labels sharing leading tokens share those evaluations, so a set of labels costs one
 * evaluation per distinct proper prefix (one for single-token labels).
 */
import type { Token } from "node-llama-cpp";

export type { Token };

export interface LabelTrieNode {
  children: Map<Token, LabelTrieNode>;
  /** Set on the node that completes a label. */
  labelIndex?: number;
}

/** Throws when one label's tokens are a prefix of another's: its probability would need an end marker. */
export function buildLabelTrie(labelTokens: Token[][]): LabelTrieNode {
  const root: LabelTrieNode = { children: new Map() };
  labelTokens.forEach((tokens, labelIndex) => {
    if (tokens.length === 0) throw new Error(`label #${labelIndex} has no tokens`);
    let node = root;
    for (const token of tokens) {
      if (node.labelIndex !== undefined) throw new Error(`label #${node.labelIndex} is a token prefix of label #${labelIndex}`);
      let child = node.children.get(token);
      if (!child) node.children.set(token, (child = { children: new Map() }));
      node = child;
    }
    if (node.labelIndex !== undefined || node.children.size > 0) {
      throw new Error(`label #${labelIndex} collides with another label's tokens`);
    }
    node.labelIndex = labelIndex;
  });
  return root;
}

/** Label tokens evaluated beyond the question itself: one per internal node below the root. */
export function branchTokenCount(node: LabelTrieNode): number {
  let count = 0;
  for (const child of node.children.values()) {
    if (child.labelIndex === undefined) count += 1 + branchTokenCount(child);
  }
  return count;
}

export function trieDepth(node: LabelTrieNode): number {
  let depth = 0;
  for (const child of node.children.values()) depth = Math.max(depth, 1 + trieDepth(child));
  return depth;
}

/**
 * How the whole vocabulary met the label set at the first label position (`x_diagnostics`):
 * the probability it gave to the labels' first tokens together, and whether its most likely
 * next token was one of them. A low mass means the model wanted to say something else, so the
 * renormalised answer rests on little.
 */
export interface LabelDiagnostics {
  labelMass: number;
  topTokenIsLabel: boolean;
}

/** The candidates' values, and the diagnostics when they were asked for. */
export type Extended = Map<Token, number> & { diagnostics?: LabelDiagnostics };

/** A sequence that can be extended and rolled back: the model's KV cache, or a test double. */
export interface BranchingSequence {
  /**
   * Appends `tokens`, returns log P(candidate) as the next token for each candidate. With
   * `normalised` false the values may be off by a constant shared by all candidates of the call.
   */
  extend(tokens: Token[], candidates: Token[], normalised: boolean, diagnose?: boolean): Promise<Extended>;
  /** Removes the last `count` appended tokens. */
  retract(count: number): Promise<void>;
}

/**
 * Appends `questionTokens`, then walks the trie depth-first, extending by one label token per
 * internal node and retracting after each branch. Leaves the sequence with the question appended.
 *
 * Returns log P(label) + c, with c the same for every label of the question: the first step's
 * normaliser is shared by all labels and cancels in any softmax over them, at any temperature,
 * so it is skipped (reading it means reading the whole vocabulary). Deeper steps differ per
 * branch and are normalised exactly.
 */
export async function readLabelLogProbs(
  sequence: BranchingSequence,
  root: LabelTrieNode,
  questionTokens: Token[],
  labelCount: number,
  diagnostics?: (d: LabelDiagnostics) => void,
): Promise<number[]> {
  const logProbs = new Array<number>(labelCount).fill(Number.NaN);
  await walk(sequence, root, questionTokens, 0, logProbs, true, diagnostics);
  return logProbs;
}

async function walk(
  sequence: BranchingSequence,
  node: LabelTrieNode,
  appended: Token[],
  logProbSoFar: number,
  out: number[],
  isRoot: boolean,
  diagnostics?: (d: LabelDiagnostics) => void,
): Promise<void> {
  const next = await sequence.extend(appended, [...node.children.keys()], !isRoot, isRoot && diagnostics !== undefined);
  if (isRoot && diagnostics && next.diagnostics) diagnostics(next.diagnostics);
  for (const [token, child] of node.children) {
    const logProb = logProbSoFar + (next.get(token) ?? Number.NaN);
    if (child.labelIndex !== undefined) {
      out[child.labelIndex] = logProb;
    } else {
      await walk(sequence, child, [token], logProb, out, false);
      await sequence.retract(1);
    }
  }
}
