import { resolveChatWrapper, type ControlledEvaluateInputItem, type LlamaContextSequence, type LlamaModel, type Token } from "node-llama-cpp";
import { createChatPromptTemplate } from "../engine/chat-prompt.js";
import { bosTextOf } from "../engine/llama/runtime.js";
import { styledFor, type JudgmentPrompt } from "../judgment/prompt.js";

/**
 * An independent reference for the engine's numbers: for every label token, the whole prompt
 * plus the label's earlier tokens evaluated from an empty sequence (no prefix cached across
 * questions or calls, no branching, no logit filter), full-vocabulary log-softmax in float64,
 * chain rule, then renormalisation over the labels. Slow and simple on purpose.
 *
 * Each evaluation runs the shapes of strict mode (src/engine/strict-shapes.ts, written out
 * again here): llama.cpp's CPU kernels are not batch invariant (Gemma 3 270M moves by up to
 * 0.04 between two splits of the same tokens), so "the same numbers as a fresh evaluation" is
 * only defined for given shapes, and strict's are the engine's contract. Nothing else of the
 * engine is shared, so the two must agree to the rounding of their float64 sums.
 *
 * `fresh: "stem"` (the default) evaluates a question's prefix and stem once and, for each further
 * label prefix, erases only the last batch (the question's last two tokens and the label's
 * earlier ones) and decodes it again: the very decodes of a whole fresh evaluation, since those
 * before it are the same tokens in the same batches. `fresh: "every-read"` starts every label
 * prefix from an empty sequence; reference.test.ts proves the two bit-identical, and the stem
 * mode cuts the suite's longest test (SmolLM2, 255 options: ten whole evaluations of 1,875
 * tokens) from 141 s to 24 s alone.
 */
export async function referenceProbabilities(model: LlamaModel, asked: JudgmentPrompt, options: { fresh?: "stem" | "every-read" } = {}): Promise<number[][]> {
  const template = createChatPromptTemplate(resolveChatWrapper(model), bosTextOf(model));
  // A prompt built with `auto` cues reads as the engine reads it: in the template family's style.
  const prompt = styledFor(asked, template.family);
  const prefix = template.prefix(prompt.system, prompt.state).tokenize(model.tokenizer);
  // One thread: the suite runs beside other files on 2 cores, where two llama.cpp threads spin
  // waiting for each other (vitest.config.ts). llama.cpp's CPU kernels give each output row to one
  // thread, so the count changes no number.
  const context = await model.createContext({
    contextSize: 8192,
    batchSize: STRICT_BATCH,
    sequences: 1,
    threads: 1,
    flashAttention: false,
    swaFullCache: true,
  });
  const sequence = context.getSequence();
  try {
    const answers: number[][] = [];
    for (const question of prompt.questions) {
      const suffix = template.suffix(question.text).tokenize(model.tokenizer);
      // One read per distinct label prefix (labels sharing a first token share it); the first
      // from an empty sequence, the others too or after the stem that read left (see above).
      let stemEnd: number | undefined;
      const readLogSoftmax = memoise(async (labelPrefix: Token[]) => {
        if (stemEnd === undefined || options.fresh === "every-read") stemEnd = await evaluateStemFresh(sequence, prefix, suffix);
        else await sequence.eraseContextTokenRanges([{ start: stemEnd, end: sequence.nextTokenIndex }]);
        return readAfterStem(sequence, suffix, labelPrefix);
      });
      const logProbs: number[] = [];
      for (const label of question.labels) {
        const tokens = model.tokenize(label);
        let logProb = 0;
        for (let j = 0; j < tokens.length; j++) logProb += (await readLogSoftmax(tokens.slice(0, j)))(tokens[j]);
        logProbs.push(logProb);
      }
      answers.push(renormalise(logProbs));
    }
    return answers;
  } finally {
    await context.dispose();
  }
}

/** Strict mode's prefix chunk and decode size (src/engine/strict-shapes.ts, llama/runtime.ts). */
const STRICT_CHUNK = 256;
const STRICT_BATCH = 512;

/**
 * Clears the sequence and evaluates, in strict mode's shapes: the state prefix in chunks of 256
 * from position 0, each with a spare token after it that is dropped; then the question but its
 * last two tokens, with a spare token dropped likewise. Returns where that stem ends.
 */
async function evaluateStemFresh(sequence: LlamaContextSequence, prefix: Token[], suffix: Token[]): Promise<number> {
  await sequence.eraseContextTokenRanges([{ start: 0, end: sequence.nextTokenIndex }]);
  const withSpare = async (tokens: Token[]) => {
    await decode(sequence, [...tokens, prefix[0]]);
    await sequence.eraseContextTokenRanges([{ start: sequence.nextTokenIndex - 1, end: sequence.nextTokenIndex }]);
  };
  for (let start = 0; start < prefix.length; start += STRICT_CHUNK) await withSpare(prefix.slice(start, start + STRICT_CHUNK));
  await withSpare(suffix.slice(0, stemOf(suffix)));
  return sequence.nextTokenIndex;
}

/** After the stem: the question's last two tokens and the label's earlier ones as one batch; the next-token log-softmax. */
async function readAfterStem(sequence: LlamaContextSequence, suffix: Token[], labelPrefix: Token[]): Promise<LogSoftmax> {
  const next = await decode(sequence, [...suffix.slice(stemOf(suffix)), ...labelPrefix], true);
  if (!next) throw new Error("no logits");
  let max = -Infinity;
  for (const v of next.values()) max = Math.max(max, v);
  let total = 0;
  for (const v of next.values()) total += Math.exp(v - max);
  const logNormaliser = max + Math.log(total);
  return (token) => next.get(token)! - logNormaliser;
}

const stemOf = (suffix: Token[]) => Math.max(0, suffix.length - 2);

/** Appends `tokens`, one decode per STRICT_BATCH tokens; the logits after the last one when asked. */
async function decode(sequence: LlamaContextSequence, tokens: Token[], logits = false): Promise<Map<Token, number> | undefined> {
  let next: Map<Token, number> | undefined;
  for (let start = 0; start < tokens.length; start += STRICT_BATCH) {
    const input: ControlledEvaluateInputItem[] = tokens.slice(start, start + STRICT_BATCH);
    const last = start + input.length === tokens.length;
    if (last && logits) input[input.length - 1] = [tokens[tokens.length - 1], { generateNext: { logits: true } }];
    const output = await sequence.controlledEvaluate(input);
    if (last && logits) next = output[input.length - 1]?.next.logits;
  }
  return next;
}

type LogSoftmax = (token: Token) => number;

/**
 * Batches of 512 tokens, and of 513 when that leaves no token alone (hence the context's batch
 * size). One batch per evaluation would be simpler but runs 3× slower (attention over one huge batch).
 */
export const BATCH = 512;

/**
 * Appends `tokens` to what the sequence holds, in batches of `BATCH` from the start except that a
 * last token left over joins the batch before it (on CPU a batch of one token gets other
 * kernels), and returns the logits after the last one. Shared with the stand-in servers' oracle.
 */
export async function evaluateWithoutLoneToken(sequence: LlamaContextSequence, tokens: Token[]): Promise<Map<Token, number> | undefined> {
  const batches: Token[][] = [];
  for (let start = 0; start < tokens.length; start += BATCH) batches.push(tokens.slice(start, start + BATCH));
  if (batches.length > 1 && batches[batches.length - 1].length === 1) batches[batches.length - 2].push(batches.pop()![0]);
  let logits: Map<Token, number> | undefined;
  for (const [index, batch] of batches.entries()) {
    const input: ControlledEvaluateInputItem[] = batch.slice();
    const last = index === batches.length - 1;
    if (last) input[batch.length - 1] = [batch[batch.length - 1], { generateNext: { logits: true } }];
    // One call per batch: node-llama-cpp queues a longer input in batches of its own.
    const output = await sequence.controlledEvaluate(input);
    if (last) logits = output[batch.length - 1]?.next.logits;
  }
  return logits;
}

function memoise(fn: (tokens: Token[]) => Promise<LogSoftmax>): (tokens: Token[]) => Promise<LogSoftmax> {
  const cache = new Map<string, Promise<LogSoftmax>>();
  return (tokens) => {
    const key = tokens.join(",");
    if (!cache.has(key)) cache.set(key, fn(tokens));
    return cache.get(key)!;
  };
}

function renormalise(logProbs: number[]): number[] {
  const max = Math.max(...logProbs);
  const weights = logProbs.map((lp) => Math.exp(lp - max));
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}
