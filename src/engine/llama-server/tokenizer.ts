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
 */
export function createServerTokenizer(server: RemoteServer, vocabularySize?: number): RemoteTokenizer {
  const limit = createLimit(2);
  const where = `${describe(server)}/tokenize`;
  const valid = (id: unknown) => Number.isInteger(id) && (id as number) >= 0 && (vocabularySize === undefined || (id as number) < vocabularySize);
  return {
    async tokenize(text, special, signal) {
      const reply = await limit(() => callJson(server, "/tokenize", { content: text, add_special: false, parse_special: special }, signal));
      checkStatus(reply, where);
      const tokens = (reply.body as { tokens?: unknown } | undefined)?.tokens;
      if (!Array.isArray(tokens) || !tokens.every(valid)) throw new EngineFailedError(`${where} returned no list of token ids: ${quote(reply.body)}`);
      return tokens as Token[];
    },
  };
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
