import type { Token } from "../label-trie.js";

/**
 * Texts already tokenised by one server (labels, template control text, question texts that
 * recur across requests), least recently used dropped first. Bounded by an estimate of the
 * memory it holds, not by a count: a 255-option question's text is tens of kilobytes. An entry
 * is a promise, so requests asking for the same text while it is being tokenised share one
 * call; a failed call is forgotten. One cache belongs to one preparer, which belongs to one
 * connection to one server: another server or model never sees its entries.
 */
export interface TokenCache {
  get(key: string): Promise<Token[]> | undefined;
  /** Remembers `tokens` under `key` (unless it alone would take a quarter of the budget) and returns it. */
  set(key: string, tokens: Promise<Token[]>): Promise<Token[]>;
  readonly size: number;
  /** The estimated bytes held. */
  readonly weight: number;
}

/** Default budget: ~1,000 questions of 255 short options, or every label many times over. */
export const TOKEN_CACHE_BYTES = 16 * 1024 * 1024;

/** Per entry: the key's UTF-16 code units, the promise and map slot; a token id is a number in an array. */
const ENTRY_OVERHEAD = 160;
const BYTES_PER_TOKEN = 8;

export function createTokenCache(budget = TOKEN_CACHE_BYTES): TokenCache {
  const entries = new Map<string, { tokens: Promise<Token[]>; weight: number }>();
  let weight = 0;

  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    weight -= entry.weight;
  };
  const trim = () => {
    for (const key of entries.keys()) {
      if (weight <= budget) break;
      drop(key);
    }
  };

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      // Most recently used last: Map iterates in insertion order, so trim() drops the oldest.
      entries.delete(key);
      entries.set(key, entry);
      return entry.tokens;
    },
    set(key, tokens) {
      const textWeight = 2 * key.length + ENTRY_OVERHEAD;
      if (textWeight > budget / 4) return tokens;
      drop(key);
      const entry = { tokens, weight: textWeight };
      entries.set(key, entry);
      weight += textWeight;
      trim();
      tokens.then(
        (ids) => {
          // Counted once known, if the entry is still the one stored.
          if (entries.get(key) !== entry) return;
          entry.weight += BYTES_PER_TOKEN * ids.length;
          weight += BYTES_PER_TOKEN * ids.length;
          trim();
        },
        () => {
          if (entries.get(key) === entry) drop(key);
        },
      );
      return tokens;
    },
    get size() {
      return entries.size;
    },
    get weight() {
      return weight;
    },
  };
}
