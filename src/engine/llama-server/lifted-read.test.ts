import { describe, expect, it } from "vitest";
import type { Token } from "../label-trie.js";
import { C_MIN, LiftMemory, liftFor, raiseLift, solveLifted, type ListedProb } from "./lifted-read.js";

/**
 * llama-server's post-sampling list computed here in double precision: logits with `lifts`
 * added, a softmax over the whole vocabulary, the top `n` entries.
 */
function postList(logits: number[], lifts: Map<Token, number>, n: number): ListedProb[] {
  const v = logits.map((l, id) => l + (lifts.get(id as Token) ?? 0));
  const max = Math.max(...v);
  const sum = v.reduce((s, x) => s + Math.exp(x - max), 0);
  return v
    .map((x, id) => ({ id: id as Token, prob: Math.exp(x - max) / sum }))
    .sort((a, b) => b.prob - a.prob)
    .slice(0, n);
}

function rawLogProbs(logits: number[]): number[] {
  const max = Math.max(...logits);
  const logZ = max + Math.log(logits.reduce((s, x) => s + Math.exp(x - max), 0));
  return logits.map((l) => l - logZ);
}

/** A flat distribution over 2,000 tokens, like random weights', with a few far-down candidates. */
function flatLogits(): number[] {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: 2000 }, () => 4 * next());
}

const CANDIDATES = [10, 11, 12, 13] as Token[];

describe("solveLifted: raw values from one post-sampling list", () => {
  it("without lifts the list is the raw distribution (C = 1)", () => {
    const logits = flatLogits();
    for (const id of CANDIDATES) logits[id] = 6;
    const raw = rawLogProbs(logits);
    const solved = solveLifted(postList(logits, new Map(), 64), CANDIDATES, new Map());
    expect(solved.ok, JSON.stringify(solved)).toBe(true);
    if (solved.ok) for (const id of CANDIDATES) expect(solved.logProbs.get(id)).toBeCloseTo(raw[id], 12);
  });

  it("lifted candidates far below the top come back with their raw values, whatever the lift", () => {
    const logits = flatLogits();
    CANDIDATES.forEach((id, i) => (logits[id] = -8 - 2 * i));
    const raw = rawLogProbs(logits);
    for (const lift of [19, 20, 23]) {
      const lifts = new Map(CANDIDATES.map((id) => [id, lift] as [Token, number]));
      const solved = solveLifted(postList(logits, lifts, 64), CANDIDATES, lifts);
      expect(solved.ok, `lift ${lift}: ${JSON.stringify(solved)}`).toBe(true);
      if (solved.ok) for (const id of CANDIDATES) expect(solved.logProbs.get(id), `lift ${lift}, token ${id}`).toBeCloseTo(raw[id], 10);
      // Depths: how far below the best unlifted token each candidate lies, read from ratios alone.
      if (solved.ok)
        expect(solved.depths.get(10 as Token)).toBeCloseTo(Math.max(...logits.filter((_, id) => !CANDIDATES.includes(id as Token))) - logits[10], 10);
    }
  });

  it("a candidate left out of the list is reported missing, with a lower bound on its depth", () => {
    const logits = flatLogits();
    CANDIDATES.forEach((id) => (logits[id] = -20));
    const lifts = new Map(CANDIDATES.map((id) => [id, 4] as [Token, number]));
    const solved = solveLifted(postList(logits, lifts, 64), CANDIDATES, lifts);
    expect(solved.ok).toBe(false);
    if (!solved.ok && solved.why === "missing") {
      expect(solved.missing.map((m) => m.id).sort()).toEqual(CANDIDATES);
      for (const m of solved.missing) expect(m.depthAbove).toBeLessThan(24);
    } else throw new Error(JSON.stringify(solved));
  });

  it("lifted tokens that hold nearly all the mass make C imprecise: refused, with depths for the next lifts", () => {
    const logits = flatLogits();
    CANDIDATES.forEach((id) => (logits[id] = 2));
    const lifts = new Map(CANDIDATES.map((id) => [id, 30] as [Token, number]));
    const solved = solveLifted(postList(logits, lifts, 64), CANDIDATES, lifts);
    expect(solved.ok).toBe(false);
    if (!solved.ok && solved.why === "dominated") {
      expect(solved.c).toBeLessThan(C_MIN);
      for (const id of CANDIDATES) expect(solved.depths.get(id)).toBeCloseTo(Math.max(...logits.filter((_, i) => !CANDIDATES.includes(i as Token))) - 2, 6);
    } else throw new Error(JSON.stringify(solved));
  });
});

describe("lifts", () => {
  it("no lift for a token near the top (its value is then not rounded); one nat above the best other token otherwise", () => {
    expect(liftFor(-3)).toBe(0);
    expect(liftFor(2)).toBe(0);
    expect(liftFor(15.2)).toBe(17);
    expect(liftFor(1000)).toBe(80);
  });

  it("a missing token's next lift is at least 8 more, and enough for the depth it was seen below", () => {
    expect(raiseLift(0, 3)).toBe(8);
    expect(raiseLift(10, 25)).toBe(30);
  });

  it("the memory lifts every token by the median depth it learnt; before learning, by nothing", () => {
    const memory = new LiftMemory();
    expect(memory.lift()).toBe(0);
    memory.learn([10, 30, 14]);
    expect(memory.lift()).toBe(15);
  });
});
