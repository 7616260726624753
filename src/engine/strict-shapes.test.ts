import { describe, expect, it } from "vitest";
import type { Token } from "./label-trie.js";
import { prefixChunks, STRICT_CHUNK, strictReuse } from "./strict-shapes.js";

const tokens = (n: number, from = 0): Token[] => Array.from({ length: n }, (_, i) => (from + i) as Token);

describe("strict mode's prefix chunks", () => {
  it("cut the prefix every 256 tokens from position 0, the last chunk shorter", () => {
    expect(prefixChunks(0, 600)).toEqual([
      [0, 256],
      [256, 512],
      [512, 600],
    ]);
    expect(prefixChunks(0, 512)).toEqual([
      [0, 256],
      [256, 512],
    ]);
    expect(prefixChunks(0, 1)).toEqual([[0, 1]]);
  });

  it("start at the first chunk not held, and are none when the whole prefix is held", () => {
    expect(prefixChunks(256, 600)).toEqual([
      [256, 512],
      [512, 600],
    ]);
    expect(prefixChunks(512, 600)).toEqual([[512, 600]]);
    expect(prefixChunks(600, 600)).toEqual([]);
  });
});

describe("strict mode's prefix reuse", () => {
  it("keeps a held prefix whole only when it is the same prefix", () => {
    expect(strictReuse(tokens(300), tokens(300))).toBe(300);
  });

  it("keeps only the whole chunks shared with another prefix (a partial chunk was read in another shape)", () => {
    const prefix = tokens(600);
    expect(strictReuse([...tokens(400), 9999 as Token], prefix)).toBe(STRICT_CHUNK);
    expect(strictReuse(tokens(700), prefix)).toBe(2 * STRICT_CHUNK);
    expect(strictReuse(tokens(200), tokens(300))).toBe(0);
    expect(strictReuse(tokens(300), tokens(200)), "a longer held prefix: its chunk around 200 was longer").toBe(0);
  });

  it("keeps nothing when the slot's content is unknown", () => {
    expect(strictReuse(undefined, tokens(300))).toBe(0);
  });
});
