import type { Token } from "../label-trie.js";
import type { RemoteTokenizer } from "../remote/prepare.js";

/**
 * One "logprobs of these ids" read at a temperature, checked like every later reply. `force`
 * makes that candidate the generated token where the server adds the generated token to the
 * ids asked for (vLLM), so the reply holds the asked ids and nothing else.
 */
export type ProbeRead = (tokens: Token[], candidates: Token[], temperature: number, force?: Token) => Promise<Map<Token, number>>;

/** Plain text whose tokens make a candidate set of ordinary, distinct ids on any tokenizer. */
const CANDIDATE_TEXT = "A B C D E F G H I J K L M N 0 1 2 3 4 5 6 7 8 9 Yes No yes no";
const CANDIDATES = 16;

/**
 * How far two reads of the same raw value may differ: GPU servers are not bit-reproducible
 * across batch shapes (FP32/BF16 rounding, ~1e-3), while the distortions this catches move
 * values by whole nats (see `probeRawLogprobs`).
 */
export const PROBE_TOLERANCE = 0.1;

export async function probeCandidates(tokenizer: RemoteTokenizer): Promise<Token[]> {
  const distinct = [...new Set(await tokenizer.tokenize(CANDIDATE_TEXT, false))].slice(0, CANDIDATES);
  if (distinct.length < 4) throw new Error(`the server tokenised ${JSON.stringify(CANDIDATE_TEXT)} into only ${distinct.length} distinct tokens`);
  return distinct;
}

/**
 * Refuses a server whose numbers are not the raw log-softmax the engine needs. Raw values are a
 * property of (prompt, token) alone, so they cannot change with what else is asked or with the
 * sampling temperature:
 * - asking for the two least likely of the candidates (one of them forced as the generated
 *   token, so nothing else is in the reply) must give the same two values; a server that
 *   renormalises over the ids in its reply (a "processed" mode, or a logits filter) moves them
 *   by at least log 8 nats;
 * - temperature 1 must give the values temperature 0 gave: at 1 every server's processing is
 *   the identity, so a difference means temperature-0 requests are scaled by some default
 *   (SGLang divides by the temperature, a server may substitute the model's generation config).
 * Missing or extra ids, values above 0 and sums above 1 are refused by the read itself.
 */
export async function probeRawLogprobs(read: ProbeRead, tokens: Token[], candidates: Token[], field: string): Promise<void> {
  const base = await read(tokens, candidates, 0);
  const lowest = [...candidates].sort((a, b) => base.get(a)! - base.get(b)!).slice(0, 2);
  const subset = await read(tokens, lowest, 0, lowest[0]);
  const moved = worstDifference(base, subset, lowest);
  if (moved.by > PROBE_TOLERANCE) {
    throw new Error(
      `asked for 2 of the ${candidates.length} tokens, it answered ${fmt(moved.to)} instead of ${fmt(moved.from)} for token ${moved.token}: ` +
        `it renormalises over the ids in ${field} (processed logprobs, not the raw log-softmax)`,
    );
  }
  const warm = await read(tokens, candidates, 1);
  const changed = worstDifference(base, warm, candidates);
  if (changed.by > PROBE_TOLERANCE) {
    throw new Error(
      `token ${changed.token} read ${fmt(changed.from)} at temperature 0 and ${fmt(changed.to)} at temperature 1: ` +
        "its logprobs are scaled by a temperature (processed logprobs, not the raw log-softmax)",
    );
  }
}

function worstDifference(a: Map<Token, number>, b: Map<Token, number>, tokens: Token[]) {
  let worst = { token: tokens[0], from: a.get(tokens[0])!, to: b.get(tokens[0])!, by: -1 };
  for (const token of tokens) {
    const from = a.get(token)!;
    const to = b.get(token)!;
    const by = from === to ? 0 : Math.abs(from - to);
    if (by > worst.by || Number.isNaN(by)) worst = { token, from, to, by: Number.isNaN(by) ? Infinity : by };
  }
  return worst;
}

const fmt = (value: number) => (Number.isFinite(value) ? value.toFixed(4) : String(value));
