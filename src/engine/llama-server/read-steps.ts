import type { Token } from "../label-trie.js";
import { callJson, describe, quote, type RemoteServer } from "../remote/http.js";
import { EngineFailedError, throwIfAborted } from "../types.js";
import { checkStatus } from "./completion.js";
import { commonPrefix } from "../slot-router.js";
import { STRICT_CHUNK } from "../strict-shapes.js";
import type { LiftMemory } from "./lifted-read.js";

/**
 * The prompts a slot's reads are made of, and the `/completion` call that carries them
 * (batch-read.ts, relative-read.ts). Batch shapes (see walk.ts): a read must evaluate at least
 * its last two tokens together (tolerant) or, in strict mode, the question's stem after the state
 * prefix as one batch and the node's last tokens as another, with the prefix evaluated in fixed
 * chunks from position 0. Rollback prompts (the prompt cut short plus a spare token, a sequence
 * the cache never holds whole) placed before a read make the server drop the tokens the read
 * must evaluate.
 */

export type Exactness = "strict" | "tolerant";

/**
 * `/completion` fields for a post-sampling list over the whole vocabulary: temperature 1 (a
 * division by 1 is exact) and no truncating sampler, so the list is the softmax of the logits
 * as `logit_bias` (and a grammar) left them.
 */
export const WHOLE_POST_SAMPLING = { post_sampling_probs: true, temperature: 1, samplers: ["temperature"], top_k: 0, top_p: 1, min_p: 0 } as const;

/** A list's least size: labels a model means are near the top (real models: usually all of them in 64). */
export const MIN_LISTED = 64;

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
  /** Two different ordinary token ids: rollbacks use them. */
  spareTokens: [Token, Token];
  exactness: Exactness;
  /** Strict: length of the state prefix (the chunked part of every context). */
  prefixLength: number;
  /** Strict: prefix tokens the slot holds evaluated in this prefix's own chunks (0 = evaluate all afresh). */
  prefixReused: number;
  /** Counts HTTP calls and reply bytes (tests, bench). */
  onCall?: (bytes: number) => void;
  /** Where the model's label tokens rank (the engine's, learnt at start-up; none: every lift starts at 0). */
  lifts?: LiftMemory;
  /** Whether the fills before the first read go in a call of their own (faster; one call more). Default true. */
  separateFills?: boolean;
  /** Receives each node's candidate depths (start-up learning). */
  onDepths?: (depths: ReadonlyMap<Token, number>) => void;
}

export interface Step {
  tokens: Token[];
  /** Index of the node this prompt reads; rollbacks and chunk fills read nothing. */
  node?: number;
  /** Tokens the server must evaluate for this read (checked against its `timings.prompt_n`). */
  evaluates?: number;
}

/**
 * The prompts for one call: rollbacks and (strict, first call) the prefix's chunks, then each read.
 * `held`: what the slot holds after this session's previous call. In strict mode a later call
 * whose nodes share the stem it holds keeps that stem (evaluated there in its own batch after the
 * prefix, the shape a fresh read gives it) and only rolls back to the stem's end: a question's
 * second and third calls then cost one spare token and the node's last tokens, not the whole stem.
 */
export function plan(session: BatchSession, nodes: NodeToRead[], first: boolean, held?: readonly Token[]): Step[] {
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
export async function call(session: BatchSession, steps: Step[], fields: Record<string, unknown>, signal?: AbortSignal): Promise<unknown[]> {
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
  if (results.length !== steps.length)
    throw new EngineFailedError(`${where} answered ${results.length} results for ${steps.length} prompts: ${quote(reply.body)}`);
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
