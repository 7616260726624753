import type { Token } from "../label-trie.js";
import { describe, quote } from "../remote/http.js";
import { EngineFailedError } from "../types.js";
import { liftFor, raiseLift, solveLifted, type ListedProb } from "./lifted-read.js";
import { call, MIN_LISTED, plan, WHOLE_POST_SAMPLING, type BatchSession, type NodeToRead } from "./read-steps.js";
import { readRelative } from "./relative-read.js";

export { STRICT_CHUNK, type BatchSession, type Exactness, type NodeToRead } from "./read-steps.js";

/**
 * Reads a question's trie nodes (a context and the candidate next tokens) on one slot. A call
 * carries a list of prompts, which llama-server runs pinned to one slot one after the other,
 * in order, each continuing the slot's cache. A question whose labels are one token each (one
 * node: up to 26 options, every noul and score) costs two calls:
 *
 * 1. the fills (`n_predict` 0): the prompts that only put tokens in the cache, the state
 *    prefix's chunks, the question's stem and the rollback before the read. With `n_predict` 0
 *    the server evaluates them and stops; in a reading call each would also compute the
 *    vocabulary's logits and sample (~27 ms each on two CPU cores with a 152k vocabulary). The
 *    walk may ask for them to open the reading call instead, to stay within its call budget;
 * 2. the read: the node's post-sampling list with its candidates lifted into it by
 *    `logit_bias`, from which every candidate's raw value follows exactly (lifted-read.ts),
 *    whatever its rank, on random weights as on real models. The lift is the engine's, learnt
 *    at start-up (calibrate.ts); a read whose list misses a candidate, or whose lifted tokens
 *    dominate it, is made again with lifts from what it showed (one more call).
 *
 * Batch shapes: see read-steps.ts.
 */

/** Entries listed beyond the candidates: the best others fix where the candidates rank. */
const EXTRA_LISTED = 32;
/** Reads of a node before giving up: the learnt lift, then raised or lowered ones, or another seed. */
const MAX_ATTEMPTS = 6;

/**
 * Raw log-probabilities of every node's candidates, in the order of `nodes`: a question's
 * single node (labels of one token each: up to 26 options, every noul and score) by a lifted
 * read; a trie of several nodes (two-token labels) by the raw and relative calls of
 * relative-read.ts, whose values do not depend on the node's level C.
 */
export async function readNodes(session: BatchSession, nodes: NodeToRead[], signal?: AbortSignal): Promise<Map<Token, number>[]> {
  return nodes.length > 1 ? readRelative(session, nodes, signal) : readLifted(session, nodes, signal);
}

/** Reading calls `readNodes` makes for these nodes when every read lists its candidates the first time (fills aside). */
export function readingCalls(nodes: readonly NodeToRead[]): number {
  return nodes.length > 1 ? 2 : 1;
}

async function readLifted(session: BatchSession, [node]: NodeToRead[], signal?: AbortSignal): Promise<Map<Token, number>[]> {
  const start = session.lifts?.lift() ?? 0;
  const lifts = new Map(node.candidates.map((token) => [token, start]));
  let held: readonly Token[] | undefined;
  let seed = 0;
  const tried: string[] = [];
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    let steps = plan(session, [node], attempt === 0, held);
    // The fills before the read go in a call of their own, where they cost no logits.
    const firstRead = steps.findIndex((step) => step.node !== undefined);
    if (attempt === 0 && firstRead > 0 && session.separateFills !== false) {
      await call(session, steps.slice(0, firstRead), { n_predict: 0 }, signal);
      steps = steps.slice(firstRead);
    }
    held = steps[steps.length - 1].tokens;
    const lifted = new Map([...lifts].filter(([, lift]) => lift > 0));
    const [result] = await call(
      session,
      steps,
      {
        n_predict: 1,
        n_probs: Math.max(MIN_LISTED, node.candidates.length + EXTRA_LISTED),
        ...WHOLE_POST_SAMPLING,
        seed,
        logit_bias: [...lifted],
      },
      signal,
    );
    const list = postList(result, session);
    if (list === undefined) {
      // The token the server drew ended in an incomplete UTF-8 sequence, and then it lists
      // nothing: the same read with another seed draws another token and lists the same values.
      tried.push(`seed ${seed}: nothing listed`);
      seed++;
      continue;
    }
    const solved = solveLifted(list, node.candidates, lifted);
    if (solved.ok) {
      session.onDepths?.(solved.depths);
      return [solved.logProbs];
    }
    // Read again, each candidate lifted by what this read showed of it.
    if (solved.why === "missing") {
      tried.push(`lifts ${JSON.stringify([...lifted])}: ${solved.missing.map((m) => m.id).join(",")} not listed`);
      for (const { id, depthAbove } of solved.missing) lifts.set(id, raiseLift(lifts.get(id) ?? 0, depthAbove));
    } else {
      tried.push(`lifts ${JSON.stringify([...lifted])}: C = ${solved.c.toExponential(2)}`);
      for (const [token, depth] of solved.depths) lifts.set(token, liftFor(depth));
    }
  }
  throw new EngineFailedError(
    `${describe(session.server)}/completion did not list every candidate with its raw value after ${MAX_ATTEMPTS} reads (${tried.slice(-3).join("; ")}): does it ignore logit_bias, n_probs or post_sampling_probs?`,
  );
}

/** The reply's post-sampling list; undefined when the server listed nothing (see the resample above). */
function postList(result: unknown, session: BatchSession): ListedProb[] | undefined {
  const probs = (result as { completion_probabilities?: unknown } | undefined)?.completion_probabilities;
  const fail = (why: string): never => {
    throw new EngineFailedError(`${describe(session.server)}/completion ${why}: ${quote(result)}`);
  };
  // Absent or empty when the drawn token was dropped (see the resample in readNodes).
  if (probs === undefined || (Array.isArray(probs) && probs.length === 0)) return undefined;
  if (!Array.isArray(probs)) return fail("returned a completion_probabilities that is not a list");
  const entry = probs[0] as Record<string, unknown> | undefined;
  if (typeof entry !== "object" || entry === null) return fail("returned a malformed completion_probabilities entry");
  if (!Array.isArray(entry.top_probs)) {
    return fail(Array.isArray(entry.top_logprobs) ? "returned raw probabilities (it ignores post_sampling_probs: true)" : "returned no top_probs");
  }
  return (entry.top_probs as Array<Record<string, unknown>>).map((item) => {
    if (!item || typeof item.id !== "number" || !Number.isInteger(item.id) || typeof item.prob !== "number")
      return fail("returned a top_probs entry without an id or a prob");
    return { id: item.id as Token, prob: item.prob };
  });
}
