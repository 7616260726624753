import type { Token } from "../label-trie.js";
import { describe, type RemoteServer } from "../remote/http.js";
import type { BuiltinToken, RemoteTokenizer } from "../remote/prepare.js";
import { fillCache, readCompletion, type CompletionRead } from "./completion.js";
import type { ServerFacts } from "./server-facts.js";

/** The server is reachable but would answer inexactly: the engine refuses to serve. */
export class IncompatibleServerError extends Error {
  override name = "IncompatibleServerError";
}

/**
 * How far a read continuing a cached prefix may differ from a fresh read of the same tokens (in
 * probability). With flash attention off, llama.cpp's CPU backend gives every batch of two or
 * more tokens the same numbers (measured 0 on the tiny fixture); with it on (`-fa auto`,
 * llama-server's default, turns it on for CPU) a read of a few new tokens differs from a fresh
 * one by ~1e-3 there, and so would the server's answers from the in-process engine's. The margin
 * covers builds whose batching changes only the last bits.
 */
export const BATCHING_TOLERANCE = 1e-5;

const PROBE_TEXT = "The probe reads the same tokens twice, once fresh and once continuing a cached prefix. ";

/**
 * Start-up checks on the server's actual answers, since `/props` shows neither flash attention
 * nor how a request's fields are treated:
 * 1. flash attention: a read that evaluates only the last two tokens after a cached prefix (as
 *    every read of the walk does, see walk.ts) equals a fresh read (`cache_prompt: false`) of
 *    the whole prompt within `tolerance`. Flash attention (its CPU kernel answers differently
 *    for a few new tokens than for many), or another batch-dependent kernel, would make every
 *    cached state answer differently, so we refuse rather than answer inexactly.
 * 2. raw values: two reads of the same cached prompt forcing different tokens return the same
 *    top list, and the forced ids: logit_bias is honoured and does not leak into the reported
 *    values, which are the raw distribution and not post-sampling probabilities.
 */
export async function probeRawReadout(
  server: RemoteServer,
  facts: ServerFacts,
  tokenizer: RemoteTokenizer,
  builtins: Partial<Record<BuiltinToken, Token>>,
  spare: [Token, Token],
  tolerance: number,
  signal?: AbortSignal,
): Promise<void> {
  const where = describe(server);
  const text = await tokenizer.tokenize(PROBE_TEXT, false, signal);
  const length = Math.min(160, facts.slotContext - 2);
  const tokens: Token[] = builtins.BOS === undefined ? [] : [builtins.BOS];
  while (tokens.length < length) tokens.push(...text.slice(0, length - tokens.length));
  const keep = tokens.length - 2;
  const nProbs = Math.min(16, facts.vocabularySize ?? 16);
  const read = (force: Token, cachePrompt = true) => readCompletion(server, { tokens, nProbs, force, slot: 0, cachePrompt }, signal);

  const fresh = await read(spare[0], false);
  if (fresh.top.size !== nProbs) {
    throw new IncompatibleServerError(`${where}/completion returned ${fresh.top.size} top log-probabilities for n_probs ${nProbs}`);
  }
  // Keeps all but the last two tokens cached (none evaluated again: the prompt is not cached whole).
  await fillCache(server, [...tokens.slice(0, keep), tokens[keep] === spare[0] ? spare[1] : spare[0]], 0, signal);
  const continued = await read(spare[0]);
  const batching = difference(fresh, continued);
  if (batching > tolerance) {
    throw new IncompatibleServerError(
      `${where} answers differently for a cached prefix than for a fresh prompt (max |Δp| ${batching.toExponential(2)} > ${tolerance.toExponential(0)}): flash attention is on (start llama-server with -fa off) or its backend's results depend on batching`,
    );
  }
  const forcedA = await read(spare[0]);
  const forcedB = await read(spare[1]);
  const leak = difference(forcedA, forcedB);
  if (leak > tolerance) {
    throw new IncompatibleServerError(
      `${where}/completion reports processed probabilities: forcing another token with logit_bias changed the reported top list (max |Δp| ${leak.toExponential(2)}); it must report the raw distribution (post_sampling_probs: false)`,
    );
  }
}

/** Max |Δp| over two reads' top lists; a token in one list but not the other counts in full. */
function difference(x: CompletionRead, y: CompletionRead): number {
  let worst = 0;
  for (const [id, logProb] of x.top) {
    const other = y.top.get(id);
    worst = Math.max(worst, other === undefined ? Math.exp(logProb) : Math.abs(Math.exp(logProb) - Math.exp(other)));
  }
  return worst;
}
