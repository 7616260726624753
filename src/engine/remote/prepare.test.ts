import { describe, expect, it } from "vitest";
import { buildPrompt, promptStyleFor } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import type { Token } from "../label-trie.js";
import { createRemotePreparer, type RemoteTokenizer } from "./prepare.js";
import { remoteChat } from "../hf/tokenizer-config.js";

/**
 * The remote engines' count of each question's own tokens (what debiasing bills per presentation
 * read), through a character-level tokenizer: one token per code point, control-token text one
 * token. The count does not depend on how a server splits words, only on what it returns.
 */
const charTokenizer: RemoteTokenizer = {
  async tokenize(text, special) {
    if (special) return [(100_000 + text.length) as Token];
    return [...text].map((c) => c.codePointAt(0)! as Token);
  },
};

const prepare = createRemotePreparer({
  template: remoteChat(undefined).template,
  builtinTokens: {},
  tokenizer: charTokenizer,
  contextSize: 100_000,
  maxRequestTokens: 1_000_000,
});

const STATE = { ticket: "charged twice 🎉" };
const questions: Question[] = [
  { type: "choice", instructions: "Which?", criteria: { a: null, b: "bee", c: "sea" } },
  { type: "choice", instructions: "Many", criteria: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`o${i}`, null])) },
  { type: "score", instructions: "How much?", criteria: ["lo", "hi"] },
  { type: "noul", instructions: "It holds." },
];

describe("createRemotePreparer's questionTokens", () => {
  it("gives each question's own tokens: the prefix is the rest, and each is what that question adds alone", async () => {
    const prepared = await prepare(buildPrompt(STATE, questions));
    const perQuestion = prepared.questionTokens;
    const context = JSON.stringify({ inputTokens: prepared.inputTokens, perQuestion });
    expect(perQuestion, context).toHaveLength(questions.length);
    const empty = (await prepare(buildPrompt(STATE, []))).inputTokens;
    expect(prepared.inputTokens - perQuestion.reduce((a, b) => a + b, 0), context).toBe(empty);
    for (const [i, q] of questions.entries()) {
      expect(perQuestion[i], `question ${i}: ${context}`).toBe((await prepare(buildPrompt(STATE, [q]))).inputTokens - empty);
    }
  });
});

describe("createRemotePreparer and auto cues", () => {
  it("reads a prompt built with auto cues in its template family's style (ChatML: short), and a fixed style as given", async () => {
    expect(remoteChat(undefined).template.family).toBe("chatml");
    const tokens = async (style: Parameters<typeof buildPrompt>[2]) => {
      const prepared = await prepare(buildPrompt(STATE, questions, style));
      return [...prepared.prefixTokens, ...prepared.questions.flatMap((q) => q.tokens)];
    };
    const [auto, short, full] = [await tokens("auto"), await tokens(promptStyleFor("chatml")), await tokens(promptStyleFor(undefined, "full"))];
    expect(auto).toEqual(short);
    expect(auto).not.toEqual(full);
  });
});
