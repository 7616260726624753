import { SpecialToken, SpecialTokensText, type LlamaText } from "node-llama-cpp";
import { styledFor, type JudgmentPrompt } from "../../judgment/prompt.js";
import type { ChatPromptTemplate } from "../chat-prompt.js";
import { branchTokenCount, buildLabelTrie, trieDepth, type Token } from "../label-trie.js";
import { BudgetError, throwIfAborted } from "../types.js";
import { PreparedTokens, type PreparedQuestion } from "../prepared-tokens.js";
import { createTokenCache } from "./token-cache.js";
import { tokenizeAll, type RemoteTokenizer, type TextToTokenize } from "./token-batch.js";

/** The engines beside this one (engine/hf) name the tokenizer from here, where they prepare with it. */
export type { RemoteTokenizer } from "./token-batch.js";

export type BuiltinToken = "BOS" | "EOS" | "NL" | "EOT" | "SEP";

export interface RemotePreparerOptions {
  template: ChatPromptTemplate;
  /** Ids of the template's builtin tokens (a template emitting one missing here is an error). */
  builtinTokens: Partial<Record<BuiltinToken, Token>>;
  tokenizer: RemoteTokenizer;
  /** Tokens one question may occupy on the server (its per-slot context). */
  contextSize: number;
  maxRequestTokens: number;
}

/** The remote engines' preparation is the shared one (engine/prepared-tokens.ts), under the names they use. */
export { PreparedTokens as RemotePrepared, type PreparedQuestion as RemoteQuestion } from "../prepared-tokens.js";

/**
 * Tokenises a prompt the way the in-process engine does, through a server's tokenizer: the
 * chat template's control-token text is parsed as control tokens, the caller's text never is
 * (a state containing "<|im_end|>" stays text). Each piece is tokenised on its own, as
 * node-llama-cpp does; for tokenizers without a space prefix (BPE families, the fixtures)
 * that gives the same ids as the in-process engine. A request's pieces go to the server
 * together (token-batch.ts); control text, labels and question texts, which recur across
 * requests, are remembered (token-cache.ts), the state is not.
 */
export function createRemotePreparer(options: RemotePreparerOptions) {
  // One per preparer, and so per connection to one server and model: nothing else reads it.
  const cache = createTokenCache();

  /** The text's pieces: strings to tokenise (control text with `special`) and builtin ids. */
  const piecesOf = (text: LlamaText, keep: boolean): Array<TextToTokenize | Token> => {
    const pieces: Array<TextToTokenize | Token> = [];
    let pending = "";
    const flush = () => {
      if (pending !== "") pieces.push({ text: pending, special: false, keep });
      pending = "";
    };
    for (const value of text.values) {
      if (typeof value === "string") {
        pending += value;
        continue;
      }
      flush();
      if (value instanceof SpecialTokensText) pieces.push({ text: value.value, special: true, keep: true });
      else if (value instanceof SpecialToken) {
        const id = options.builtinTokens[value.value as BuiltinToken];
        if (id === undefined) throw new Error(`the chat template needs the ${value.value} token, which the server did not name`);
        pieces.push(id);
      }
    }
    flush();
    return pieces;
  };

  return async function prepare(asked: JudgmentPrompt, signal?: AbortSignal): Promise<PreparedTokens> {
    throwIfAborted(signal);
    const prompt = styledFor(asked, options.template.family);
    const prefix = piecesOf(options.template.prefix(prompt.system, prompt.state), false);
    const questions = prompt.questions.map((question) => ({
      suffix: piecesOf(options.template.suffix(question.text), true),
      labels: question.labels.map((label): TextToTokenize => ({ text: label, special: false, keep: true })),
    }));
    const texts = [prefix, ...questions.flatMap((q) => [q.suffix, q.labels])].flat().filter((p): p is TextToTokenize => typeof p !== "number");
    const tokenized = await tokenizeAll(options.tokenizer, cache, texts, signal);
    let next = 0;
    const join = (pieces: Array<TextToTokenize | Token>) => pieces.flatMap((piece) => (typeof piece === "number" ? [piece] : tokenized[next++]));
    const prefixTokens = join(prefix);
    const questionParts = questions.map((question) => {
      const tokens = join(question.suffix);
      const labels = question.labels.map(() => tokenized[next++]);
      return { tokens, trie: buildLabelTrie(labels), labelCount: labels.length };
    });
    throwIfAborted(signal);
    return checkBudgets(prefixTokens, questionParts, options);
  };
}

function checkBudgets(prefixTokens: Token[], questions: PreparedQuestion[], options: RemotePreparerOptions): PreparedTokens {
  let inputTokens = prefixTokens.length;
  const questionTokens: number[] = [];
  questions.forEach((question, index) => {
    const needed = prefixTokens.length + question.tokens.length + trieDepth(question.trie);
    if (needed > options.contextSize) {
      throw new BudgetError(`the state and question need ${needed} tokens, over the model's context budget of ${options.contextSize}`, index);
    }
    questionTokens.push(question.tokens.length + branchTokenCount(question.trie));
    inputTokens += questionTokens[index];
  });
  if (inputTokens > options.maxRequestTokens) {
    throw new BudgetError(`the request needs ${inputTokens} input tokens, over the limit of ${options.maxRequestTokens} per request`);
  }
  return new PreparedTokens(prefixTokens, questions, inputTokens, questionTokens);
}
