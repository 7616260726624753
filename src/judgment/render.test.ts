import { describe, expect, it } from "vitest";
import { renderValue } from "./render.js";

/** Rebuilds `value` with every object's keys inserted in reverse order, at every depth. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).reverse()) {
      Object.defineProperty(out, key, { value: reverseKeys((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

const NESTED = {
  zeta: { y: 1, b: [{ q: true, a: null }, "text", [{ z: 1, a: 2 }]], a: "é" },
  alpha: [3, 2, 1],
  한국어: { "🎉": "party", " space": "x" },
  mid: { deeper: { deepest: { k2: "v2", k1: "v1" } } },
};

describe("renderValue", () => {
  it("returns strings unchanged, byte for byte", () => {
    for (const s of ["", "plain", "  padded  ", "line 1\nline 2", "한국어 🎉", '{"looks": "like json"}']) {
      expect(renderValue(s)).toBe(s);
    }
  });

  it("renders null and undefined as the empty string", () => {
    expect(renderValue(null)).toBe("");
    expect(renderValue(undefined)).toBe("");
  });

  it("gives identical text for the same object whatever its key insertion order, at every depth", () => {
    const reversed = reverseKeys(NESTED);
    expect(JSON.stringify(reversed), "the fixture really is reordered").not.toBe(JSON.stringify(NESTED));
    const a = renderValue(NESTED);
    const b = renderValue(reversed);
    expect(b, `${a}\n---\n${b}`).toBe(a);
  });

  it("sorts keys at every depth, including inside arrays", () => {
    const text = renderValue({ b: [{ d: 1, c: 2 }], a: { f: 1, e: 2 } });
    expect(text, text).toBe(JSON.stringify({ a: { e: 2, f: 1 }, b: [{ c: 2, d: 1 }] }, null, 2));
  });

  it("keeps array order (arrays are ordered data)", () => {
    const text = renderValue(["b", "a", { z: 1 }, 3]);
    expect(JSON.parse(text), text).toEqual(["b", "a", { z: 1 }, 3]);
  });

  it("renders structured values as JSON that parses back to the same value", () => {
    const text = renderValue(NESTED);
    expect(JSON.parse(text), text).toEqual(NESTED);
  });

  it("keeps a __proto__ key as data and does not change anything's prototype", () => {
    const value = JSON.parse('{"b": 1, "__proto__": {"polluted": true}}');
    const text = renderValue(value);
    expect(JSON.parse(text), text).toEqual(JSON.parse('{"__proto__": {"polluted": true}, "b": 1}'));
    expect(text, text).toContain('"__proto__"');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("does not mutate its input", () => {
    const input = { b: { d: 1, c: 2 }, a: 1 };
    const before = JSON.stringify(input);
    renderValue(input);
    expect(JSON.stringify(input)).toBe(before);
  });

  it("renders empty objects and arrays as JSON, not as the empty string", () => {
    expect(renderValue({})).toBe("{}");
    expect(renderValue([])).toBe("[]");
  });

  it("distinguishes a string from the same text inside structure", () => {
    expect(renderValue("42")).not.toBe(renderValue(["42"]));
    expect(renderValue({ a: "x" })).not.toBe(renderValue({ a: ["x"] }));
  });
});
