import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from "./api-key.js";
import { randomBase62 } from "./random.js";

describe("API keys", () => {
  it("are tjs_ followed by 40 base62 characters and never repeat", () => {
    const keys = Array.from({ length: 1000 }, generateApiKey);
    const malformed = keys.filter((key) => !/^tjs_[0-9A-Za-z]{40}$/.test(key));
    expect(malformed, JSON.stringify(malformed)).toEqual([]);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.every(isWellFormedApiKey)).toBe(true);
  });

  it("display the first 12 characters and hash to SHA-256 hex of the whole key", () => {
    const key = generateApiKey();
    expect(displayPrefix(key)).toBe(key.slice(0, 12));
    expect(hashApiKey(key)).toBe(createHash("sha256").update(key).digest("hex"));
    expect(hashApiKey(key), hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("randomBase62", () => {
  it("uses all 62 characters with roughly equal frequency", () => {
    const sample = randomBase62(62 * 2000);
    const counts = new Map<string, number>();
    for (const char of sample) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size, [...counts.keys()].sort().join("")).toBe(62);
    // Expected 2000 each, sd ≈ 44; plain modulo would push "0"–"7" to ≈ 2420 (5/256 vs 4/256).
    const outliers = [...counts].filter(([, n]) => Math.abs(n - 2000) > 250);
    expect(outliers, JSON.stringify(outliers)).toEqual([]);
  });

  it("returns exactly the requested length", () => {
    expect([0, 1, 40, 1000].map((n) => randomBase62(n).length)).toEqual([0, 1, 40, 1000]);
  });
});
