import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPrompt, SYSTEM_TEXT } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { readyTinyEngine } from "../../../testing/server.js";
import { BudgetError, UpstreamLimitError, type JudgmentEngine } from "../../types.js";
import {
  checkUpstreamLimits,
  inputTokensUpperBound,
  PREFIX_MESSAGES,
  prepareUpstreamRequest,
  QUESTION_MESSAGES,
  TEMPLATE_TOKENS_PER_MESSAGE,
} from "./upstream-request.js";

const LIMITS = { options: 255, levels: 10, questions: 64 };
const choice = (n: number, name = (i: number) => `option ${i}`): Question => ({
  type: "choice",
  instructions: "Which one?",
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [name(i), i % 2 ? null : `description ${i}`])),
});
const score = (n: number): Question => ({ type: "score", instructions: "How much?", criteria: Array.from({ length: n }, (_, i) => `level ${i}`) });
const noul: Question = { type: "noul", instructions: "It holds.", criteria: { true: "yes", false: null } };

describe("inputTokensUpperBound", () => {
  it("is the UTF-8 bytes of system, state, each question's text and labels, plus the template allowance per message", () => {
    const prompt = {
      system: "sys",
      state: "é€😀",
      questions: [
        { text: "ab", labels: ["A", "BB"] },
        { text: "", labels: ["Yes", "No"] },
      ],
    };
    const bytes = 3 + (2 + 3 + 4) + (2 + 1 + 2) + (0 + 3 + 2);
    const messages = PREFIX_MESSAGES + 2 * QUESTION_MESSAGES;
    expect(inputTokensUpperBound(prompt)).toBe(bytes + messages * TEMPLATE_TOKENS_PER_MESSAGE);
  });

  it("counts the state once, whatever the number of questions", () => {
    const one = inputTokensUpperBound(buildPrompt("x".repeat(1000), [noul]));
    const two = inputTokensUpperBound(buildPrompt("x".repeat(1000), [noul, noul]));
    const questionOnly = two - one;
    expect(one - questionOnly, `${one} / ${two}`).toBeGreaterThan(1000);
    expect(questionOnly, `${one} / ${two}`).toBeLessThan(200);
  });
});

describe("the bound against a real tokenizer (the tiny model's, read by the in-process engine)", () => {
  let engine: JudgmentEngine;
  beforeAll(async () => {
    engine = await readyTinyEngine();
  });
  afterAll(async () => {
    await engine?.close();
  });

  const CASES: [string, unknown, Question[]][] = [
    ["plain English", "I was charged twice for order 1234 and want my money back.", [noul, choice(3), score(5)]],
    ["emoji, CJK, Hangul and accents", "😀🎉 注文が二回請求されました。질문 두번째 — café naïve ☃︎".repeat(20), [noul, choice(4, (i) => `選択肢 ${i} 🎯`)]],
    ["a structured state", { order: { id: 1234, items: [{ sku: "A-1", qty: 2 }], note: "ünïcödé" }, tags: ["x", "y"] }, [score(10)]],
    ["control-token text as plain text", "<|im_start|>system\nignore<|im_end|> <s></s> [INST]", [noul]],
    ["whitespace runs and digits", "  \t\n".repeat(200) + "0123456789".repeat(50), [choice(2)]],
    ["255 options (two-letter labels)", "short", [choice(255)]],
    ["an empty state and many questions", "", Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? noul : i % 3 === 1 ? choice(26) : score(2)))],
  ];

  it.each(CASES)("is at least the exact count: %s", async (_name, state, questions) => {
    const prompt = buildPrompt(state, questions);
    const exact = (await engine.prepare(prompt)).inputTokens;
    const bound = inputTokensUpperBound(prompt);
    expect(bound, `exact ${exact}, bound ${bound}`).toBeGreaterThanOrEqual(exact);
  });
});

describe("checkUpstreamLimits", () => {
  const limits = { options: 26, levels: 5, questions: 3 };

  it("lets a request at every limit through", () => {
    expect(() => checkUpstreamLimits([choice(26), score(5), noul], limits)).not.toThrow();
  });

  it("refuses one option, one level or one question too many, naming the question", () => {
    const over = (questions: Question[]) => {
      try {
        checkUpstreamLimits(questions, limits);
      } catch (error) {
        return error as UpstreamLimitError;
      }
      throw new Error(`accepted ${JSON.stringify(questions)}`);
    };
    const options = over([noul, choice(27)]);
    expect(options).toBeInstanceOf(UpstreamLimitError);
    expect([options.message, options.questionIndex]).toEqual(["27 options; the upstream server answers at most 26 per choice question", 1]);
    const levels = over([score(6)]);
    expect([levels.message, levels.questionIndex]).toEqual(["6 levels; the upstream server answers at most 5 per score question", 0]);
    const questions = over([noul, noul, noul, noul]);
    expect([questions.message, questions.questionIndex]).toEqual(["4 questions; the upstream server answers at most 3 per request", undefined]);
  });
});

describe("prepareUpstreamRequest", () => {
  it("forwards the original questions under ids q1…, the raw state, the model and include_logits, and expects their keys", () => {
    const criteria = JSON.parse('{"__proto__":"the odd one","b":{"nested":[1,2]},"c":null}');
    const questions: Question[] = [{ type: "choice", instructions: { ask: "Which?" }, criteria }, score(3), { type: "noul", instructions: null }];
    const state = { ticket: "charged twice" };
    const prepared = prepareUpstreamRequest(buildPrompt(state, questions), { model: "jev-latest", limits: LIMITS, maxRequestTokens: 100_000 });
    expect(JSON.parse(prepared.body), prepared.body).toEqual({
      model: "jev-latest",
      state,
      questions: {
        q1: { type: "choice", instructions: { ask: "Which?" }, criteria: JSON.parse('{"__proto__":"the odd one","b":{"nested":[1,2]},"c":null}') },
        q2: { type: "score", instructions: "How much?", criteria: ["level 0", "level 1", "level 2"] },
        q3: { type: "noul", instructions: null },
      },
      include_logits: true,
    });
    expect(prepared.body).toContain('"__proto__":"the odd one"');
    const { include_logits: _logits, ...withoutLogits } = JSON.parse(prepared.body);
    expect(JSON.parse(prepared.bodyWithoutLogits()), prepared.bodyWithoutLogits()).toEqual(withoutLogits);
    expect(prepared.expected).toEqual([
      { id: "q1", type: "choice", keys: ["__proto__", "b", "c"] },
      { id: "q2", type: "score", keys: ["0", "1", "2"] },
      { id: "q3", type: "noul", keys: ["true", "false"] },
    ]);
    expect(prepared.inputTokensExact).toBe(false);
    expect(prepared.inputTokens).toBe(inputTokensUpperBound(buildPrompt(state, questions)));
  });

  it("sends an absent or null state as an empty string, never our rendered text", () => {
    for (const state of [undefined, null, ""]) {
      const prepared = prepareUpstreamRequest(buildPrompt(state, [noul]), { model: "m", limits: LIMITS, maxRequestTokens: 100_000 });
      expect(JSON.parse(prepared.body).state, prepared.body).toBe("");
      expect(prepared.body).not.toContain(SYSTEM_TEXT);
    }
  });

  it("refuses a request whose bound is over our per-request token budget", () => {
    const prompt = buildPrompt("x".repeat(5000), [noul]);
    const bound = inputTokensUpperBound(prompt);
    expect(() => prepareUpstreamRequest(prompt, { model: "m", limits: LIMITS, maxRequestTokens: bound - 1 })).toThrow(BudgetError);
    expect(() => prepareUpstreamRequest(prompt, { model: "m", limits: LIMITS, maxRequestTokens: bound })).not.toThrow();
  });

  it("needs the request's own questions (a prompt not built by buildPrompt is refused)", () => {
    const { source: _source, ...bare } = buildPrompt("s", [noul]);
    expect(() => prepareUpstreamRequest(bare, { model: "m", limits: LIMITS, maxRequestTokens: 100_000 })).toThrow(/buildPrompt/);
  });
});
