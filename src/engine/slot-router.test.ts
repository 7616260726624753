import { describe, expect, it } from "vitest";
import type { Token } from "./label-trie.js";
import { createSlotRouter } from "./slot-router.js";

const t = (...ids: number[]) => ids as Token[];
const SYSTEM = [1, 2, 3];
const state = (n: number, length = 20) => t(...SYSTEM, ...Array.from({ length }, (_, i) => 100 * n + i));

describe("slot router", () => {
  it("sends a request back to the slot holding its state, while other states interleave", async () => {
    const router = createSlotRouter(3);
    const seen: number[][] = [[], [], []];
    for (let round = 0; round < 4; round++) {
      for (let s = 0; s < 3; s++) {
        const lease = await router.acquire(state(s));
        seen[s].push(lease.slot);
        if (round > 0) expect(lease.reused, `round ${round}, state ${s}`).toBe(state(s).length);
        lease.release();
      }
    }
    expect(
      seen.map((slots) => new Set(slots).size),
      JSON.stringify(seen),
    ).toEqual([1, 1, 1]);
    expect(new Set(seen.map((slots) => slots[0])).size, JSON.stringify(seen)).toBe(3);
  });

  it("uses an empty slot rather than evicting a state that shares only the system prompt", async () => {
    const router = createSlotRouter(2);
    const first = await router.acquire(state(1));
    first.release();
    const second = await router.acquire(state(2));
    expect(second.slot, JSON.stringify(router.cachedLengths())).not.toBe(first.slot);
    second.release();
  });

  it("evicts the least recently used state when every slot holds another", async () => {
    const router = createSlotRouter(2);
    for (const s of [1, 2, 1]) (await router.acquire(state(s))).release();
    const third = await router.acquire(state(3));
    const again2 = third.slot;
    third.release();
    // State 2 was used least recently, so state 3 took its slot and state 1 still reuses its own.
    const one = await router.acquire(state(1));
    expect(one.reused).toBe(state(1).length);
    expect(one.slot).not.toBe(again2);
    one.release();
  });

  it("reuses a slot whose state the request extends (a conversation that grew)", async () => {
    const router = createSlotRouter(2);
    (await router.acquire(state(1))).release();
    const grown = await router.acquire(t(...state(1), 7, 8, 9));
    expect(grown.reused).toBe(state(1).length);
    grown.release();
  });

  it("runs one request at a time per slot, in arrival order", async () => {
    const router = createSlotRouter(1);
    const order: string[] = [];
    const a = await router.acquire(state(1));
    const b = router.acquire(state(1)).then((lease) => {
      order.push("b");
      lease.release();
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    order.push("a");
    a.release();
    a.release(); // a second release is harmless
    await b;
    expect(order).toEqual(["a", "b"]);
  });
});
