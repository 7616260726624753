import { getLlama, resolveChatWrapper, type LlamaModel, type Token } from "node-llama-cpp";
import { okJson } from "../../testing/route-assertions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatPromptTemplate } from "../../engine/chat-prompt.js";
import type { JudgmentEngine } from "../../engine/types.js";
import { buildPrompt, promptStyleFor } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { evaluateWithoutLoneToken } from "../../testing/reference.js";
import { readyTinyEngine, startTestServer, type TestServer } from "../../testing/server.js";
import { postDecisions } from "../decisions/test-helpers.js";

/**
 * `x_diagnostics` on both routes, real engine and tiny fixture model: the label mass and top
 * token agree with a fresh full-vocabulary evaluation, the answers and the bill are those of the
 * same request without it, and combinations it cannot describe are refused before any charge.
 */

let engine: JudgmentEngine;
let server: TestServer;
let model: LlamaModel;
beforeAll(async () => {
  engine = await readyTinyEngine();
  server = await startTestServer({ engine });
  model = await (await getLlama({ gpu: false })).loadModel({ modelPath: await tinyFixturePath() });
});
afterAll(async () => {
  await server?.close();
  await engine?.close();
  await model?.dispose();
});

const STATE = "I was charged twice for my subscription this month.";
const QUESTIONS: Record<string, Question> = {
  topic: { type: "choice", instructions: "What is it about?", criteria: { billing: "money", tech: null, account: "login" } },
  angry: { type: "noul", instructions: "The customer is angry." },
  urgency: { type: "score", instructions: "How urgent?", criteria: ["low", "medium", "high"] },
};

/** Fresh evaluation of the prompt up to the first label token; mass and top token over the whole vocabulary. */
async function reference(question: Question): Promise<{ mass: number; top: boolean }> {
  const template = createChatPromptTemplate(resolveChatWrapper(model));
  // Styled as the service styles it for this template (JUDGE_PROMPT_CUES=auto).
  const prompt = buildPrompt(STATE, [question], promptStyleFor(template.family));
  const tokens = [
    ...template.prefix(prompt.system, prompt.state).tokenize(model.tokenizer),
    ...template.suffix(prompt.questions[0].text).tokenize(model.tokenizer),
  ];
  const context = await model.createContext({ contextSize: 2048, sequences: 1, threads: 1, flashAttention: false });
  try {
    const logits = (await evaluateWithoutLoneToken(context.getSequence(), tokens as Token[]))!;
    const first = new Set(prompt.questions[0].labels.map((label) => model.tokenize(label)[0]));
    const max = Math.max(...logits.values());
    let total = 0;
    for (const v of logits.values()) total += Math.exp(v - max);
    let mass = 0;
    for (const token of first) mass += Math.exp(logits.get(token)! - max);
    return { mass: mass / total, top: [...first].some((token) => logits.get(token) === max) };
  } finally {
    await context.dispose();
  }
}

describe("x_diagnostics", () => {
  it("on /v1/systemone: label_mass and top_token_is_label per answer, matching a fresh full-vocabulary read; answers and bill unchanged", async () => {
    const plain = okJson(await postJudgment(server, { state: STATE, questions: QUESTIONS }));
    const response = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_diagnostics: true });
    const diagnosed = okJson(response);
    expect(diagnosed.usage, show(response)).toEqual(plain.usage);
    for (const [id, question] of Object.entries(QUESTIONS)) {
      const { label_mass, top_token_is_label, ...answer } = diagnosed.answers[id];
      expect(answer, show(response)).toEqual(plain.answers[id]);
      const expected = await reference(question);
      expect(label_mass, show(response)).toBeGreaterThan(0);
      expect(Math.abs(label_mass - expected.mass), `${id}: ${label_mass} vs ${expected.mass}\n${show(response)}`).toBeLessThan(1e-9);
      expect(top_token_is_label, show(response)).toBe(expected.top);
    }
    expect(Object.keys(plain.answers.topic), show(response)).not.toContain("label_mass");
  });

  it("on /v1/decisions: the same two fields on every answer, bill unchanged", async () => {
    const body = {
      model: "gpt-6-luna",
      input: STATE,
      questions: [
        { type: "predicate", instructions: "The customer is angry." },
        { type: "choice", instructions: "What is it about?", choices: [{ value: "billing" }, { value: "tech" }] },
      ],
    };
    const plain = okJson(await postDecisions(server, body));
    const response = await postDecisions(server, { ...body, x_diagnostics: true });
    const diagnosed = okJson(response);
    expect(diagnosed.usage, show(response)).toEqual(plain.usage);
    diagnosed.answers.forEach((a: any, i: number) => {
      const { label_mass, top_token_is_label, ...answer } = a;
      expect(answer, show(response)).toEqual(plain.answers[i]);
      expect(label_mass > 0 && label_mass <= 1, show(response)).toBe(true);
      expect(typeof top_token_is_label, show(response)).toBe("boolean");
    });
  });

  it("is refused with x_debias canonical or shift (a debiased answer mixes presentations)", async () => {
    for (const mode of ["canonical", "shift"]) {
      const response = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_diagnostics: true, x_debias: mode });
      expect(response.status, show(response)).toBe(400);
      expect(response.json.code, show(response)).toBe("invalid_request");
      expect(response.json.error, show(response)).toContain('x_debias "none"');
    }
  });

  it("must be a boolean", async () => {
    const response = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_diagnostics: "yes" });
    expect(response.status, show(response)).toBe(400);
    expect(response.text, show(response)).toContain("x_diagnostics must be true or false");
  });
});
