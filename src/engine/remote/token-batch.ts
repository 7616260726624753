import type { Token } from "../label-trie.js";
import { throwIfAborted } from "../types.js";
import type { TokenCache } from "./token-cache.js";

/** A server's tokenizer: never adds BOS/EOS; `special` parses control-token text as control tokens. */
export interface RemoteTokenizer {
  tokenize(text: string, special: boolean, signal?: AbortSignal): Promise<Token[]>;
  /** Several texts in as few calls as the server allows; each text's tokens exactly as `tokenize` gives them alone. */
  tokenizeMany?(texts: readonly string[], special: boolean, signal?: AbortSignal): Promise<Token[][]>;
}

/** A text to tokenise: `special` parses control-token text as control tokens; `keep` remembers it (text that recurs across requests). */
export interface TextToTokenize {
  text: string;
  special: boolean;
  keep: boolean;
}

/**
 * Tokenises a request's texts in as few server calls as its tokenizer allows: what the cache
 * holds costs nothing, the rest goes in one `tokenizeMany` call per `special` setting (a
 * tokenizer without it gets one call per text). Each text's tokens are what tokenising it alone
 * gives. The shared call is not cancelled by one request's signal, since other requests may be
 * waiting on the texts it carries; each request stops waiting at its own signal.
 */
export async function tokenizeAll(tokenizer: RemoteTokenizer, cache: TokenCache, items: readonly TextToTokenize[], signal?: AbortSignal): Promise<Token[][]> {
  throwIfAborted(signal);
  const misses = [new Map<string, Deferred>(), new Map<string, Deferred>()];
  const found = items.map((item) => {
    const key = keyOf(item);
    const held = item.keep ? cache.get(key) : undefined;
    if (held) return held;
    const batch = misses[item.special ? 1 : 0];
    let deferred = batch.get(item.text);
    if (!deferred) {
      deferred = defer();
      batch.set(item.text, deferred);
      // Not awaited by anyone when the request is abandoned: the rejection is handled here.
      deferred.promise.catch(() => {});
    }
    return item.keep ? cache.set(key, deferred.promise) : deferred.promise;
  });
  misses.forEach((batch, special) => {
    if (batch.size > 0) void send(tokenizer, [...batch.entries()], special === 1);
  });
  return abortable(Promise.all(found), signal);
}

function keyOf(item: TextToTokenize): string {
  return (item.special ? "s" : "t") + item.text;
}

async function send(tokenizer: RemoteTokenizer, batch: Array<[string, Deferred]>, special: boolean): Promise<void> {
  const texts = batch.map(([text]) => text);
  try {
    const tokens =
      tokenizer.tokenizeMany && texts.length > 1
        ? await tokenizer.tokenizeMany(texts, special)
        : await Promise.all(texts.map((text) => tokenizer.tokenize(text, special)));
    batch.forEach(([, deferred], i) => deferred.resolve(tokens[i]));
  } catch (error) {
    for (const [, deferred] of batch) deferred.reject(error);
  }
}

interface Deferred {
  promise: Promise<Token[]>;
  resolve(tokens: Token[]): void;
  reject(error: unknown): void;
}

function defer(): Deferred {
  let resolve!: (tokens: Token[]) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<Token[]>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      try {
        throwIfAborted(signal);
      } catch (error) {
        reject(error);
      }
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
