import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, postJudgment, referenceChoiceConfidence, referenceScoreConfidence, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse, expectRequestId, own, record } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** POST /v1/systemone against the real engine on the tiny fixture model: successful answers. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

type Q = { type: "choice" | "noul" | "score"; instructions: unknown; criteria?: unknown };

const choice = (options: string[], instructions = "Which option fits the state best?"): Q => ({
  type: "choice",
  instructions,
  criteria: record(options.map((name, i) => [name, `description of option ${i}`])),
});
const score = (levels: number): Q => ({
  type: "score",
  instructions: "How urgent is the ticket?",
  criteria: Array.from({ length: levels }, (_, i) => `level ${i} of ${levels}`),
});
const noul: Q = { type: "noul", instructions: "The customer is angry.", criteria: { true: "clearly upset", false: "calm" } };
const STATE = { ticket: "I was charged twice for my subscription. 한국어 🎉", priority: 2 };

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function expectProbabilities(probabilities: unknown, keys: string[], message: string): number[] {
  expect(probabilities, message).toBeTypeOf("object");
  expect(Object.keys(probabilities as object).sort(), `probabilities must be keyed exactly by ${JSON.stringify(keys)}\n${message}`).toEqual([...keys].sort());
  const values = keys.map((key) => own(probabilities, key));
  for (const p of values) {
    expect(typeof p === "number" && Number.isFinite(p) && p >= 0 && p <= 1, `probability ${p} not a number in [0, 1]\n${message}`).toBe(true);
  }
  expect(Math.abs(sum(values) - 1), `probabilities sum to ${sum(values)}\n${message}`).toBeLessThan(1e-9);
  return values;
}

/** Checks a 200 against the contract and the ecosystem's expectations, question by question. */
function expectJudgment(response: CapturedResponse, questions: Record<string, Q>): void {
  const message = show(response);
  expect(response.status, message).toBe(200);
  expect(response.headers.get("content-type") ?? "", message).toMatch(/^application\/json/);
  expectRequestId(response);
  const body = response.json;
  expect(body.model, message).toBe(server.engine.modelId);
  // JSON integers: "12", never "12.0" or "1.2e1" (JSON.parse would hide the difference).
  expect(response.text, `usage.input_tokens must be a JSON integer\n${message}`).toMatch(/"input_tokens":\d+[,}]/);
  expect(response.text, `usage.output_tokens must be the JSON integer 0\n${message}`).toMatch(/"output_tokens":0[,}]/);
  expect(body.usage.input_tokens, message).toBeGreaterThan(0);
  expect(typeof body.timing_ms === "number" && Number.isFinite(body.timing_ms) && body.timing_ms >= 0, message).toBe(true);

  const ids = Object.keys(questions);
  expect(Object.keys(body.answers).sort(), `answers must be keyed exactly by the question ids\n${message}`).toEqual([...ids].sort());
  for (const id of ids) {
    // Byte-for-byte: the id appears in the raw body exactly as JSON encodes it.
    expect(response.text.includes(`${JSON.stringify(id)}:{"type"`), `id ${JSON.stringify(id)} not echoed verbatim\n${message}`).toBe(true);
    const question = own(questions, id) as Q;
    const answer = own(body.answers, id);
    const where = `answer ${JSON.stringify(id)}\n${message}`;
    expect(answer?.type, where).toBe(question.type);
    if (question.type === "choice") {
      const options = Object.keys(question.criteria as object);
      const p = expectProbabilities(answer.probabilities, options, where);
      expect(options, where).toContain(answer.choice);
      expect(own(answer.probabilities, answer.choice), `choice is not the most probable option\n${where}`).toBe(Math.max(...p));
      expect(answer.confidence, where).toBeGreaterThanOrEqual(0);
      expect(answer.confidence, where).toBeLessThanOrEqual(1);
      expect(answer.confidence, `confidence differs from (m − 1/n)/(1 − 1/n)\n${where}`).toBeCloseTo(referenceChoiceConfidence(p), 9);
    } else if (question.type === "score") {
      const levels = question.criteria as string[];
      const keys = levels.map((_, i) => String(i));
      const p = expectProbabilities(answer.probabilities, keys, where);
      expect(answer.legend, `legend must echo the level descriptions keyed "0".."n-1"\n${where}`).toEqual(
        Object.fromEntries(levels.map((d, i) => [String(i), d])),
      );
      expect(answer.score, `score must be Σ i·pᵢ\n${where}`).toBeCloseTo(sum(p.map((pi, i) => i * pi)), 9);
      expect(answer.confidence, where).toBeGreaterThanOrEqual(0);
      expect(answer.confidence, where).toBeLessThanOrEqual(1);
      expect(answer.confidence, `confidence differs from the reference score formula\n${where}`).toBeCloseTo(referenceScoreConfidence(p), 9);
    } else {
      expect(typeof answer.noul === "number" && answer.noul >= 0 && answer.noul <= 1, `noul must be in [0, 1]\n${where}`).toBe(true);
      expect(answer, `noul answers carry no confidence\n${where}`).not.toHaveProperty("confidence");
    }
  }
}

describe("the reference confidence formulas used by these tests", () => {
  it("reproduce the worked examples of jev-compat.md", () => {
    expect(referenceChoiceConfidence([0.88, 0.12, 0])).toBeCloseTo(0.82, 9);
    expect(referenceScoreConfidence([0, 0.95, 0.05])).toBeCloseTo(0.925, 9);
    expect(referenceScoreConfidence([0, 0.57, 0.43])).toBeCloseTo(0.355, 9);
  });
});

describe("POST /v1/systemone answers", () => {
  it("choice, noul and score in one request, in the documented shape", async () => {
    const questions = { category: choice(["billing", "bug", "feature request"]), angry: noul, urgency: score(5) };
    expectJudgment(await postJudgment(server, { state: STATE, questions }), questions);
  });

  it("a noul question with no criteria, null criteria and one-sided criteria", async () => {
    const questions: Record<string, Q> = {
      bare: { type: "noul", instructions: "It is about money." },
      nulled: { type: "noul", instructions: "It is about money.", criteria: null },
      oneSided: { type: "noul", instructions: null, criteria: { true: "it mentions a charge" } },
    };
    expectJudgment(await postJudgment(server, { state: "a plain text state", questions }), questions);
  });

  it("choice with 2 and with 255 options, score with 2 and with 10 levels", async () => {
    const many = Array.from({ length: 255 }, (_, i) => `option ${i}`);
    const questions = { two: choice(["a", "b"]), many: choice(many), low: score(2), high: score(10) };
    expectJudgment(await postJudgment(server, { state: STATE, questions }), questions);
  });

  it("question ids and option names with spaces, dots, dashes, emoji and Hangul come back byte-for-byte", async () => {
    const odd = ["with spaces", "v1.2.3", "dash-ed--name", "🎉 party 🙂", "한국어 질문", "constructor", "toString", " padded "];
    const questions = Object.fromEntries(odd.map((id) => [id, choice(odd)]));
    expectJudgment(await postJudgment(server, { state: STATE, questions }), questions);
  });

  it('a question id "__proto__" comes back as an answer keyed "__proto__"', async () => {
    const questions = record<Q>([
      ["__proto__", choice(["yes", "no"])],
      ["other", noul],
    ]);
    const response = await postJudgment(server, { state: STATE, questions });
    expect(response.text, show(response)).toContain('"__proto__":{"type":"choice"');
    expectJudgment(response, questions);
  });

  it('an option named "__proto__" comes back in probabilities and can be the choice', async () => {
    const questions = { pick: choice(["__proto__", "plain", "🙂"]) };
    expectJudgment(await postJudgment(server, { state: STATE, questions }), questions);
  });
});

describe("the model field", () => {
  const questions = { q: choice(["yes", "no"]) };
  for (const name of [undefined, "jev-latest", "jev-preview", "<served id>"]) {
    it(`${name === undefined ? "absent" : JSON.stringify(name)} is answered by the served model`, async () => {
      const model = name === "<served id>" ? server.engine.modelId : name;
      expectJudgment(await postJudgment(server, { model, state: STATE, questions }), questions);
    });
  }

  for (const name of ["jev-ultra", "gpt-4o", "", "tiny"]) {
    it(`${JSON.stringify(name)} is rejected with 400`, async () => {
      expectErrorResponse(await postJudgment(server, { model: name, state: STATE, questions }), 400);
    });
  }

  it("unknown top-level fields are ignored", async () => {
    const body = { model: "jev-latest", state: STATE, questions, stream: true, temperature: 0.2, metadata: { a: [1, 2] } };
    expectJudgment(await postJudgment(server, body, { headers: { "x-typesafe-sdk": "ts/0.6.0" } }), questions);
  });
});

describe("x-request-id", () => {
  it("is on every response, successful or not, and unique per request", async () => {
    const ok = { questions: { q: choice(["yes", "no"]) } };
    const responses = await Promise.all([
      postJudgment(server, ok),
      postJudgment(server, ok),
      postJudgment(server, "{not json"),
      postJudgment(server, { questions: {} }),
      postJudgment(server, ok, { key: null }),
      postJudgment(server, ok, { key: "tjs_" + "x".repeat(40) }),
      call(server.url, "/health"),
      call(server.url, "/v1/models"),
      call(server.url, "/openapi.json"),
      call(server.url, "/no/such/route"),
    ]);
    const ids = responses.map((response) => expectRequestId(response));
    const all = responses.map((response) => show(response)).join("\n\n");
    expect(new Set(ids).size, `request ids repeat: ${ids.join(", ")}\n${all}`).toBe(ids.length);
    expect(
      responses.map((r) => r.status),
      all,
    ).toEqual([200, 200, 400, 400, 401, 401, 200, 200, 200, 404]);
  });
});

describe("include_logits (an extension for calibration tools)", () => {
  const questions = { category: choice(["billing", "bug", "feature request"]), angry: noul, urgency: score(4) };
  const softmax = (xs: number[]) => {
    const max = Math.max(...xs);
    const w = xs.map((x) => Math.exp(x - max));
    return w.map((x) => x / sum(w));
  };

  it("adds each label's raw log-probability, keyed like probabilities, whose softmax is the answer", async () => {
    const response = await postJudgment(server, { state: STATE, questions, include_logits: true });
    const message = show(response);
    expect(response.status, message).toBe(200);
    const { category, angry, urgency } = response.json.answers;
    expect(Object.keys(category.logits), message).toEqual(["billing", "bug", "feature request"]);
    expect(Object.keys(angry.logits), message).toEqual(["true", "false"]);
    expect(Object.keys(urgency.logits), message).toEqual(["0", "1", "2", "3"]);
    const fromLogits = (logits: Record<string, number>) => softmax(Object.values(logits));
    fromLogits(category.logits).forEach((p, i) => expect(p, message).toBeCloseTo(Object.values(category.probabilities as Record<string, number>)[i], 12));
    fromLogits(urgency.logits).forEach((p, i) => expect(p, message).toBeCloseTo(Object.values(urgency.probabilities as Record<string, number>)[i], 12));
    expect(fromLogits(angry.logits)[0], message).toBeCloseTo(angry.noul, 12);
    for (const value of [category, angry, urgency].flatMap((a) => Object.values(a.logits as Record<string, number>))) {
      expect(Number.isFinite(value) && value <= 0, `log-probability ${value} must be finite and ≤ 0\n${message}`).toBe(true);
    }
  });

  it("is off by default: answers carry no logits", async () => {
    const response = await postJudgment(server, { state: STATE, questions });
    for (const answer of Object.values(response.json.answers as Record<string, object>)) {
      expect(answer, show(response)).not.toHaveProperty("logits");
    }
  });

  it("must be a boolean (400 otherwise)", async () => {
    expectErrorResponse(await postJudgment(server, { state: STATE, questions, include_logits: "yes" }), 400);
  });
});
