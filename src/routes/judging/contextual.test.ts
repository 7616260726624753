import { okJson } from "../../testing/route-assertions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JudgmentEngine } from "../../engine/types.js";
import { CONTENT_FREE_STATES } from "../../judgment/contextual.js";
import type { Question } from "../../judgment/schema.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { readyTinyEngine, startTestServer, type TestServer } from "../../testing/server.js";
import { postDecisions } from "../decisions/test-helpers.js";

/**
 * `x_calibration: "contextual"` on the real engine and the tiny fixture model: each answer is the
 * plain answer divided by the mean answer to the content-free states, renormalised; the same
 * request always gets the same answer whatever else is asked; and the content-free prompts are billed.
 */

let engine: JudgmentEngine;
let server: TestServer;
beforeAll(async () => {
  engine = await readyTinyEngine();
  server = await startTestServer({ engine });
});
afterAll(async () => {
  await server?.close();
  await engine?.close();
});

const STATE = "I was charged twice for my subscription this month.";
const QUESTIONS: Record<string, Question> = {
  topic: { type: "choice", instructions: "What is it about?", criteria: { billing: "money", tech: null, account: "login" } },
  angry: { type: "noul", instructions: "The customer is angry." },
  urgency: { type: "score", instructions: "How urgent?", criteria: ["low", "medium", "high"] },
};

/** An answer as a distribution over its labels in question order (noul: [P(true), P(false)]). */
const distribution = (answer: any): number[] => (answer.type === "noul" ? [answer.noul, 1 - answer.noul] : Object.values(answer.probabilities));

describe('x_calibration "contextual"', () => {
  it("divides each answer by the mean content-free answer and renormalises", async () => {
    const plain = okJson(await postJudgment(server, { state: STATE, questions: QUESTIONS }));
    const free = await Promise.all(CONTENT_FREE_STATES.map(async (state) => okJson(await postJudgment(server, { state, questions: QUESTIONS }))));
    const response = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_calibration: "contextual" });
    const calibrated = okJson(response);
    for (const id of Object.keys(QUESTIONS)) {
      const p = distribution(plain.answers[id]);
      const cf = p.map((_, k) => free.reduce((sum, f) => sum + distribution(f.answers[id])[k], 0) / free.length);
      const raw = p.map((x, k) => x / cf[k]);
      const expected = raw.map((x) => x / raw.reduce((a, b) => a + b, 0));
      const actual = distribution(calibrated.answers[id]);
      actual.forEach((x, k) => expect(Math.abs(x - expected[k]), `${id}[${k}]: ${x} vs ${expected[k]}\n${show(response)}`).toBeLessThan(1e-9));
    }
    // Billed: the request's own tokens and those of every content-free prompt.
    const tokens = plain.usage.input_tokens + free.reduce((sum, f) => sum + f.usage.input_tokens, 0);
    expect(calibrated.usage.input_tokens, show(response)).toBe(tokens);
  });

  it("answers a question the same whatever other questions come with it", async () => {
    const alone = okJson(await postJudgment(server, { state: STATE, questions: { topic: QUESTIONS.topic }, x_calibration: "contextual" }));
    const response = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_calibration: "contextual" });
    expect(okJson(response).answers.topic, show(response)).toEqual(alone.answers.topic);
  });

  it("works on /v1/decisions, and is refused with x_debias canonical or shift", async () => {
    const response = await postDecisions(server, {
      model: "gpt-6-luna",
      input: STATE,
      questions: [{ type: "predicate", instructions: "The customer is angry." }],
      x_calibration: "contextual",
    });
    expect(okJson(response).answers[0].probability, show(response)).toBeGreaterThan(0);
    const refused = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_calibration: "contextual", x_debias: "shift" });
    expect(refused.status, show(refused)).toBe(400);
    expect(refused.json.code, show(refused)).toBe("invalid_request");
    const bad = await postJudgment(server, { state: STATE, questions: QUESTIONS, x_calibration: "platt" });
    expect(bad.status, show(bad)).toBe(400);
  });
});
