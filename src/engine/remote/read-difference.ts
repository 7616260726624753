import type { Token } from "../label-trie.js";

/**
 * What the start-up probes of every remote engine measure: max |Δp| between two reads of the same
 * candidates, each read renormalised over its own candidates as labels are, so a difference in
 * probability mass outside them does not count. A candidate missing from `y` counts in full.
 */
export function readDifference(x: Map<Token, number>, y: Map<Token, number>): number {
  const [px, py] = [normalised(x), normalised(y)];
  let worst = 0;
  for (const [id, p] of px) worst = Math.max(worst, Math.abs(p - (py.get(id) ?? 0)));
  return worst;
}

function normalised(read: Map<Token, number>): Map<Token, number> {
  const max = Math.max(...read.values());
  let sum = 0;
  for (const value of read.values()) sum += Math.exp(value - max);
  return new Map([...read].map(([id, value]) => [id, Math.exp(value - max) / sum]));
}
