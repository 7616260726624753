import type { Token } from "../label-trie.js";
import { callJson, describe, quote, type RemoteServer } from "../remote/http.js";
import { EngineFailedError, throwIfAborted } from "../types.js";
import { checkStatus, FORCE_BIAS, parseCompletion } from "./completion.js";
import { commonPrefix } from "../slot-router.js";
import { STRICT_CHUNK } from "../strict-shapes.js";

/**
 * Reads many trie nodes (a context and the candidate next tokens) on one slot in a fixed, small
 * number of `/completion` calls, each carrying a list of prompts (llama-server runs the prompts
 * of one call pinned to one slot one after the other, in order, each continuing the slot's cache):
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
 * Batch shapes (see walk.ts): a read must evaluate at least its last two tokens together
 * (tolerant) or, in strict mode, the question's stem after the state prefix as one batch and the
 * node's last tokens as another, with the prefix evaluated in fixed chunks from position 0.
 * Rollback prompts (the prompt cut short plus a spare token, a sequence the cache never holds
 * whole) placed before a read make the server drop the tokens the read must evaluate. Both calls
 * see the same shapes, so A's and B's values come from the same logits.
 */

export type Exactness = "strict" | "tolerant";

/** Strict mode evaluates the state prefix in chunks of this many tokens from position 0 (≤ the server's 512-token ubatch). */
export { STRICT_CHUNK };

export interface NodeToRead {
  context: Token[];
  candidates: Token[];
  /** Strict: tokens of the context evaluated once per question (prefix + question minus its last two tokens). */
  stem: number;
}

export interface BatchSession {
  server: RemoteServer;
  slot: number;
  /** Two different ordinary token ids: rollbacks and the redraw bias use them. */
  spareTokens: [Token, Token];
  exactness: Exactness;
  /** Strict: length of the state prefix (the chunked part of every context). */
  prefixLength: number;
  /** Strict: prefix tokens the slot holds evaluated in this prefix's own chunks (0 = evaluate all afresh). */
  prefixReused: number;
  /** Counts HTTP calls and reply bytes (tests, bench). */
  onCall?: (bytes: number) => void;
  /**
   * Whether the last question read needed a relative call (A). When it did, the raw call (B) ends
   * by rolling the slot back for A's first read, where the sampling is cheap: in A every prompt is
   * sampled under the grammar, which costs a full-vocabulary pass (~85 ms on two CPU cores with
   * Qwen2's 152k tokens) even for a rollback that reads nothing. A guess only moves a rollback
   * between calls: the prompts the server evaluates, and so the answers, are the same either way.
   */
  hint?: { relativeExpected: boolean };
}

interface Step {
  tokens: Token[];
  /** Index of the node this prompt reads; rollbacks and chunk fills read nothing. */
  node?: number;
  /** Tokens the server must evaluate for this read (checked against its `timings.prompt_n`). */
  evaluates?: number;
}

/** The raw list's size: labels a model means are near the top (real models: usually all found there). */
export const MIN_TOP = 64;

/** Raw log-probabilities of every node's candidates, in the order of `nodes`. */
export async function readNodes(session: BatchSession, nodes: NodeToRead[], signal?: AbortSignal): Promise<Map<Token, number>[]> {
  const out = nodes.map(() => new Map<Token, number>());
  if (nodes.length === 0) return out;
  const where = `${describe(session.server)}/completion`;
  const union = [...new Set(nodes.flatMap((node) => node.candidates))];
  const spare = session.spareTokens[0];

  // B. Raw: the top list, and the forced spare token's own raw value, for every node.
  const rawSteps = plan(session, nodes, true);
  if (session.hint?.relativeExpected) {
    const tokens = rollbackFor(session, nodes[0]);
    const before = rawSteps[rawSteps.length - 1].tokens;
    rawSteps.push({ tokens, evaluates: session.exactness === "strict" ? tokens.length - commonPrefix(before, tokens) : undefined });
  }
  // What the slot holds after each call: the next call keeps its stem (strict) instead of evaluating it again.
  let held = rawSteps[rawSteps.length - 1].tokens;
  const raw = await call(session, rawSteps, {
    n_predict: 1,
    n_probs: Math.max(MIN_TOP, 2 * union.length),
    post_sampling_probs: false,
    temperature: 0,
    logit_bias: [[spare, FORCE_BIAS]],
  }, signal);
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
  if (session.hint) session.hint.relativeExpected = pending.length > 0;
  if (pending.length === 0) return out;

  // A. Relative, for the nodes with candidates outside their top list.
  const pendingNodes = pending.map((i) => nodes[i]);
  const allowed = new Set([...pendingNodes.flatMap((node) => node.candidates), ...pending.map((i) => anchors[i].id)]);
  const grammar = `root ::= ${[...allowed].map((id) => `<[${id}]>`).join(" | ")}`;
  const outside = session.spareTokens.find((id) => !allowed.has(id)) ?? firstOutside(allowed);
  const relativeSteps = plan(session, pendingNodes, false, held);
  held = relativeSteps[relativeSteps.length - 1].tokens;
  const relative = await call(session, relativeSteps, {
    n_predict: 1,
    n_probs: allowed.size,
    post_sampling_probs: true,
    temperature: 1,
    samplers: ["temperature"],
    top_k: 0,
    top_p: 1,
    min_p: 0,
    seed: 0,
    grammar,
    logit_bias: [[outside, FORCE_BIAS]],
  }, signal);
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
    const forcedSteps = plan(session, indexes.map((i) => nodes[i]), false, held);
    held = forcedSteps[forcedSteps.length - 1].tokens;
    const forced = await call(session, forcedSteps, {
      n_predict: 1,
      n_probs: 1,
      post_sampling_probs: false,
      temperature: 0,
      logit_bias: [[token, FORCE_BIAS]],
    }, signal);
    indexes.forEach((nodeIndex, k) => out[nodeIndex].set(token, parseCompletion(forced[k], token, where).logProb));
  }
  return out;
}

/**
 * The prompts for one call: rollbacks and (strict, first call) the prefix's chunks, then each read.
 * `held`: what the slot holds after this session's previous call. In strict mode a later call
 * whose nodes share the stem it holds keeps that stem (evaluated there in its own batch after the
 * prefix, the shape a fresh read gives it) and only rolls back to the stem's end: a question's
 * second and third calls then cost one spare token and the node's last tokens, not the whole stem.
 */
function plan(session: BatchSession, nodes: NodeToRead[], first: boolean, held?: readonly Token[]): Step[] {
  const steps: Step[] = [];
  if (session.exactness === "strict") {
    const prefix = nodes[0].context.slice(0, session.prefixLength);
    // Each chunk ends in a spare token that the next step drops: a kept token is never the one
    // token a step evaluates (the server's RAM prompt cache may restore all but one of a prompt).
    const chunked = first && session.prefixReused < prefix.length;
    if (chunked) {
      const from = Math.floor(session.prefixReused / STRICT_CHUNK) * STRICT_CHUNK;
      for (let end = from; end < prefix.length; end += STRICT_CHUNK) steps.push({ tokens: [...prefix.slice(0, end), spareFor(session, prefix[end])] });
    }
    // The question's stem as one batch after the prefix, then each node's last tokens (the
    // question's last two and the node's path) as one batch after the stem.
    let stem: Token[] | undefined;
    const firstStem = nodes[0].context.slice(0, nodes[0].stem);
    if (!first && held && nodes[0].stem > prefix.length && commonPrefix(held, firstStem) === firstStem.length) stem = firstStem;
    nodes.forEach((node, i) => {
      const nodeStem = node.context.slice(0, node.stem);
      if (!stem || stem.length !== nodeStem.length || commonPrefix(stem, nodeStem) < nodeStem.length) {
        steps.push({ tokens: [...prefix, spareFor(session, node.context[prefix.length])] });
        stem = nodeStem;
      }
      const rollback = rollbackFor(session, node);
      if (!sameTokens(rollback, steps.length > 0 ? steps[steps.length - 1].tokens : held)) steps.push({ tokens: rollback });
      steps.push({ tokens: node.context, node: i });
    });
    // What each step must evaluate, given what the previous one left in the slot (a prompt the
    // cache holds whole evaluates its last token again). Unchunked, the slot holds the prefix
    // and then some; chunked from an unknown state, the first step is not checked.
    steps.forEach((step, i) => {
      const before = i > 0 ? steps[i - 1].tokens : chunked ? undefined : stem ? held : prefix;
      if (before) step.evaluates = Math.max(1, step.tokens.length - commonPrefix(before, step.tokens));
    });
    return steps;
  }
  // Tolerant: a rollback before every read, even where the previous prompt diverges early
  // enough: a read that keeps little of the slot's content makes the server consult its RAM
  // prompt cache, which may restore all of the read's prompt but its last token.
  nodes.forEach((node, i) => {
    const rollback = rollbackFor(session, node);
    if (i > 0 || !sameTokens(rollback, held)) steps.push({ tokens: rollback });
    // Not checked: beside other slots' traffic the server may split or merge these (tolerant's bound covers it).
    steps.push({ tokens: node.context, node: i });
  });
  return steps;
}

/**
 * The prompt that leaves the slot ready for a read of `node`: strict, the question's stem and a
 * spare token (the read then evaluates the node's last tokens as one batch after the stem);
 * tolerant, all but the context's last two tokens and a spare. A sequence the cache never holds
 * whole, so the read after it evaluates what it must.
 */
function rollbackFor(session: BatchSession, node: NodeToRead): Token[] {
  const keep = session.exactness === "strict" ? node.stem : Math.max(0, node.context.length - 2);
  return [...node.context.slice(0, keep), spareFor(session, node.context[keep])];
}

/** A spare token other than `next`: a prompt ending in it diverges from any context right there. */
function spareFor(session: BatchSession, next: Token | undefined): Token {
  return session.spareTokens[next === session.spareTokens[0] ? 1 : 0];
}

function sameTokens(a: readonly Token[], b: readonly Token[] | undefined): boolean {
  return b !== undefined && a.length === b.length && commonPrefix(a, b) === a.length;
}

/** One `/completion` call with every step's prompt on the session's slot; the replies of the reading steps, by node. */
async function call(session: BatchSession, steps: Step[], fields: Record<string, unknown>, signal?: AbortSignal): Promise<unknown[]> {
  throwIfAborted(signal);
  const body = {
    ...fields,
    prompt: steps.map((step) => step.tokens),
    cache_prompt: true,
    id_slot: session.slot,
    response_fields: ["completion_probabilities", "timings/prompt_n", "timings/cache_n"],
  };
  const reply = await callJson(session.server, "/completion", body, signal);
  const where = `${describe(session.server)}/completion`;
  checkStatus(reply, where);
  session.onCall?.(JSON.stringify(reply.body).length);
  const results = Array.isArray(reply.body) ? reply.body : [reply.body];
  if (results.length !== steps.length) throw new EngineFailedError(`${where} answered ${results.length} results for ${steps.length} prompts: ${quote(reply.body)}`);
  const byNode: unknown[] = [];
  steps.forEach((step, i) => {
    // A step in another shape than planned would make reads answer (slightly) differently: refuse it.
    const evaluated = (results[i] as Record<string, unknown> | undefined)?.["timings/prompt_n"];
    if (typeof evaluated === "number" && step.evaluates !== undefined && evaluated !== step.evaluates) {
      throw new EngineFailedError(
        `${where} evaluated ${evaluated} tokens of a prompt, not the ${step.evaluates} planned: the slot's cache is not what this engine left there ` +
          "(a restarted server, another client on the slot, or its RAM prompt cache: start llama-server with --cache-ram 0)",
      );
    }
    if (step.node !== undefined) byNode.push(results[i]);
  });
  return byNode;
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
