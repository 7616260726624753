import {
  resolveChatWrapper,
  type ControlledEvaluateInputItem,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { createChatPromptTemplate } from "../engine/chat-prompt.js";
import type { JudgmentPrompt } from "../judgment/prompt.js";

/**
 * An independent reference for the engine's numbers: for every label token, a fresh evaluation
 * of the whole prompt plus the label's earlier tokens (nothing cached, no branching, no
 * rollback, no logit filter), full-vocabulary log-softmax in float64, chain rule, then
 * renormalisation over the labels. Slow and simple on purpose.
 */
export async function referenceProbabilities(model: LlamaModel, prompt: JudgmentPrompt): Promise<number[][]> {
  const template = createChatPromptTemplate(resolveChatWrapper(model));
  const prefix = template.prefix(prompt.system, prompt.state).tokenize(model.tokenizer);
  const context = await model.createContext({ contextSize: 8192, sequences: 1, threads: 1, flashAttention: false });
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

/** Clears the sequence, evaluates every token from scratch, returns the next-token log-softmax. */
async function evaluateFresh(sequence: LlamaContextSequence, tokens: Token[]): Promise<LogSoftmax> {
  await sequence.eraseContextTokenRanges([{ start: 0, end: sequence.nextTokenIndex }]);
  const input: ControlledEvaluateInputItem[] = tokens.slice(0, -1);
  input.push([tokens[tokens.length - 1], { generateNext: { logits: true } }]);
  const output = await sequence.controlledEvaluate(input);
  const logits = output[tokens.length - 1]?.next.logits;
  if (!logits) throw new Error("no logits");
  let max = -Infinity;
  for (const v of logits.values()) max = Math.max(max, v);
  let total = 0;
  for (const v of logits.values()) total += Math.exp(v - max);
  const logNormaliser = max + Math.log(total);
  return (token) => logits.get(token)! - logNormaliser;
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
