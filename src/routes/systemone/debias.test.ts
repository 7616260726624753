import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JudgmentEngine, PreparedJudgment } from "../../engine/types.js";
import { Mulberry32 } from "../../gguf/prng.js";
import { canonicalOrder, MAX_SHIFTS, presentations } from "../../judgment/debias.js";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { billingState } from "../../testing/billing-http.js";
import { expectedCharge, expectedEuros } from "../../testing/billing-store.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse, record } from "../../testing/route-assertions.js";
import { readyTinyEngine, startTestServer, type TestServer, type TestServerOptions } from "../../testing/server.js";

/**
 * POST /v1/systemone with `x_debias` (and JUDGE_DEBIAS) on the real engine and the tiny fixture
 * model: canonical answers do not depend on the client's option order at all, shift answers not
 * on a cyclic shift of it, only the presentations read are billed, and without debiasing
 * nothing changes, not even the number of engine calls.
 */

let tiny: JudgmentEngine;
const calls = { prepare: 0, evaluate: 0 };
/** The real engine, its calls counted. */
let counted: JudgmentEngine;
beforeAll(async () => {
  tiny = await readyTinyEngine();
  counted = new Proxy(tiny, {
    get(target, property) {
      if (property === "prepare") return (...args: Parameters<JudgmentEngine["prepare"]>) => (calls.prepare++, target.prepare(...args));
      if (property === "evaluate") return (...args: Parameters<JudgmentEngine["evaluate"]>) => (calls.evaluate++, target.evaluate(...args));
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
});
afterAll(async () => {
  await tiny?.close();
});

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  calls.prepare = calls.evaluate = 0;
});
async function server(options: TestServerOptions = {}): Promise<TestServer> {
  const s = await startTestServer({ engine: counted, ...options });
  servers.push(s);
  return s;
}

const STATE = { ticket: "I was charged twice for my subscription. 한국어 🎉", priority: 2 };
const OPTIONS = ["billing", "bug", "feature request", "account", "🎉 other", "__proto__", "Zeta", "ärger"];
const choice = (keys: readonly string[]) => ({
  type: "choice" as const,
  instructions: "What is the ticket about?",
  criteria: record(keys.map((k) => [k, `description of ${k}`])),
});
/** The prompt the service builds for `questions` (JUDGE_PROMPT_CUES=auto: the engine styles it). */
const served = (questions: readonly Question[]) => buildPrompt(STATE, [...questions], "auto");
const rotate = <T>(xs: readonly T[], by: number) => xs.map((_, i) => xs[(i + by) % xs.length]);
function shuffled<T>(xs: readonly T[], rng: Mulberry32): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function ok(response: CapturedResponse): CapturedResponse {
  expect(response.status, show(response)).toBe(200);
  return response;
}

/** The answer with its probabilities as [key, p] pairs in the canonical order: equal means bit-identical. */
function canonicalAnswer(response: CapturedResponse, id: string) {
  const answer = response.json.answers[id];
  const keys = canonicalOrder(Object.keys(answer.probabilities ?? {}));
  return { ...answer, probabilities: keys.map((k) => [k, Object.getOwnPropertyDescriptor(answer.probabilities, k)!.value]) };
}

const withoutTiming = (response: CapturedResponse) => response.text.replace(/"timing_ms":[0-9.e+-]+/, '"timing_ms":_');

describe("x_debias canonical", () => {
  it("gives bit-identical answers for many shuffles of the options, keyed in each client's order", async () => {
    const s = await server();
    const rng = new Mulberry32(42);
    const orders = [OPTIONS, [...OPTIONS].reverse(), ...Array.from({ length: 12 }, () => shuffled(OPTIONS, rng))];
    const responses: CapturedResponse[] = [];
    for (const order of orders) {
      const questions = { topic: choice(order), level: { type: "score", instructions: "How urgent?", criteria: ["low", "mid", "high"] } };
      responses.push(ok(await postJudgment(s, { state: STATE, questions, x_debias: "canonical" })));
    }
    const first = canonicalAnswer(responses[0], "topic");
    responses.forEach((response, i) => {
      expect(canonicalAnswer(response, "topic"), show(response, `order ${JSON.stringify(orders[i])}`)).toEqual(first);
      expect(Object.keys(response.json.answers.topic.probabilities), show(response)).toEqual(orders[i]);
      expect(response.json.answers.level, show(response)).toEqual(responses[0].json.answers.level);
      expect(response.json.x_debias, show(response)).toEqual({ mode: "canonical", presentations_read: 2, presentations: 2 });
    });
    // Without debiasing the same shuffles do move this model's answer: the test is not vacuous.
    const plain = await Promise.all(orders.slice(0, 4).map((order) => postJudgment(s, { state: STATE, questions: { topic: choice(order) } })));
    expect(new Set(plain.map((r) => JSON.stringify(canonicalAnswer(r, "topic")))).size, plain.map((r) => show(r)).join("\n")).toBeGreaterThan(1);
  });

  it("costs what the canonical order costs, with one prepare and one evaluate", async () => {
    const s = await server();
    const shuffledOrder = shuffled(OPTIONS, new Mulberry32(7));
    const debiased = ok(await postJudgment(s, { state: STATE, questions: { topic: choice(shuffledOrder) }, x_debias: "canonical" }));
    expect(calls, show(debiased)).toEqual({ prepare: 1, evaluate: 1 });
    const sorted = ok(await postJudgment(s, { state: STATE, questions: { topic: choice(canonicalOrder(OPTIONS)) } }));
    expect(debiased.json.usage, show(debiased)).toEqual(sorted.json.usage);
    expect(debiased.json.answers.topic.choice, show(debiased)).toBe(sorted.json.answers.topic.choice);
  });
});

describe("x_debias shift", () => {
  it("gives bit-identical answers for every cyclic shift of the options", async () => {
    const s = await server();
    for (const keys of [OPTIONS.slice(0, 3), OPTIONS, [...OPTIONS, "x1", "x2", "x3", "x4"]]) {
      const responses: CapturedResponse[] = [];
      for (let by = 0; by < keys.length; by++) {
        const questions = { topic: choice(rotate(keys, by)), angry: { type: "noul", instructions: "The customer is angry." } };
        responses.push(ok(await postJudgment(s, { state: STATE, questions, x_debias: "shift", include_logits: true })));
      }
      const first = canonicalAnswer(responses[0], "topic");
      const planned = Math.min(keys.length, MAX_SHIFTS) + 1;
      for (const response of responses) {
        expect(canonicalAnswer(response, "topic"), show(response)).toEqual(first);
        expect(response.json.answers.angry, show(response)).toEqual(responses[0].json.answers.angry);
        expect(response.json.usage, show(response)).toEqual(responses[0].json.usage);
        expect(response.json.x_debias, show(response)).toEqual({ mode: "shift", presentations_read: planned, presentations: planned });
      }
    }
  });

  it("reads every planned rotation when the model's position bias keeps it unsettled, billed at the hold", async () => {
    const s = await server();
    const questions = { topic: choice(OPTIONS) };
    const response = ok(await postJudgment(s, { state: STATE, questions, x_debias: "shift" }));
    const shown = presentations(questions.topic as Question, "shift");
    const whole = await tiny.prepare(served(shown));
    expect(response.json.x_debias, show(response)).toEqual({ mode: "shift", presentations_read: 8, presentations: 8 });
    expect(response.json.usage.input_tokens, show(response)).toBe(whole.inputTokens);
    // Round 1 reads two rotations (the prepared expansion is not it), then one per round.
    expect(calls, show(response)).toEqual({ prepare: 1 + 7, evaluate: 7 });
  });

  it("stops once the average settles, and bills the prefix once plus the rotations read", async () => {
    const price = 400_000;
    const s = await server({ engine: orderBlind(counted), plan: { allowanceQuestions: 0, pricePerMillion: price }, balanceMicro: 10_000_000 });
    const questions = { topic: choice(OPTIONS), angry: { type: "noul" as const, instructions: "The customer is angry." } };
    const response = ok(await postJudgment(s, { state: STATE, questions, x_debias: "shift" }));
    const { presentations_read: read, presentations: planned } = response.json.x_debias;
    expect(planned, show(response)).toBe(MAX_SHIFTS + 1);
    expect(read, `an order-blind judge settles early\n${show(response)}`).toBeLessThan(planned);
    // What the engine itself counts for what was read: the noul and the first rotations.
    const rotations = presentations(questions.topic as Question, "shift").slice(0, read - 1);
    const readPrompt = served([...rotations, questions.angry]);
    const expected = (await tiny.prepare(readPrompt)).inputTokens;
    const hold = (await tiny.prepare(served([...presentations(questions.topic as Question, "shift"), questions.angry]))).inputTokens;
    expect(response.json.usage.input_tokens, show(response)).toBe(expected);
    expect(expected).toBeLessThan(hold);

    const state = await billingState(s, s.accountId);
    const charge = state.entries.find((e) => e.kind === "charge");
    expect(charge, JSON.stringify(state)).toMatchObject({ amountMicro: -expectedCharge(expected, price), inputTokens: expected, questions: 2 });
    expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: 10_000_000 - expectedCharge(expected, price), reservedMicro: 0 });
    expect(response.headers.get("x-balance-remaining"), show(response)).toBe(expectedEuros(10_000_000 - expectedCharge(expected, price)));
  });
});

describe("through the System One gateway, which has no tokenizer", () => {
  it("shift asks the upstream once per round and bills the sum of what it reported, never above the hold", async () => {
    const upstream = await server();
    const { createSystemOneEngine } = await import("../../engine/gateways/systemone/engine.js");
    const engine = createSystemOneEngine({
      server: { url: upstream.url, key: upstream.key, timeoutMs: 10_000 },
      upstreamLimits: { options: 255, levels: 10, questions: 64 },
      maxRequestTokens: 100_000,
      contextSize: 8192,
    });
    extraEngines.push(engine);
    await engine.ready;
    const price = 50_000;
    const gateway = await server({ engine, plan: { allowanceQuestions: 0, pricePerMillion: price }, balanceMicro: 1_000_000_000 });
    const questions = { topic: choice(OPTIONS) };
    const response = ok(await postJudgment(gateway, { state: STATE, questions, x_debias: "shift" }));
    expect(response.json.x_debias, show(response)).toEqual({ mode: "shift", presentations_read: 8, presentations: 8 });

    const rounds = (await billingState(upstream, upstream.accountId)).entries.filter((e) => e.kind === "plan");
    expect(
      rounds.map((e) => e.questions),
      JSON.stringify(rounds),
    ).toEqual([2, 1, 1, 1, 1, 1, 1]);
    const reported = rounds.reduce((sum, e) => sum + e.inputTokens, 0);
    const hold = (await engine.prepare(buildPrompt(STATE, presentations(questions.topic as Question, "shift")))).inputTokens;
    expect(response.json.usage.input_tokens, show(response, `upstream reported ${reported}, hold ${hold}`)).toBe(Math.min(reported, hold));
    const charge = (await billingState(gateway, gateway.accountId)).entries.find((e) => e.kind === "charge");
    expect(charge, show(response)).toMatchObject({
      amountMicro: -expectedCharge(response.json.usage.input_tokens, price),
      inputTokens: response.json.usage.input_tokens,
    });
  });
});

describe("without debiasing", () => {
  it('x_debias "none" answers byte for byte as a request without it, with one prepare and one evaluate', async () => {
    const s = await server();
    const questions = { topic: choice(OPTIONS), urgency: { type: "score", instructions: "How urgent?", criteria: ["low", "high"] } };
    const plain = ok(await postJudgment(s, { state: STATE, questions }));
    expect(calls).toEqual({ prepare: 1, evaluate: 1 });
    const none = ok(await postJudgment(s, { state: STATE, questions, x_debias: "none" }));
    expect(withoutTiming(none), show(none)).toBe(withoutTiming(plain));
    expect(plain.json, show(plain)).not.toHaveProperty("x_debias");
    expect(calls).toEqual({ prepare: 2, evaluate: 2 });
  });

  it("JUDGE_DEBIAS applies to requests without x_debias, and x_debias overrides it", async () => {
    const plainServer = await server();
    const canonicalServer = await server({ debias: "canonical" });
    const questions = { topic: choice(shuffled(OPTIONS, new Mulberry32(3))) };
    const byDefault = ok(await postJudgment(canonicalServer, { state: STATE, questions }));
    const asked = ok(await postJudgment(plainServer, { state: STATE, questions, x_debias: "canonical" }));
    expect(withoutTiming(byDefault), show(byDefault)).toBe(withoutTiming(asked));
    expect(byDefault.json.x_debias, show(byDefault)).toEqual({ mode: "canonical", presentations_read: 1, presentations: 1 });
    const overridden = ok(await postJudgment(canonicalServer, { state: STATE, questions, x_debias: "none" }));
    const plain = ok(await postJudgment(plainServer, { state: STATE, questions }));
    expect(withoutTiming(overridden), show(overridden)).toBe(withoutTiming(plain));
  });
});

describe("refusals", () => {
  for (const value of ["shuffle", "", "SHIFT", null, true, 1, ["shift"]]) {
    it(`x_debias ${JSON.stringify(value)} is a 400 invalid_request naming the field`, async () => {
      const s = await server();
      const response = await postJudgment(s, { state: STATE, questions: { q: choice(["a", "b"]) }, x_debias: value });
      expectErrorResponse(response, 400, "invalid_request");
      expect(response.json.error, show(response)).toMatch(/^x_debias: /);
      expect(calls, "refused before the model").toEqual({ prepare: 0, evaluate: 0 });
    });
  }

  it("a question over the context budget is named by the client's id, whatever its place in the expansion", async () => {
    const small = await readyEngine({ contextSize: 512 });
    const s = await server({ engine: small });
    const long = { type: "choice", instructions: "word ".repeat(600), criteria: { a: null, b: null } };
    const response = await postJudgment(s, { state: STATE, questions: { first: choice(OPTIONS), second: long }, x_debias: "shift" });
    expectErrorResponse(response, 400, "over_budget");
    expect(response.json.error, show(response)).toMatch(/^question "second": the state and question need \d+ tokens/);
  });

  it("a request that fits once but not with every rotation says how shift grew it", async () => {
    const questions = { topic: choice(OPTIONS) };
    const once = (await tiny.prepare(served([questions.topic as Question]))).inputTokens;
    const small = await readyEngine({ maxRequestTokens: once + 50 });
    const s = await server({ engine: small });
    ok(await postJudgment(s, { state: STATE, questions }));
    ok(await postJudgment(s, { state: STATE, questions, x_debias: "canonical" }));
    const response = await postJudgment(s, { state: STATE, questions, x_debias: "shift" });
    expectErrorResponse(response, 400, "over_budget");
    expect(response.json.error, show(response)).toMatch(
      /over the limit of \d+ per request \(x_debias "shift" counts each question once per presentation: 8 for 1 question\)$/,
    );
  });
});

const extraEngines: JudgmentEngine[] = [];
afterAll(async () => {
  for (const engine of extraEngines) await engine.close();
});

/** The tiny model with other limits. */
async function readyEngine(limits: { contextSize?: number; maxRequestTokens?: number }): Promise<JudgmentEngine> {
  const { createLlamaEngine } = await import("../../engine/llama/engine.js");
  const { tinyFixturePath } = await import("../../testing/fixture.js");
  const engine = createLlamaEngine({ model: await tinyFixturePath(), modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1, ...limits });
  await engine.ready;
  extraEngines.push(engine);
  return engine;
}

/**
 * The real engine (its tokens, prefix cache and counts), made a judge with no position bias: each
 * choice option gets the log-probability the model read at the option's place in the canonical
 * order, wherever it was shown. The tiny random model's bias is so strong that shift never
 * settles on it; a judge already blind to order is what settles after two rotations.
 */
function orderBlind(engine: JudgmentEngine): JudgmentEngine {
  const shownBy = new WeakMap<PreparedJudgment, readonly Question[]>();
  return {
    modelId: engine.modelId,
    description: engine.description,
    status: () => engine.status(),
    close: async () => undefined,
    async prepare(prompt, signal) {
      const prepared = await engine.prepare(prompt, signal);
      shownBy.set(prepared, prompt.source!.questions);
      return prepared;
    },
    async evaluate(prepared, signal) {
      const result = await engine.evaluate(prepared, signal);
      const questions = shownBy.get(prepared)!;
      const labelLogProbs = result.labelLogProbs.map((lp, i) => {
        const q = questions[i];
        if (q.type !== "choice") return lp;
        const keys = Object.keys(q.criteria);
        const canonical = canonicalOrder(keys);
        return keys.map((key) => lp[canonical.indexOf(key)]);
      });
      return { ...result, labelLogProbs };
    },
  };
}
