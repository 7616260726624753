import { createHash } from "node:crypto";
import type { EngineResult } from "../../engine/types.js";

/**
 * JUDGE_READ_CACHE_MB: what the model read for a prompt, kept so that the same prompt asked
 * again by the same account is answered without running the model. Only strict engines' reads
 * are kept: there a read is the same bits whatever ran before or beside it, so an answer from
 * the cache is the answer a fresh read would give, and only the time differs. A hit is billed
 * like a read (the price is per input token, as for a request served from a cached prefix).
 *
 * Keys start with the account: another tenant's hit would tell, by its speed, that this exact
 * state was asked before. What refits of a task read again (the same examples, another seed or
 * head kind) and a client's repeated questions come from here. Least recently used entries go
 * first once the budget is spent.
 */
export interface CachedRead {
  result: EngineResult;
  /** The hidden states per question, once a request that needed them read them. */
  features?: Float32Array[];
}

export interface ReadCache {
  get(key: string): CachedRead | undefined;
  set(key: string, read: CachedRead): void;
  stats(): { entries: number; bytes: number; hits: number; misses: number };
}

/** The cache's key: who asks, which model, and the prompt exactly as the engine is given it. */
export function readKey(accountId: string, modelId: string, engineModel: string, prompt: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify([accountId, modelId, engineModel, prompt]))
    .digest("base64url");
}

/** A cache of at most `maxBytes` (its entries' numbers and keys; a little per entry for the rest). */
export function createReadCache(maxBytes: number): ReadCache {
  const entries = new Map<string, { read: CachedRead; bytes: number }>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;
  const sizeOf = (key: string, read: CachedRead) =>
    key.length +
    128 +
    read.result.labelLogProbs.reduce((sum, row) => sum + 8 * row.length + 32, 0) +
    (read.features?.reduce((sum, f) => sum + f.byteLength + 64, 0) ?? 0);
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) {
        misses++;
        return undefined;
      }
      hits++;
      // Map order is recency: a hit moves to the end.
      entries.delete(key);
      entries.set(key, entry);
      return entry.read;
    },
    set(key, read) {
      const old = entries.get(key);
      if (old) {
        bytes -= old.bytes;
        entries.delete(key);
      }
      const size = sizeOf(key, read);
      if (size > maxBytes) return;
      entries.set(key, { read, bytes: size });
      bytes += size;
      for (const [oldest, entry] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= entry.bytes;
      }
    },
    stats: () => ({ entries: entries.size, bytes, hits, misses }),
  };
}
