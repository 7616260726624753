import {
  resolveChatWrapper,
  type ControlledEvaluateInputItem,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { createChatPromptTemplate } from "../engine/chat-prompt.js";
import { bosTextOf } from "../engine/llama/runtime.js";
import type { JudgmentPrompt } from "../judgment/prompt.js";

/**
 * An independent reference for the engine's numbers: for every label token, a fresh evaluation
 * of the whole prompt plus the label's earlier tokens (nothing cached, no branching, no
 * rollback, no logit filter), full-vocabulary log-softmax in float64, chain rule, then
 * renormalisation over the labels. Slow and simple on purpose.
 *
 * On CPU, batches of two or more tokens give the same logits however a sequence is split
 * between them, and only a batch of one differs (src/engine/llama/batching.test.ts measures
 * both). Neither this nor the engine ever evaluates a batch of one, so the two must agree to
 * the rounding of their float64 sums.
 */
export async function referenceProbabilities(model: LlamaModel, prompt: JudgmentPrompt): Promise<number[][]> {
  const template = createChatPromptTemplate(resolveChatWrapper(model), bosTextOf(model));
  const prefix = template.prefix(prompt.system, prompt.state).tokenize(model.tokenizer);
  const context = await model.createContext({ contextSize: 8192, batchSize: BATCH + 1, sequences: 1, threads: 1, flashAttention: false });
  const sequence = context.getSequence();
  try {
    const answers: number[][] = [];
    for (const question of prompt.questions) {
      const promptTokens = [...prefix, ...template.suffix(question.text).tokenize(model.tokenizer)];
      // One fresh evaluation per distinct label prefix (labels sharing a first token share it).
      const freshLogSoftmax = memoise((labelPrefix: Token[]) => evaluateFresh(sequence, [...promptTokens, ...labelPrefix]));
      const logProbs: number[] = [];
      for (const label of question.labels) {
        const tokens = model.tokenize(label);
        let logProb = 0;
        for (let j = 0; j < tokens.length; j++) logProb += (await freshLogSoftmax(tokens.slice(0, j)))(tokens[j]);
        logProbs.push(logProb);
      }
      answers.push(renormalise(logProbs));
    }
    return answers;
  } finally {
    await context.dispose();
  }
}

type LogSoftmax = (token: Token) => number;

/**
 * Batches of 512 tokens, and of 513 when that leaves no token alone (hence the context's batch
 * size). One batch per evaluation would be simpler but runs 3× slower (attention over one huge batch).
 */
export const BATCH = 512;

/** Clears the sequence, evaluates every token from scratch, returns the next-token log-softmax. */
async function evaluateFresh(sequence: LlamaContextSequence, tokens: Token[]): Promise<LogSoftmax> {
  await sequence.eraseContextTokenRanges([{ start: 0, end: sequence.nextTokenIndex }]);
  const next = await evaluateWithoutLoneToken(sequence, tokens);
  if (!next) throw new Error("no logits");
  let max = -Infinity;
  for (const v of next.values()) max = Math.max(max, v);
  let total = 0;
  for (const v of next.values()) total += Math.exp(v - max);
  const logNormaliser = max + Math.log(total);
  return (token) => next.get(token)! - logNormaliser;
}

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
