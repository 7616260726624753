import type { LabelTrieNode, Token } from "./label-trie.js";
import type { PreparedJudgment } from "./types.js";

/** One question of a judgment prepared as tokens: its part of the prompt and the trie of its labels. */
export interface PreparedQuestion {
  tokens: Token[];
  trie: LabelTrieNode;
  labelCount: number;
}

/**
 * A judgment prepared as token ids with exact counts, by every engine that reads the model
 * token by token: the in-process one (llama/) and those that tokenise through a server
 * (llama-server, vLLM, SGLang; remote/prepare.ts). The System One gateway prepares requests,
 * not tokens, and has its own.
 */
export class PreparedTokens implements PreparedJudgment {
  readonly inputTokensExact = true;
  constructor(
    readonly prefixTokens: Token[],
    readonly questions: PreparedQuestion[],
    readonly inputTokens: number,
    readonly questionTokens: readonly number[],
    /** `x_diagnostics`: the in-process engine also reads the label mass at each first label position. */
    readonly diagnostics = false,
  ) {}
}
