import { describe, expect, it } from "vitest";
import type { Token } from "../label-trie.js";
import type { RemoteTokenizer } from "./prepare.js";
import { tokenizeAll, type TextToTokenize } from "./token-batch.js";
import { createTokenCache } from "./token-cache.js";

/** A tokenizer that spells each character as its code (special text as one token), and records its calls. */
function fakeTokenizer(batching = true) {
  const calls: Array<{ texts: readonly string[]; special: boolean }> = [];
  const spell = (text: string, special: boolean) => (special ? [1000 + text.length] : [...text].map((c) => c.charCodeAt(0))) as Token[];
  const tokenizer: RemoteTokenizer = {
    async tokenize(text, special) {
      calls.push({ texts: [text], special });
      return spell(text, special);
    },
  };
  if (batching) {
    tokenizer.tokenizeMany = async (texts, special) => {
      calls.push({ texts, special });
      return texts.map((text) => spell(text, special));
    };
  }
  return { tokenizer, calls };
}

const text = (t: string, keep = true): TextToTokenize => ({ text: t, special: false, keep });
const special = (t: string): TextToTokenize => ({ text: t, special: true, keep: true });

describe("tokenizeAll", () => {
  it("sends a request's texts in one call per `special` setting, and each text's tokens in order", async () => {
    const { tokenizer, calls } = fakeTokenizer();
    const items = [special("<s>"), text("state", false), text("AA"), text("AB"), special("</s>"), text("AA")];
    const out = await tokenizeAll(tokenizer, createTokenCache(), items, undefined);
    expect(out).toEqual([[1003], [115, 116, 97, 116, 101], [65, 65], [65, 66], [1004], [65, 65]]);
    expect(calls).toEqual([
      { texts: ["state", "AA", "AB"], special: false },
      { texts: ["<s>", "</s>"], special: true },
    ]);
  });

  it("does not send again what it keeps, and always sends what it does not keep", async () => {
    const { tokenizer, calls } = fakeTokenizer();
    const cache = createTokenCache();
    const labels = Array.from({ length: 255 }, (_, i) => text(`L${i}`));
    await tokenizeAll(tokenizer, cache, [text("state one", false), ...labels], undefined);
    calls.length = 0;
    const again = await tokenizeAll(tokenizer, cache, [text("state one", false), ...labels], undefined);
    expect(calls).toEqual([{ texts: ["state one"], special: false }]);
    expect(again[1]).toEqual([76, 48]);
    calls.length = 0;
    await tokenizeAll(tokenizer, cache, labels, undefined);
    expect(calls).toEqual([]);
  });

  it("lets requests asking at once share one call for a text", async () => {
    const { tokenizer, calls } = fakeTokenizer();
    const cache = createTokenCache();
    const [a, b] = await Promise.all([
      tokenizeAll(tokenizer, cache, [text("AA")], undefined),
      tokenizeAll(tokenizer, cache, [text("AA"), text("AB")], undefined),
    ]);
    expect(a).toEqual([[65, 65]]);
    expect(b).toEqual([
      [65, 65],
      [65, 66],
    ]);
    expect(calls.map((c) => c.texts)).toEqual([["AA"], ["AB"]]);
  });

  it("forgets a failed call, so the next request asks again", async () => {
    const { tokenizer, calls } = fakeTokenizer();
    const cache = createTokenCache();
    const failing: RemoteTokenizer = { tokenize: () => Promise.reject(new Error("server down")), tokenizeMany: () => Promise.reject(new Error("server down")) };
    await expect(tokenizeAll(failing, cache, [text("AA"), text("AB")], undefined)).rejects.toThrow("server down");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.size).toBe(0);
    expect(await tokenizeAll(tokenizer, cache, [text("AA"), text("AB")], undefined)).toEqual([
      [65, 65],
      [65, 66],
    ]);
    expect(calls).toHaveLength(1);
  });

  it("without tokenizeMany, makes one call per text still to tokenise", async () => {
    const { tokenizer, calls } = fakeTokenizer(false);
    const cache = createTokenCache();
    await tokenizeAll(tokenizer, cache, [text("AA"), text("AB")], undefined);
    await tokenizeAll(tokenizer, cache, [text("AA"), text("AC")], undefined);
    expect(calls.map((c) => c.texts)).toEqual([["AA"], ["AB"], ["AC"]]);
  });

  it("stops waiting when its own request is aborted; another request waiting on the same call still gets its tokens", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: RemoteTokenizer = {
      tokenize: async (t) => (await gate, [t.length as Token]),
      tokenizeMany: async (texts) => (await gate, texts.map((t) => [t.length as Token])),
    };
    const cache = createTokenCache();
    const abort = new AbortController();
    const first = tokenizeAll(slow, cache, [text("AA"), text("ABC")], abort.signal);
    const second = tokenizeAll(slow, cache, [text("ABC")], undefined);
    abort.abort();
    await expect(first).rejects.toThrow("closed the request");
    release();
    expect(await second).toEqual([[3]]);
  });
});

describe("createTokenCache", () => {
  it("holds at most its budget, dropping the least recently used first", async () => {
    const cache = createTokenCache(4_000);
    for (let i = 0; i < 100; i++) void cache.set(`text ${i}`, Promise.resolve([i as Token]));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.weight).toBeLessThanOrEqual(4_000);
    expect(cache.size).toBeLessThan(100);
    expect(cache.get("text 0")).toBeUndefined();
    expect(cache.get("text 99")).toBeDefined();
    const kept = cache.size;
    // Used again, the oldest entry kept outlives the next insertion: the one after it goes instead.
    const oldest = `text ${100 - kept}`;
    expect(cache.get(oldest)).toBeDefined();
    void cache.set("one more", Promise.resolve([1 as Token]));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cache.get(oldest)).toBeDefined();
    expect(cache.get(`text ${101 - kept}`)).toBeUndefined();
  });

  it("does not keep a text that alone would take a quarter of its budget", () => {
    const cache = createTokenCache(4_000);
    void cache.set("x".repeat(1_000), Promise.resolve([1 as Token]));
    expect(cache.size).toBe(0);
  });
});
