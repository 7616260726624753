import { SpecialToken, SpecialTokensText, type LlamaText } from "node-llama-cpp";
import { styledFor, type JudgmentPrompt } from "../../judgment/prompt.js";
import type { ChatPromptTemplate } from "../chat-prompt.js";
import { branchTokenCount, buildLabelTrie, trieDepth, type Token } from "../label-trie.js";
import { BudgetError, throwIfAborted } from "../types.js";
import { PreparedTokens, type PreparedQuestion } from "../prepared-tokens.js";

/** A server's tokenizer: never adds BOS/EOS; `special` parses control-token text as control tokens. */
export interface RemoteTokenizer {
  tokenize(text: string, special: boolean, signal?: AbortSignal): Promise<Token[]>;
}

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

const LABEL_CACHE_SIZE = 10_000;

/**
 * Tokenises a prompt the way the in-process engine does, through a server's tokenizer: the
 * chat template's control-token text is parsed as control tokens, the caller's text never is
 * (a state containing "<|im_end|>" stays text). Each piece is tokenised on its own, as
 * node-llama-cpp does; for tokenizers without a space prefix (BPE families, the fixtures)
 * that gives the same ids as the in-process engine.
 */
export function createRemotePreparer(options: RemotePreparerOptions) {
  const labels = new Map<string, Promise<Token[]>>();
  const specials = new Map<string, Promise<Token[]>>();

  const cached = (cache: Map<string, Promise<Token[]>>, key: string, load: () => Promise<Token[]>) => {
    let hit = cache.get(key);
    if (!hit) {
      if (cache.size >= LABEL_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      hit = load();
      // A failed call (server down, client gone) must not be remembered.
      hit.catch(() => cache.delete(key));
      cache.set(key, hit);
    }
    return hit;
  };

  const tokenizeText = async (text: LlamaText, signal?: AbortSignal): Promise<Token[]> => {
    const parts: Promise<Token[]>[] = [];
    let pending = "";
    const flush = () => {
      if (pending !== "") parts.push(options.tokenizer.tokenize(pending, false, signal));
      pending = "";
    };
    for (const value of text.values) {
      if (typeof value === "string") {
        pending += value;
        continue;
      }
      flush();
      if (value instanceof SpecialTokensText) {
        const special = value.value;
        parts.push(cached(specials, special, () => options.tokenizer.tokenize(special, true)));
      } else if (value instanceof SpecialToken) {
        const id = options.builtinTokens[value.value as BuiltinToken];
        if (id === undefined) throw new Error(`the chat template needs the ${value.value} token, which the server did not name`);
        parts.push(Promise.resolve([id]));
      }
    }
    flush();
    return (await Promise.all(parts)).flat();
  };

  const labelTokens = (label: string, signal?: AbortSignal) =>
    cached(labels, label, () => options.tokenizer.tokenize(label, false, signal));

  return async function prepare(asked: JudgmentPrompt, signal?: AbortSignal): Promise<PreparedTokens> {
    throwIfAborted(signal);
    const prompt = styledFor(asked, options.template.family);
    const [prefixTokens, questionParts] = await Promise.all([
      tokenizeText(options.template.prefix(prompt.system, prompt.state), signal),
      Promise.all(
        prompt.questions.map(async (question) => {
          const [tokens, tries] = await Promise.all([
            tokenizeText(options.template.suffix(question.text), signal),
            Promise.all(question.labels.map((label) => labelTokens(label, signal))),
          ]);
          return { tokens, trie: buildLabelTrie(tries), labelCount: question.labels.length };
        }),
      ),
    ]);
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
      throw new BudgetError(
        `the state and question need ${needed} tokens, over the model's context budget of ${options.contextSize}`,
        index,
      );
    }
    questionTokens.push(question.tokens.length + branchTokenCount(question.trie));
    inputTokens += questionTokens[index];
  });
  if (inputTokens > options.maxRequestTokens) {
    throw new BudgetError(`the request needs ${inputTokens} input tokens, over the limit of ${options.maxRequestTokens} per request`);
  }
  return new PreparedTokens(prefixTokens, questions, inputTokens, questionTokens);
}
