import type { Token } from "../label-trie.js";
import { callJson, describe, quote, type RemoteServer } from "../remote/http.js";
import { EngineFailedError, throwIfAborted } from "../types.js";
import { checkStatus, FORCE_BIAS } from "./completion.js";
import { commonPrefix } from "../slot-router.js";

/**
 * Reads many trie nodes (a context and the candidate next tokens) on one slot in a fixed, small
 * number of `/completion` calls, each carrying a list of prompts (llama-server runs the prompts
 * of one call pinned to one slot one after the other, in order, each continuing the slot's cache):
 *
 * A. relative: a grammar allowing only U (every candidate of every node, as token ids `<[id]>`)
 *    and `post_sampling_probs` with temperature 1 and no truncating sampler report, for each
 *    prompt, exp(lᵢ − l_max) / Σ_U over U: the exact ratios of the raw probabilities within U.
 *    A +100 bias on a token outside U makes the first (unconstrained) draw always invalid, so
 *    the server always redraws with the grammar applied first: the reported list is over U.
 * B. anchor: the same prompts, same grammar, temperature 0, raw values (`post_sampling_probs`
 *    false): the generated token is U's argmax and its reported logprob is its raw
 *    full-vocabulary log-softmax value, whatever its rank.
 * log p(t) = anchor + log rel(t) − log rel(anchor), exact to float32 rounding (~1e-7 relative).
 * A candidate the grammar cannot emit (a byte-fallback piece) or whose ratio underflows is read
 * by forcing it with `logit_bias` (one more call per such token, all its nodes together).
 *
 * Batch shapes (see walk.ts): a read must evaluate at least its last two tokens together
 * (tolerant) or, in strict mode, the whole question suffix after the state prefix as one batch,
 * with the prefix evaluated in fixed chunks from position 0. Rollback prompts (the prompt cut
 * short plus a spare token, a sequence the cache never holds whole) placed before a read make
 * the server drop the tokens the read must evaluate. Both calls see the same shapes, so A's and
 * B's values come from the same logits.
 */

export type Exactness = "strict" | "tolerant";

/** Strict mode evaluates the state prefix in chunks of this many tokens from position 0 (≤ the server's 512-token ubatch). */
export const STRICT_CHUNK = 256;

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
}

interface Step {
  tokens: Token[];
  /** Index of the node this prompt reads; rollbacks and chunk fills read nothing. */
  node?: number;
  /** Tokens the server must evaluate for this read (checked against its `timings.prompt_n`). */
  evaluates?: number;
}

/** Raw log-probabilities of every node's candidates, in the order of `nodes`. */
export async function readNodes(session: BatchSession, nodes: NodeToRead[], signal?: AbortSignal): Promise<Map<Token, number>[]> {
  const out = nodes.map(() => new Map<Token, number>());
  if (nodes.length === 0) return out;
  const union = [...new Set(nodes.flatMap((node) => node.candidates))];
  const allowed = new Set(union);
  const grammar = `root ::= ${union.map((id) => `<[${id}]>`).join(" | ")}`;
  const outside = session.spareTokens.find((id) => !allowed.has(id)) ?? firstOutside(allowed);

  const relative = await call(session, plan(session, nodes, true), {
    n_predict: 1,
    n_probs: union.length,
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
  const anchors = await call(session, plan(session, nodes, false), { n_predict: 1, n_probs: 1, post_sampling_probs: false, temperature: 0, grammar }, signal);

  const missing = new Map<Token, number[]>();
  nodes.forEach((node, i) => {
    const ratios = relativeList(relative[i], allowed, session);
    const anchor = rawGenerated(anchors[i], allowed, session);
    const anchorRatio = ratios.get(anchor.id);
    for (const token of node.candidates) {
      const ratio = ratios.get(token);
      if (token === anchor.id) out[i].set(token, anchor.logProb);
      else if (ratio !== undefined && ratio > 0 && anchorRatio !== undefined && anchorRatio > 0) {
        out[i].set(token, anchor.logProb + Math.log(ratio) - Math.log(anchorRatio));
      } else missing.set(token, [...(missing.get(token) ?? []), i]);
    }
  });
  for (const [token, indexes] of missing) {
    throwIfAborted(signal);
    const forced = await call(session, plan(session, indexes.map((i) => nodes[i]), false), {
      n_predict: 1,
      n_probs: 1,
      post_sampling_probs: false,
      temperature: 0,
      logit_bias: [[token, FORCE_BIAS]],
    }, signal);
    indexes.forEach((nodeIndex, k) => {
      const read = rawGenerated(forced[k], new Set([token]), session);
      out[nodeIndex].set(token, read.logProb);
    });
  }
  return out;
}

/** The prompts for one call: rollbacks and (strict, first call) the prefix's chunks, then each read. */
function plan(session: BatchSession, nodes: NodeToRead[], first: boolean): Step[] {
  const steps: Step[] = [];
  const spareFor = (next: Token | undefined) => session.spareTokens[next === session.spareTokens[0] ? 1 : 0];
  if (session.exactness === "strict") {
    const prefix = nodes[0].context.slice(0, session.prefixLength);
    // Each chunk ends in a spare token that the next step drops: a kept token is never the one
    // token a step evaluates (the server's RAM prompt cache may restore all but one of a prompt).
    if (first && session.prefixReused < prefix.length) {
      const from = Math.floor(session.prefixReused / STRICT_CHUNK) * STRICT_CHUNK;
      for (let end = from; end < prefix.length; end += STRICT_CHUNK) steps.push({ tokens: [...prefix.slice(0, end), spareFor(prefix[end])] });
    }
    // The question's stem as one batch after the prefix, then each node's last tokens (the
    // question's last two and the node's path) as one batch after the stem.
    let stem: Token[] | undefined;
    nodes.forEach((node, i) => {
      const nodeStem = node.context.slice(0, node.stem);
      if (!stem || stem.length !== nodeStem.length || commonPrefix(stem, nodeStem) < nodeStem.length) {
        steps.push({ tokens: [...prefix, spareFor(node.context[prefix.length])] });
        stem = nodeStem;
      }
      steps.push({ tokens: [...stem, spareFor(node.context[node.stem])] });
      steps.push({ tokens: node.context, node: i, evaluates: node.context.length - node.stem });
    });
    return steps;
  }
  // Tolerant: a rollback before every read, even where the previous prompt diverges early
  // enough: a read that keeps little of the slot's content makes the server consult its RAM
  // prompt cache, which may restore all of the read's prompt but its last token.
  nodes.forEach((node, i) => {
    const tokens = node.context;
    const keep = Math.max(0, tokens.length - 2);
    steps.push({ tokens: [...tokens.slice(0, keep), spareFor(tokens[keep])] });
    // Not checked: beside other slots' traffic the server may split or merge these (tolerant's bound covers it).
    steps.push({ tokens, node: i });
  });
  return steps;
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
    if (step.node === undefined) return;
    // A read in another shape than planned would answer (slightly) differently: refuse it.
    const evaluated = (results[i] as Record<string, unknown> | undefined)?.["timings/prompt_n"];
    if (typeof evaluated === "number" && step.evaluates !== undefined && evaluated !== step.evaluates) {
      throw new EngineFailedError(
        `${where} evaluated ${evaluated} tokens of a read, not the ${step.evaluates} planned: the server restored the prompt from elsewhere (start llama-server with --cache-ram 0)`,
      );
    }
    byNode.push(results[i]);
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

/** The generated token and its raw log-probability (which must be one of `allowed`). */
function rawGenerated(result: unknown, allowed: Set<Token>, session: BatchSession): { id: Token; logProb: number } {
  const entry = entryOf(result, session);
  const fail = (why: string): never => {
    throw new EngineFailedError(`${describe(session.server)}/completion ${why}: ${quote(result)}`);
  };
  if (!("top_logprobs" in entry)) return fail("returned post-sampling probabilities (it ignores post_sampling_probs: false)");
  if (typeof entry.id !== "number" || !allowed.has(entry.id as Token)) return fail(`generated token ${String(entry.id)}, not one it was constrained to (it ignores the grammar or logit_bias)`);
  if (typeof entry.logprob !== "number") return fail("returned an entry without a logprob");
  const top = entry.top_logprobs;
  if (!Array.isArray(top) || top.some((item) => typeof item?.id !== "number" || typeof item?.logprob !== "number")) {
    return fail("returned a top_logprobs entry without an id or a logprob");
  }
  return { id: entry.id as Token, logProb: entry.logprob };
}

function firstOutside(allowed: Set<Token>): Token {
  let id = 0;
  while (allowed.has(id as Token)) id++;
  return id as Token;
}
