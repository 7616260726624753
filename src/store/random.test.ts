import { describe, expect, it } from "vitest";
import { randomBytesNow } from "../random-bytes.js";
import { newId, randomBase62 } from "./random.js";

describe("pooled randomness", () => {
  it("never hands out the same bytes twice, across refills of the pool", () => {
    const seen = new Set<string>();
    // 16 bytes at a time, well past several 4 KB refills.
    for (let i = 0; i < 2_000; i++) seen.add(randomBytesNow(16).toString("hex"));
    expect(seen.size).toBe(2_000);
  });

  it("serves a request larger than the pool", () => {
    const bytes = randomBytesNow(10_000);
    expect(bytes.length).toBe(10_000);
    expect(new Set(bytes).size).toBeGreaterThan(200);
  });

  it("gives ids of the documented shape, each character about equally likely", () => {
    expect(newId("res")).toMatch(/^res_[0-9A-Za-z]{16}$/);
    const counts = new Map<string, number>();
    for (const char of randomBase62(62_000)) counts.set(char, (counts.get(char) ?? 0) + 1);
    const [fewest, most] = [Math.min(...counts.values()), Math.max(...counts.values())];
    // 1,000 expected per character; ±20% is more than 6 standard deviations.
    expect({ characters: counts.size, fewest, most }).toEqual({ characters: 62, fewest: expect.any(Number), most: expect.any(Number) });
    expect(fewest, JSON.stringify([...counts])).toBeGreaterThan(800);
    expect(most, JSON.stringify([...counts])).toBeLessThan(1200);
  });
});
