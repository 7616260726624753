import { describe, expect, it } from "vitest";
import { branchTokenCount, buildLabelTrie, readLabelLogProbs, trieDepth, type BranchingSequence, type Token } from "./label-trie.js";

const t = (...ids: number[]) => ids as Token[];

/**
 * A toy language over 6 tokens whose next-token log-probabilities depend on the whole history,
 * with a spy on how it is driven; the root offset models the skipped normaliser.
 */
function toySequence(rootOffset = 0) {
  const history: Token[] = [];
  const calls: { appended: Token[]; normalised: boolean }[] = [];
  const logProb = (context: Token[], next: Token) => {
    const weights = [0, 1, 2, 3, 4, 5].map((v) => Math.sin(context.reduce((a, b) => a * 7 + b, 1) + v * 1.3));
    const total = Math.log(weights.reduce((a, w) => a + Math.exp(w), 0));
    return weights[next] - total;
  };
  const sequence: BranchingSequence = {
    async extend(tokens, candidates, normalised) {
      history.push(...tokens);
      calls.push({ appended: tokens, normalised });
      return new Map(candidates.map((c) => [c, logProb(history, c) + (normalised ? 0 : rootOffset)]));
    },
    async retract(count) {
      history.splice(history.length - count, count);
    },
  };
  return { sequence, history, calls, logProb };
}

describe("label trie", () => {
  it("shares leading tokens and counts one extra evaluation per shared prefix", () => {
    const trie = buildLabelTrie([t(1), t(2, 3), t(2, 4), t(5, 1, 1)]);
    expect(branchTokenCount(trie)).toBe(3); // [2], [5], [5,1]
    expect(trieDepth(trie)).toBe(3);
  });

  it("refuses labels whose tokens are a prefix of another label's", () => {
    expect(() => buildLabelTrie([t(1), t(1, 2)])).toThrow(/prefix/);
    expect(() => buildLabelTrie([t(1, 2), t(1)])).toThrow(/collides/);
    expect(() => buildLabelTrie([t(3), t(3)])).toThrow(/collides/);
    expect(() => buildLabelTrie([t()])).toThrow(/no tokens/);
  });

  it("reads each label's probability by the chain rule and leaves only the question appended", async () => {
    const labels = [t(1), t(2, 3), t(2, 4), t(5, 1, 1), t(5, 1, 2)];
    const question = t(0, 3, 3);
    const toy = toySequence();
    const read = await readLabelLogProbs(toy.sequence, buildLabelTrie(labels), question, labels.length);
    const expected = labels.map((label) => label.reduce((sum, token, j) => sum + toy.logProb([...question, ...label.slice(0, j)], token), 0));
    read.forEach((value, i) => expect(value, `label ${i}: ${read} vs ${expected}`).toBeCloseTo(expected[i], 12));
    expect(toy.history).toEqual(question);
    expect(toy.calls.length, JSON.stringify(toy.calls)).toBe(1 + 3);
  });

  it("skips only the first step's normaliser, which shifts every label by the same constant", async () => {
    const labels = [t(1), t(2, 3), t(2, 4), t(5, 1, 2)];
    const exact = await readLabelLogProbs(toySequence(0).sequence, buildLabelTrie(labels), t(0), labels.length);
    const toy = toySequence(42.5);
    const shifted = await readLabelLogProbs(toy.sequence, buildLabelTrie(labels), t(0), labels.length);
    shifted.forEach((value, i) => expect(value - exact[i], `label ${i}`).toBeCloseTo(42.5, 12));
    expect(toy.calls.map((c) => c.normalised)).toEqual([false, true, true, true]);
  });
});
