import type { LlamaModel } from "node-llama-cpp";
import type { JudgmentPrompt } from "../judgment/prompt.js";
import { BudgetError } from "./types.js";

/**
 * A request certainly over the per-request token limit is refused before anything is tokenised:
 * no token of a vocabulary covers more than its longest token's bytes, so a request's text of B
 * bytes needs at least ⌈B / longest⌉ tokens, whatever the tokenizer does with it (the template
 * only adds tokens). Refusals then cost a byte count, not a tokenisation (~110 ms of CPU for a
 * 225 KB body of 64 questions × 255 options before this).
 */

/** Bytes the longest token of the model's vocabulary stands for, at most; undefined when the file does not list them. */
export function longestTokenBytes(model: LlamaModel): number | undefined {
  const tokenizer = (model.fileInfo.metadata as { tokenizer?: { ggml?: { model?: string; tokens?: unknown } } }).tokenizer?.ggml;
  const tokens = tokenizer?.tokens;
  if (!Array.isArray(tokens) || tokens.length === 0) return undefined;
  // Byte-level BPE (GPT-2's) writes each byte as one character; elsewhere (SentencePiece's "▁",
  // its "<0x0A>" byte tokens) the UTF-8 length of the piece is at least the bytes it stands for.
  const byteLevel = tokenizer?.model === "gpt2";
  let longest = 1;
  for (const token of tokens) {
    if (typeof token !== "string") continue;
    const bytes = byteLevel ? codePoints(token) : Buffer.byteLength(token);
    if (bytes > longest) longest = bytes;
  }
  return longest;
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Throws the 400's BudgetError when the prompt's text alone needs more tokens than `maxRequestTokens`. */
export function refuseCertainlyOverBudget(prompt: JudgmentPrompt, longest: number | undefined, maxRequestTokens: number): void {
  if (longest === undefined) return;
  const tokensAtLeast = (text: string) => Math.ceil(Buffer.byteLength(text) / longest);
  // System text and state are tokenised together (one prefix), each question's text on its own.
  let atLeast = tokensAtLeast(prompt.system + prompt.state);
  for (const question of prompt.questions) atLeast += tokensAtLeast(question.text);
  if (atLeast > maxRequestTokens) {
    throw new BudgetError(
      `the request needs at least ${atLeast} input tokens (no token of this model covers more than ${longest} bytes of its text), over the limit of ${maxRequestTokens} per request`,
    );
  }
}
