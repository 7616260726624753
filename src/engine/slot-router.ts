import type { Token } from "./label-trie.js";

/**
 * Chooses which cached state (slot) serves a request, so tenants interleaving different states
 * keep reusing theirs: the slot whose cached tokens the request continues the furthest, or the
 * least recently used slot (empty slots first) when no slot holds enough of it. Each slot runs
 * one request at a time, in arrival order.
 */
export interface SlotRouter {
  readonly size: number;
  /** Waits for the chosen slot; the lease says which it is and must be released exactly once. */
  acquire(tokens: readonly Token[]): Promise<SlotLease>;
  /** Tokens each slot is expected to hold (for tests and the bench). */
  cachedLengths(): number[];
}

export interface SlotLease {
  readonly slot: number;
  /** Tokens of the request's prefix already cached in the slot when it was chosen. */
  readonly reused: number;
  release(): void;
}

interface Slot {
  /** What the slot holds once the requests queued on it have run: the last one's prefix. */
  cached: readonly Token[];
  lastUsed: number;
  tail: Promise<void>;
}

export function createSlotRouter(size: number): SlotRouter {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots must be a positive integer, got ${size}`);
  const slots: Slot[] = Array.from({ length: size }, () => ({ cached: [], lastUsed: -1, tail: Promise.resolve() }));
  let clock = 0;

  return {
    size,
    cachedLengths: () => slots.map((slot) => slot.cached.length),
    async acquire(tokens) {
      const { index, reused } = choose(slots, tokens);
      const slot = slots[index];
      slot.cached = tokens.slice();
      slot.lastUsed = clock++;
      let release!: () => void;
      const done = new Promise<void>((resolve) => (release = resolve));
      const turn = slot.tail;
      slot.tail = turn.then(() => done);
      await turn;
      let released = false;
      return {
        slot: index,
        reused,
        release() {
          if (released) return;
          released = true;
          release();
        },
      };
    },
  };
}

/**
 * A slot is worth reusing when the request continues at least half of what it holds: evicting
 * another state for a shared system prompt would cost that state a full re-read later.
 */
function choose(slots: Slot[], tokens: readonly Token[]): { index: number; reused: number } {
  let best = -1;
  let bestCommon = 0;
  slots.forEach((slot, index) => {
    const common = commonPrefix(slot.cached, tokens);
    if (common > 0 && common * 2 >= slot.cached.length && common > bestCommon) {
      best = index;
      bestCommon = common;
    }
  });
  if (best >= 0) return { index: best, reused: bestCommon };
  let lru = 0;
  slots.forEach((slot, index) => {
    if (slot.lastUsed < slots[lru].lastUsed) lru = index;
  });
  return { index: lru, reused: commonPrefix(slots[lru].cached, tokens) };
}

export function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
