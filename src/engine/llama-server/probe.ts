import type { Token } from "../label-trie.js";
import { describe, type RemoteServer } from "../remote/http.js";
import { readDifference } from "../remote/read-difference.js";
import type { BuiltinToken, RemoteTokenizer } from "../remote/prepare.js";
import { readNodes, type BatchSession, type Exactness, type NodeToRead } from "./batch-read.js";
import { fillCache, readCompletion } from "./completion.js";
import type { ServerFacts } from "./server-facts.js";

/** The server is reachable but would answer inexactly: the engine refuses to serve. */
export class IncompatibleServerError extends Error {
  override name = "IncompatibleServerError";
}

/**
 * The largest |Δp| each mode accepts at start-up. Strict promises identical answers whatever
 * the cache and the traffic: on CPU llama-server (flash attention off) the probe measures 0,
 * so anything above rounding noise means a batch-dependent kernel (flash attention, a GPU).
 * Tolerant's default is an operator's choice written down (docs/concepts/exactness.md): a GPU that
 * moves answers by more than 0.1 percentage point is refused unless JUDGE_EXACTNESS_BOUND says
 * otherwise.
 */
export const STRICT_BOUND = 1e-9;
export const TOLERANT_BOUND = 1e-3;
/** Strict's one-batch check (max |Δp| over a top list): measured 0 on the tiny fixture without flash attention, ~1e-3 with it. */
const ONE_BATCH_TOLERANCE = 1e-5;
/** A lifted read's log-ratio of two tokens against the raw list's: float32 rounding of a lifted logit is ~1e-6. */
const RATIO_TOLERANCE = 1e-5;
/** Its level against the raw list's, which llama-server normalises with a float32 sum (~3e-4 measured on a flat distribution). */
const LEVEL_TOLERANCE = 2e-3;
/** Kept for callers of the old name: strict's bound. */
export const BATCHING_TOLERANCE = STRICT_BOUND;

const PROBE_TEXT = "The probe reads the same tokens twice, once fresh and once continuing a cached prefix. ";
/**
 * The probe's state prefix is short and its "question" long, as in a choice with many options:
 * then llama-server swaps the slot's content with its RAM prompt cache between reads (it does
 * so when a prompt keeps under half of a slot's tokens), restores a whole earlier prompt and
 * evaluates its last token alone, which strict mode must detect (`--cache-ram 0` prevents it).
 */
const PREFIX = 8;

export interface ProbeResult {
  /** max |Δp| (per node, renormalised over its candidates) between cached and fresh reads, and alone against beside others. */
  measured: number;
}

/**
 * Start-up check on the server's actual answers, with the engine's own reads (batch-read.ts):
 * 1. the same nodes read with the slot holding nothing useful (fresh) and holding the state
 *    prefix and another question (cached), and, in tolerant mode with two slots or more, while
 *    another slot evaluates a long prompt (beside others): the largest difference is the
 *    figure reported, refused above `bound`;
 * 2. raw values: the lifted read (lifted-read.ts) agrees with llama-server's raw list, so no
 *    sampler, temperature or ignored field leaked into them.
 */
export async function probeRawReadout(
  server: RemoteServer,
  facts: ServerFacts,
  tokenizer: RemoteTokenizer,
  builtins: Partial<Record<BuiltinToken, Token>>,
  spare: [Token, Token],
  mode: Exactness,
  bound: number,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const where = describe(server);
  const text = await tokenizer.tokenize(PROBE_TEXT, false, signal);
  const length = Math.min(160, facts.slotContext - 8);
  const tokens: Token[] = builtins.BOS === undefined ? [] : [builtins.BOS];
  while (tokens.length < length) tokens.push(...text.slice(0, length - tokens.length));
  const candidates = [...new Set(text)].filter((id) => !spare.includes(id)).slice(0, 6);
  const prefixLength = Math.min(PREFIX, tokens.length - 2);
  const stem = tokens.length - 2;
  const nodes: NodeToRead[] = [
    { context: tokens, candidates, stem },
    { context: [...tokens, candidates[0]], candidates, stem },
  ];
  const session = (slot: number, prefixReused: number): BatchSession => ({ server, slot, spareTokens: spare, exactness: mode, prefixLength, prefixReused });
  const forget = (slot: number) => fillCache(server, [spare[0]], slot, signal);

  await forget(0);
  const fresh = await readNodes(session(0, 0), nodes, signal);
  // Another question on the same prefix, then the probe's again: the prefix now comes from the cache.
  const other = [...tokens.slice(0, prefixLength), ...tokens.slice(prefixLength).reverse()];
  await readNodes(session(0, prefixLength), [{ context: other, candidates, stem }], signal);
  const cached = await readNodes(session(0, prefixLength), nodes, signal);
  let measured = difference(fresh, cached);
  if (mode === "strict") {
    // The whole prompt read as one fresh batch against its last two tokens read after a cached
    // rest (the top lists, in probability): flash attention (llama-server's default on CPU)
    // moves them by ~1e-3 and then answers differ from the in-process engine's; CPU kernels
    // without it agree within ~1e-7 even where large and small batches take other code paths.
    const nProbs = Math.min(16, facts.vocabularySize ?? 16);
    const oneBatch = await readCompletion(server, { tokens, nProbs, force: spare[0], slot: 0, cachePrompt: false }, signal);
    await fillCache(server, [...tokens.slice(0, -2), tokens[tokens.length - 2] === spare[0] ? spare[1] : spare[0]], 0, signal);
    const continued = await readCompletion(server, { tokens, nProbs, force: spare[0], slot: 0 }, signal);
    const shapes = topDifference(oneBatch.top, continued.top);
    if (!(shapes <= Math.max(bound, ONE_BATCH_TOLERANCE))) {
      throw new IncompatibleServerError(
        `${where} answers differently for a prompt read in one batch than for its last tokens read after a cached rest (max |Δp| ${shapes.toExponential(2)}): flash attention is on (start llama-server with -fa off) or its backend's results depend on batch shapes (a GPU): serve with JUDGE_EXACTNESS=tolerant and a bound you accept`,
      );
    }
  }
  if (mode === "tolerant" && facts.slots >= 2) {
    const long = Array.from({ length: Math.min(1024, facts.slotContext - 8) }, (_, i) => text[i % text.length]);
    await forget(0);
    const [beside] = await Promise.all([readNodes(session(0, 0), nodes, signal), fillCache(server, long, 1, signal)]);
    measured = Math.max(measured, difference(fresh, beside));
  }
  if (!(measured <= bound)) {
    throw new IncompatibleServerError(
      `${where} answers differently for a cached prefix, a fresh prompt or beside other traffic (max |Δp| ${measured.toExponential(2)} > ${bound.toExponential(0)} allowed in ${mode} mode): ` +
        (mode === "strict"
          ? "start llama-server with -fa off (flash attention) and --cache-ram 0 (its RAM prompt cache restores prompts evaluated in other shapes); on a GPU its kernels depend on batch shapes: serve with JUDGE_EXACTNESS=tolerant and a bound you accept"
          : "raise JUDGE_EXACTNESS_BOUND only if answers this far apart are acceptable"),
    );
  }

  // The engine's lifted read against llama-server's raw list (post_sampling_probs false) at the
  // first node, in the mode's shapes: a candidate's ratio to the raw list's best token, and that
  // token's level. A server that ignored the bias, the sampler list or the temperature, or
  // reported processed values as raw, would move the ratio by far more than float32 rounding.
  const keep = tokens.length - 2;
  const rollback = [...tokens.slice(0, keep), tokens[keep] === spare[0] ? spare[1] : spare[0]];
  await fillCache(server, rollback, 0, signal);
  const raw = await readCompletion(server, { tokens, nProbs: 1, force: candidates[0], slot: 0 }, signal);
  const [best] = raw.top;
  await fillCache(server, rollback, 0, signal);
  const [lifted] = await readNodes(session(0, prefixLength), [{ context: tokens, candidates: [...new Set([candidates[0], best[0]])], stem }], signal);
  const ratio = Math.abs(lifted.get(candidates[0])! - lifted.get(best[0])! - (raw.logProb - best[1]));
  const level = Math.abs(lifted.get(best[0])! - best[1]);
  if (!(ratio <= RATIO_TOLERANCE && level <= LEVEL_TOLERANCE)) {
    throw new IncompatibleServerError(
      `${where}/completion reports processed probabilities: token ${candidates[0]} against token ${best[0]} read lifted (post_sampling_probs, logit_bias) ` +
        `differs from its raw list by ${ratio.toExponential(2)} in the log-ratio and ${level.toExponential(2)} in the level; it must honour logit_bias, samplers and temperature and report the raw distribution when post_sampling_probs is false`,
    );
  }
  return { measured };
}

/** Max |Δp| over two reads of the same nodes, each node's candidates renormalised as labels are. */
function difference(x: Map<Token, number>[], y: Map<Token, number>[]): number {
  return x.reduce((worst, read, i) => Math.max(worst, readDifference(read, y[i])), 0);
}

/** Max |Δp| over two raw top lists; a token in one list but not the other counts in full. */
function topDifference(x: Map<Token, number>, y: Map<Token, number>): number {
  let worst = 0;
  for (const [id, logProb] of x) {
    const other = y.get(id);
    worst = Math.max(worst, other === undefined ? Math.exp(logProb) : Math.abs(Math.exp(logProb) - Math.exp(other)));
  }
  return worst;
}
