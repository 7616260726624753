import { describe, expect, it } from "vitest";
import { renderValue } from "../judgment/render.js";
import { hasNumberJsonChanges, withNumberTexts } from "./json-numbers.js";
import { parseJson } from "./read-body.js";

/** A state as the model reads it, from the bytes a client sent. */
async function rendered(body: string): Promise<string> {
  const { value, numberTexts } = parseJson(new TextEncoder().encode(body));
  return renderValue((value as { state: unknown }).state, numberTexts);
}

describe("numbers in a request, as the model reads them", () => {
  const written: [string, string][] = [
    ["a number past the largest double", "1e999"],
    ["an integer of 30 digits", "123456789012345678901234567890"],
    ["2^53 + 1", "9007199254740993"],
    ["a negative 2^53 + 1", "-9007199254740993"],
    ["more decimals than a double holds", "3.14159265358979323846264338327950288"],
    ["a trailing zero", "1.0"],
    ["an exponent", "1E5"],
    ["negative zero", "-0"],
  ];
  for (const [what, text] of written) {
    it(`keeps ${what} (${text}) as written, where JSON.parse would change it`, async () => {
      expect(JSON.stringify(JSON.parse(text)), "the case really is one JSON.parse changes").not.toBe(text);
      const state = await rendered(`{"state": {"n": ${text}, "list": [1, ${text}, {"deep": ${text}}]}}`);
      expect(state, state).toBe(`{\n  "list": [\n    1,\n    ${text},\n    {\n      "deep": ${text}\n    }\n  ],\n  "n": ${text}\n}`);
    });
  }

  it("renders a body whose numbers JSON.parse keeps exactly as before, byte for byte", async () => {
    const state = { b: [0.1, 2, -3.5, 1e21, 5e-324], a: { z: 9007199254740991, y: -0.25 } };
    const text = await rendered(JSON.stringify({ state }));
    expect(text, text).toBe(renderValue(state));
  });

  it("leaves strings alone, including ones that look like numbers or hold escaped quotes", async () => {
    const state = await rendered(String.raw`{"state": {"s": "1.0 \" 1e999 \\", "t": "\\\"", "n": 1.0}}`);
    expect(JSON.parse(state.replace("1.0\n", "1\n")), state).toEqual({ s: '1.0 " 1e999 \\', t: '\\"', n: 1 });
    expect(state, state).toContain('"n": 1.0');
  });

  it("takes the last of duplicate keys, value and text alike, as JSON.parse does", async () => {
    expect(await rendered('{"state": {"a": 1.0, "a": 2}}')).toBe('{\n  "a": 2\n}');
    expect(await rendered('{"state": {"a": 2, "a": 1.0}}')).toBe('{\n  "a": 1.0\n}');
    expect(await rendered('{"state": {"a": 1.0, "a": {"b": 1}}}')).toBe('{\n  "a": {\n    "b": 1\n  }\n}');
  });

  it("keeps a __proto__ key as data in the re-parsed value", async () => {
    const state = await rendered('{"state": {"__proto__": {"n": 1.50}, "m": 1}}');
    expect(state, state).toBe('{\n  "__proto__": {\n    "n": 1.50\n  },\n  "m": 1\n}');
    expect(({} as Record<string, unknown>).n).toBeUndefined();
  });
});

/** A seeded generator of JSON texts with numbers of every kind, odd keys and whitespace. */
function randomJson(seed: number): string {
  let state = seed;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)];
  const space = () => pick(["", " ", "\n  ", "\t"]);
  const numbers = ["0", "-0", "1.0", "1e999", "-1e999", "9007199254740993", "123456789012345678901234567890", "0.1", "42", "1E-7", "2.50", "1e21"];
  const strings = ['"a"', '"__proto__"', '"\\"q\\""', '"\\\\"', '"1.0"', '"é\\u00e9"', '""', '"x y"'];
  const value = (depth: number): string => {
    const kind = depth > 4 ? pick(["n", "s", "l"]) : pick(["n", "s", "l", "o", "a", "o", "a"]);
    if (kind === "n") return pick(numbers);
    if (kind === "s") return pick(strings);
    if (kind === "l") return pick(["true", "false", "null"]);
    const size = Math.floor(next() * 4);
    const members = Array.from({ length: size }, () => (kind === "o" ? `${pick(strings)}${space()}:${space()}${value(depth + 1)}` : value(depth + 1)));
    return kind === "o" ? `{${space()}${members.join(`${space()},${space()}`)}${space()}}` : `[${space()}${members.join(`,${space()}`)}${space()}]`;
  };
  return `${space()}{"state": ${value(0)}, "k": 1.0}${space()}`;
}

describe("withNumberTexts", () => {
  it("builds exactly what JSON.parse builds (values, key order, __proto__ keys), for 2,000 random bodies", () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const text = randomJson(seed);
      const parsed = JSON.parse(text);
      expect(hasNumberJsonChanges(text), text).toBe(true);
      const { value: rebuilt, numberTexts } = withNumberTexts(text, parsed);
      expect(numberTexts?.size, text).toBeGreaterThan(0);
      expect(rebuilt, text).not.toBe(parsed);
      // JSON.stringify walks own keys in order, "__proto__" included.
      expect(JSON.stringify(rebuilt), text).toBe(JSON.stringify(parsed));
      expect(Object.getPrototypeOf(rebuilt), text).toBe(Object.prototype);
    }
  });

  it("renders the re-parsed value in the layout of JSON.stringify with sorted keys, numbers as written", () => {
    // Every number (and null, which is what JSON.stringify makes of 1e999) to one mark: the rest must match exactly.
    const numbersMarked = (s: string) => s.replace(/-?\d+(\.\d+)?([eE][+-]?\d+)?|null/g, "#");
    for (let seed = 1; seed <= 500; seed++) {
      const text = randomJson(seed);
      const { state } = JSON.parse(text) as { state: unknown };
      const { value, numberTexts } = withNumberTexts(text, JSON.parse(text));
      const ours = renderValue((value as { state: unknown }).state, numberTexts);
      expect(numbersMarked(ours), text).toBe(numbersMarked(renderValue(state)));
      if (typeof state === "object" && state !== null) expect(JSON.parse(ours), text).toEqual(state);
    }
  });

  it("returns JSON.parse's own value when no number changes", () => {
    const text = '{"a": [1, 2.5, -3, 1e+21, "1.0"], "b": {"c": 0}}';
    const parsed = JSON.parse(text);
    expect(hasNumberJsonChanges(text)).toBe(false);
    expect(withNumberTexts(text, parsed)).toEqual({ value: parsed });
    expect(withNumberTexts(text, parsed).value).toBe(parsed);
  });
});
