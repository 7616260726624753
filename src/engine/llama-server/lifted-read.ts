import type { Token } from "../label-trie.js";

/**
 * One read of a trie node gives the raw log-probability of every candidate, wherever it ranks
 * (batch-read.ts): llama-server's post-sampling list (`post_sampling_probs`, temperature 1, no
 * truncating sampler) reports p'ₖ = e^(vₖ) / Σ e^v over the whole vocabulary, where
 * vₖ = lₖ + bₖ for the tokens W lifted by `logit_bias` bₖ > 0 and vₖ = lₖ otherwise. Every
 * unlifted token keeps its raw value up to one common factor C = Z / Z′, and
 *
 *   C = (1 − Σ_W p′) + Σ_W p′ₖ·e^(−bₖ)        (the two sums are the raw mass outside and inside W, over Z′)
 *   log pₖ = log p′ₖ − bₖ − log C            (for any listed token; bₖ = 0 if unlifted)
 *
 * exactly. So a lift only has to bring a candidate into the list; its raw value comes back
 * whatever its rank. The server normalises with a double-precision sum, so 1 − Σ_W p′ is good to
 * ~3e-8 absolute (its terms rounded to float32), and C is trusted only above C_MIN. A lift rounds vₖ to float32 (~1e-6 at
 * |vₖ| ≈ 20, relative, in a ratio of two candidates). With no lift, C = 1 exactly.
 */

/**
 * Below this, 1 − Σ_W p′ fixes C to worse than ~3e-4 relative, the error llama-server's own raw
 * list carries in its level (it normalises with a float32 sum; 3.4e-4 measured on a flat
 * distribution): lift less and read again. Ratios of candidates do not depend on C.
 */
export const C_MIN = 1e-4;
/**
 * A candidate is lifted to this many nats above the best unlifted token. What works spans ~5
 * nats too little (it falls out of a 64-entry list on a flat distribution) to ~10 too much (the
 * lifted tokens hold so much of the mass that C < C_MIN); measured on the random-weight 0.5B
 * fixture, where a label's depth moves by ±5 nats between contexts: 0–1 nat gave the fewest
 * second reads (2–3 of 24 questions, against 3–4 at 2 and 3.5 nats).
 */
const MARGIN = 1;
/** Tokens at most this deep are in a 64-entry list unlifted on a real model's peaked distribution. */
const LISTED_DEPTH = 2;
/** Lifts are whole numbers: exact in JSON and float32, the same bias wherever a token is read. */
const MAX_LIFT = 80;

export interface ListedProb {
  id: Token;
  prob: number;
}

export type Solved =
  | { ok: true; logProbs: Map<Token, number>; depths: Map<Token, number> }
  /** `depthAbove`: the token lies deeper than this below the best unlifted token. */
  | { ok: false; why: "missing"; missing: Array<{ id: Token; depthAbove: number }> }
  | { ok: false; why: "dominated"; depths: Map<Token, number>; c: number };

/**
 * Raw log-probabilities of `candidates` from one post-sampling list read under `lifts`. Fails
 * (for another read with other lifts) when a lifted token or a candidate is not listed, or when
 * the lifted tokens hold so much of the mass that C is imprecise. `depths`: how many nats each
 * candidate lies below the best listed token that is neither lifted nor a candidate.
 */
export function solveLifted(list: readonly ListedProb[], candidates: readonly Token[], lifts: ReadonlyMap<Token, number>): Solved {
  const listed = new Map<Token, number>();
  for (const entry of list) listed.set(entry.id, entry.prob);
  // The best token that is neither a candidate nor lifted: the level a candidate must reach to be
  // listed. Depths are ratios of listed values, so C cancels from them: they hold even where C
  // does not.
  const other = list.find((entry) => entry.prob > 0 && !lifts.has(entry.id) && !candidates.includes(entry.id));
  const missing = [...new Set([...candidates, ...lifts.keys()])].filter((id) => !((listed.get(id) ?? 0) > 0));
  if (missing.length > 0) {
    // A missing token lies below the last listed one: at least this deep, plus its lift.
    const last = list.length > 0 ? list[list.length - 1].prob : 0;
    const below = other && last > 0 ? Math.log(other.prob) - Math.log(last) : 0;
    return { ok: false, why: "missing", missing: missing.map((id) => ({ id, depthAbove: below + (lifts.get(id) ?? 0) })) };
  }
  const depths = new Map<Token, number>();
  if (other) for (const id of candidates) depths.set(id, Math.log(other.prob) - Math.log(listed.get(id)!) + (lifts.get(id) ?? 0));
  let inside = 0;
  let raw = 0;
  for (const [id, lift] of lifts) {
    const p = listed.get(id)!;
    inside += p;
    raw += p * Math.exp(-lift);
  }
  const c = lifts.size === 0 ? 1 : 1 - inside + raw;
  if (!(c >= C_MIN)) return { ok: false, why: "dominated", depths, c };
  const logC = Math.log(c);
  const logProbs = new Map<Token, number>();
  for (const id of candidates) logProbs.set(id, Math.log(listed.get(id)!) - (lifts.get(id) ?? 0) - logC);
  return { ok: true, logProbs, depths };
}

/**
 * How deep label tokens lie on the engine's model (random weights: far below the top; real
 * models: usually at it), learnt once at start-up (calibrate.ts) so that most reads list every
 * candidate the first time; a wrong guess costs one more read. One figure for all tokens: on
 * random weights a token's depth moves by several nats from one context to the next, so a
 * per-token figure learnt in one context is no better a guess. Not updated by requests: a lift
 * rounds a logit in float32, so lifts that followed the traffic would move answers in their
 * 8th digit, and strict answers must not depend on what was asked before.
 */
export class LiftMemory {
  private typical = Number.NEGATIVE_INFINITY;

  lift(): number {
    return liftFor(this.typical);
  }

  /** The median of the depths seen. */
  learn(depths: readonly number[]): void {
    const sorted = [...depths].sort((x, y) => x - y);
    if (sorted.length > 0) this.typical = sorted[Math.floor(sorted.length / 2)];
  }
}

/** The lift that lists a token `depth` nats below the best other token MARGIN nats above it. */
export function liftFor(depth: number): number {
  // A token this close to the top is listed unlifted, and an unlifted value is not rounded.
  if (!(depth > LISTED_DEPTH)) return 0;
  return Math.min(MAX_LIFT, Math.ceil(depth + MARGIN));
}

/** The next lift for a token missing from a read at `lift` that showed it deeper than `depthAbove`: at least 8 more. */
export function raiseLift(lift: number, depthAbove: number): number {
  return Math.min(MAX_LIFT, Math.max(lift + 8, liftFor(depthAbove + 4)));
}
