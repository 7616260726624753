import type { Token } from "../label-trie.js";
import { describe, quote } from "../remote/http.js";
import { EngineFailedError, throwIfAborted } from "../types.js";
import { FORCE_BIAS, parseCompletion } from "./completion.js";
import { call, MIN_LISTED, plan, WHOLE_POST_SAMPLING, type BatchSession, type NodeToRead } from "./read-steps.js";

/**
 * Reads a trie of several nodes (labels of two tokens: choices beyond 26 options) on one slot in
 * a fixed, small number of `/completion` calls, each carrying a list of prompts (see
 * batch-read.ts). A lifted read (batch-read.ts) of a node with 26 candidates, whose depths
 * spread over ~10 nats on random weights, would miss some and let others dominate, and each node
 * would then need a call of its own; these reads do not depend on a node's level:
 *
 * B. raw: the raw top list (`n_probs` ≥ 64, `post_sampling_probs` false) with a spare token
 *    forced by `logit_bias`, whose own raw value comes back whatever its rank. Candidates in the
 *    list are done: with real models that is usually all of them, one call per question.
 * A. relative, only for nodes with candidates outside their list (random weights, rare labels):
 *    a grammar allowing only U (those nodes' candidates and their anchors, as token ids
 *    `<[id]>`) and `post_sampling_probs` with temperature 1 and no truncating sampler report
 *    exp(lᵢ − l_max) / Σ_U: the exact ratios of raw probabilities within U. A +100 bias on a
 *    token outside U makes the first (unconstrained) draw always invalid, so the server always
 *    redraws with the grammar applied first: the reported list is over U.
 * log p(t) = log p(anchor) + log rel(t) − log rel(anchor), the anchor being the largest raw
 * value B returned for that node; exact to float32 rounding (~1e-7 relative). A candidate the
 * grammar cannot emit (a byte-fallback piece) or whose ratio underflows is read by forcing it
 * with `logit_bias` (one more call per such token, all its nodes together).
 *
 * Batch shapes: see read-steps.ts. Both calls see the same shapes, so A's and B's values come
 * from the same logits.
 */

/** Raw log-probabilities of every node's candidates, in the order of `nodes`, by the raw call (B) and, where candidates are missing from it, the relative one (A). */
export async function readRelative(session: BatchSession, nodes: NodeToRead[], signal?: AbortSignal): Promise<Map<Token, number>[]> {
  const out = nodes.map(() => new Map<Token, number>());
  if (nodes.length === 0) return out;
  const where = `${describe(session.server)}/completion`;
  const union = [...new Set(nodes.flatMap((node) => node.candidates))];
  const spare = session.spareTokens[0];

  // B. Raw: the top list, and the forced spare token's own raw value, for every node.
  const rawSteps = plan(session, nodes, true);
  // What the slot holds after each call: the next call keeps its stem (strict) instead of evaluating it again.
  let held = rawSteps[rawSteps.length - 1].tokens;
  const raw = await call(
    session,
    rawSteps,
    {
      n_predict: 1,
      n_probs: Math.max(MIN_LISTED, 2 * union.length),
      post_sampling_probs: false,
      temperature: 0,
      logit_bias: [[spare, FORCE_BIAS]],
    },
    signal,
  );
  const anchors: Array<{ id: Token; logProb: number }> = [];
  const pending: number[] = [];
  nodes.forEach((node, i) => {
    const read = parseCompletion(raw[i], spare, where);
    // The largest raw value known anchors the ratios: its ratio is the last to underflow.
    let anchor = { id: spare, logProb: read.logProb };
    for (const token of node.candidates) {
      const value = token === spare ? read.logProb : read.top.get(token);
      if (value === undefined) continue;
      out[i].set(token, value);
      if (value > anchor.logProb) anchor = { id: token, logProb: value };
    }
    anchors[i] = anchor;
    if (out[i].size < node.candidates.length) pending.push(i);
  });
  if (pending.length === 0) return out;

  // A. Relative, for the nodes with candidates outside their top list.
  const pendingNodes = pending.map((i) => nodes[i]);
  const allowed = new Set([...pendingNodes.flatMap((node) => node.candidates), ...pending.map((i) => anchors[i].id)]);
  const grammar = `root ::= ${[...allowed].map((id) => `<[${id}]>`).join(" | ")}`;
  const outside = session.spareTokens.find((id) => !allowed.has(id)) ?? firstOutside(allowed);
  const relativeSteps = plan(session, pendingNodes, false, held);
  held = relativeSteps[relativeSteps.length - 1].tokens;
  const relative = await call(
    session,
    relativeSteps,
    {
      n_predict: 1,
      n_probs: allowed.size,
      ...WHOLE_POST_SAMPLING,
      seed: 0,
      grammar,
      logit_bias: [[outside, FORCE_BIAS]],
    },
    signal,
  );
  const missing = new Map<Token, number[]>();
  pending.forEach((i, k) => {
    const ratios = relativeList(relative[k], allowed, session);
    const anchor = anchors[i];
    const anchorRatio = ratios.get(anchor.id);
    for (const token of nodes[i].candidates) {
      if (out[i].has(token)) continue;
      const ratio = ratios.get(token);
      if (ratio !== undefined && ratio > 0 && anchorRatio !== undefined && anchorRatio > 0) {
        out[i].set(token, anchor.logProb + Math.log(ratio) - Math.log(anchorRatio));
      } else missing.set(token, [...(missing.get(token) ?? []), i]);
    }
  });
  // Pieces the grammar cannot emit (byte-fallback tokens) or ratios that underflowed: forced.
  for (const [token, indexes] of missing) {
    throwIfAborted(signal);
    const forcedSteps = plan(
      session,
      indexes.map((i) => nodes[i]),
      false,
      held,
    );
    held = forcedSteps[forcedSteps.length - 1].tokens;
    const forced = await call(
      session,
      forcedSteps,
      {
        n_predict: 1,
        n_probs: 1,
        post_sampling_probs: false,
        temperature: 0,
        logit_bias: [[token, FORCE_BIAS]],
      },
      signal,
    );
    indexes.forEach((nodeIndex, k) => out[nodeIndex].set(token, parseCompletion(forced[k], token, where).logProb));
  }
  return out;
}

function entryOf(result: unknown, session: BatchSession): Record<string, unknown> {
  const probs = (result as { completion_probabilities?: unknown } | undefined)?.completion_probabilities;
  const first = Array.isArray(probs) ? probs[0] : undefined;
  if (typeof first !== "object" || first === null) {
    throw new EngineFailedError(`${describe(session.server)}/completion returned no completion_probabilities: ${quote(result)}`);
  }
  return first as Record<string, unknown>;
}

/** Post-sampling probabilities over U, by id; anything outside U means the grammar was ignored. */
function relativeList(result: unknown, allowed: Set<Token>, session: BatchSession): Map<Token, number> {
  const entry = entryOf(result, session);
  const fail = (why: string): never => {
    throw new EngineFailedError(`${describe(session.server)}/completion ${why}: ${quote(result)}`);
  };
  if (!Array.isArray(entry.top_probs)) return fail("returned no top_probs (it ignores post_sampling_probs: true)");
  if (!allowed.has(entry.id as Token)) return fail(`generated token ${String(entry.id)} outside the grammar (it ignores token-id grammars)`);
  const ratios = new Map<Token, number>();
  for (const item of entry.top_probs as Array<Record<string, unknown>>) {
    if (!item || typeof item.id !== "number" || typeof item.prob !== "number") return fail("returned a top_probs entry without an id or a prob");
    if (!allowed.has(item.id as Token)) return fail(`listed token ${item.id} outside the grammar after sampling`);
    ratios.set(item.id as Token, item.prob);
  }
  return ratios;
}

function firstOutside(allowed: Set<Token>): Token {
  let id = 0;
  while (allowed.has(id as Token)) id++;
  return id as Token;
}
