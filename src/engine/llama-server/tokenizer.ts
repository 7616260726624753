import type { Token } from "../label-trie.js";
import { callJson, describe, quote, type RemoteServer } from "../remote/http.js";
import type { BuiltinToken, RemoteTokenizer } from "../remote/prepare.js";
import { EngineFailedError } from "../types.js";
import { checkStatus } from "./completion.js";
import type { ServerFacts } from "./server-facts.js";

/**
 * `/tokenize`: never adds BOS/EOS; `parse_special` is sent every time (the server defaults it to
 * true). At most two calls at once: each of llama-server's HTTP threads (`--threads-http`, by
 * default slots + 2) serves one keep-alive connection, and a prompt's dozens of pieces sent at
 * once would open a connection each and wait seconds for an idle one to time out.
 *
 * Several texts go in one call: llama-server's `content` may be a list of strings and token ids,
 * each string tokenised on its own (`tokenize_mixed`: `common_tokenize` per string, no BOS
 * after the first) and each id copied through. The texts are sent with the id -1 between them,
 * which no tokenisation yields, and the reply is cut at each -1: each text's tokens are exactly
 * what tokenising it alone gives. A reply with another count of separators (a server that
 * checks or drops ids) is refused; `checkBatching` at start-up turns batching off for such a server.
 */
export interface ServerTokenizer extends RemoteTokenizer {
  tokenizeMany(texts: readonly string[], special: boolean, signal?: AbortSignal): Promise<Token[][]>;
  /** Whether several texts go in one call (true until `checkBatching` finds otherwise). */
  batching: boolean;
}

const SEPARATOR = -1;

export function createServerTokenizer(server: RemoteServer, vocabularySize?: number): ServerTokenizer {
  const limit = createLimit(2);
  const where = `${describe(server)}/tokenize`;
  const valid = (id: unknown) => Number.isInteger(id) && (id as number) >= 0 && (vocabularySize === undefined || (id as number) < vocabularySize);
  const send = async (content: string | Array<string | number>, special: boolean, signal?: AbortSignal): Promise<unknown[]> => {
    const reply = await limit(() => callJson(server, "/tokenize", { content, add_special: false, parse_special: special }, signal));
    checkStatus(reply, where);
    const tokens = (reply.body as { tokens?: unknown } | undefined)?.tokens;
    if (!Array.isArray(tokens)) throw new EngineFailedError(`${where} returned no list of token ids: ${quote(reply.body)}`);
    return tokens;
  };
  const checked = (tokens: unknown[], body: unknown): Token[] => {
    if (!tokens.every(valid)) throw new EngineFailedError(`${where} returned no list of token ids: ${quote(body)}`);
    return tokens as Token[];
  };
  const tokenizer: ServerTokenizer = {
    batching: true,
    async tokenize(text, special, signal) {
      const tokens = await send(text, special, signal);
      return checked(tokens, tokens);
    },
    async tokenizeMany(texts, special, signal) {
      if (!tokenizer.batching || texts.length < 2) return Promise.all(texts.map((text) => tokenizer.tokenize(text, special, signal)));
      const content = texts.flatMap((text, i) => (i === 0 ? [text] : [SEPARATOR, text]));
      const tokens = await send(content, special, signal);
      const out: unknown[][] = [[]];
      for (const id of tokens) {
        if (id === SEPARATOR) out.push([]);
        else out[out.length - 1].push(id);
      }
      if (out.length !== texts.length) {
        throw new EngineFailedError(`${where} answered ${out.length} token lists for ${texts.length} texts sent as one list: ${quote(tokens)}`);
      }
      return out.map((list) => checked(list, tokens));
    },
  };
  return tokenizer;
}

/**
 * Whether this server tokenises a list of texts as `tokenizeMany` expects: the same ids as one
 * call per text for a few texts whose tokens would merge if they were joined. Otherwise each
 * text gets a call of its own, as before.
 */
export async function checkBatching(tokenizer: ServerTokenizer, signal?: AbortSignal): Promise<void> {
  const texts = ["A", "B", " A", "AB", "\n"];
  const alone = await Promise.all(texts.map((text) => tokenizer.tokenize(text, false, signal)));
  let together: Token[][] | undefined;
  try {
    together = await tokenizer.tokenizeMany(texts, false, signal);
  } catch (error) {
    if (!(error instanceof EngineFailedError)) throw error;
  }
  tokenizer.batching = together !== undefined && JSON.stringify(together) === JSON.stringify(alone);
}

/** BOS and EOS by id, from the strings `/props` names; NL as the newline's token. */
export async function builtinTokens(facts: ServerFacts, tokenizer: RemoteTokenizer): Promise<Partial<Record<BuiltinToken, Token>>> {
  const single = async (text: string | undefined, special: boolean) => {
    if (text === undefined) return undefined;
    const tokens = await tokenizer.tokenize(text, special);
    return tokens.length === 1 ? tokens[0] : undefined;
  };
  const [bos, eos, nl] = await Promise.all([single(facts.bosToken, true), single(facts.eosToken, true), single("\n", false)]);
  const out: Partial<Record<BuiltinToken, Token>> = {};
  if (bos !== undefined) out.BOS = bos;
  if (eos !== undefined) out.EOS = eos;
  if (nl !== undefined) out.NL = nl;
  return out;
}

/** Two distinct ordinary tokens ("A" and "B" as the model spells them alone): forced in the probe, appended by the rollback. */
export async function spareTokens(tokenizer: RemoteTokenizer, signal?: AbortSignal): Promise<[Token, Token]> {
  const [a, b] = await Promise.all([tokenizer.tokenize("A", false, signal), tokenizer.tokenize("B", false, signal)]);
  const first = a[a.length - 1];
  const second = b[b.length - 1];
  if (first === undefined || second === undefined || first === second) {
    throw new EngineFailedError('the server\'s tokenizer gives no two distinct tokens for "A" and "B"');
  }
  return [first, second];
}

/** At most `n` calls at once, the rest in arrival order (a finished call hands its place on). */
export function createLimit(n: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (active < n) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
