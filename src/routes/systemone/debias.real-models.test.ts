import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLlamaEngine, type LlamaEngine } from "../../engine/llama/engine.js";
import { Mulberry32 } from "../../gguf/prng.js";
import { canonicalOrder } from "../../judgment/debias.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { availableRealModels } from "../../testing/real-models.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/**
 * `x_debias` on real weights, through POST /v1/systemone: the flip rate of the top answer when
 * the options of 8 four-option choice questions are reordered (one cyclic shift, one shuffle).
 * What holds, and is asserted: `canonical` never flips and its probabilities are bit-identical;
 * `shift` is bit-identical under the cyclic shift. The rates of `none`, and of `shift` under a
 * shuffle, are measured and printed (docs/measurements/2026-11-28-debias-real-models.md).
 */

const STATE = {
  ticket: "Hello, I was charged twice for my monthly subscription and the app keeps crashing when I open my invoices. Please fix this today.",
  customer: { plan: "pro", since: "2021-03-04" },
};
const QUESTIONS: Array<[string, string, string[]]> = [
  ["topic", "What is the ticket mainly about?", ["billing", "shipping", "password reset", "feature request"]],
  ["sentiment", "How does the customer feel?", ["happy", "neutral", "frustrated", "confused"]],
  ["team", "Which team should handle it?", ["finance", "logistics", "security", "marketing"]],
  ["urgency", "How urgent is it?", ["today", "this week", "this month", "never"]],
  ["product", "Which part of the product is involved?", ["invoices", "the warehouse", "the login page", "the blog"]],
  ["language", "Which language is the ticket written in?", ["English", "German", "Korean", "Spanish"]],
  ["channel", "What kind of text is it?", ["a support ticket", "a poem", "a recipe", "a news article"]],
  ["action", "What should happen next?", ["refund the duplicate charge", "ship a parcel", "delete the account", "nothing"]],
];

const choice = (keys: readonly string[], instructions: string) => ({
  type: "choice" as const,
  instructions,
  criteria: Object.fromEntries(keys.map((k) => [k, null])),
});
const rotate = <T>(xs: readonly T[], by: number) => xs.map((_, i) => xs[(i + by) % xs.length]);
function shuffled<T>(xs: readonly T[], rng: Mulberry32): T[] {
  for (;;) {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    // A shuffle that is a rotation would measure the cyclic case twice.
    if (!xs.some((_, by) => rotate(xs, by).every((x, i) => x === out[i]))) return out;
  }
}

type Order = "as listed" | "cyclic shift" | "shuffle";
const rng = new Mulberry32(18);
const ORDERS: Record<Order, string[][]> = {
  "as listed": QUESTIONS.map(([, , keys]) => keys),
  "cyclic shift": QUESTIONS.map(([, , keys], i) => rotate(keys, 1 + (i % 3))),
  shuffle: QUESTIONS.map(([, , keys]) => shuffled(keys, rng)),
};

const models = availableRealModels();

describe.skipIf(models.length === 0).each(models)("x_debias on $name", ({ name, file }) => {
  let engine: LlamaEngine;
  let server: TestServer;
  const figures: string[] = [];
  beforeAll(async () => {
    engine = createLlamaEngine({ model: file, modelsDir: ".", contextSize: 8192, maxRequestTokens: 100_000, threads: 1, gpu: "off" });
    await engine.ready;
    server = await startTestServer({ engine, requestTimeoutMs: 600_000 });
  });
  afterAll(async () => {
    console.log(`${name}: top-answer flip rate under reordering (8 choice questions of 4 options):\n  ${figures.join("\n  ")}`);
    await server?.close();
    await engine?.close();
  });

  async function ask(mode: string, order: Order): Promise<CapturedResponse> {
    const questions = Object.fromEntries(QUESTIONS.map(([id, text], i) => [id, choice(ORDERS[order][i], text)]));
    const response = await postJudgment(server, { state: STATE, questions, x_debias: mode });
    expect(response.status, show(response)).toBe(200);
    return response;
  }
  /** Per question: the probabilities in the canonical key order (equal means bit-identical). */
  const canonical = (response: CapturedResponse) =>
    QUESTIONS.map(([id]) => {
      const p = response.json.answers[id].probabilities as Record<string, number>;
      return canonicalOrder(Object.keys(p)).map((k) => [k, p[k]]);
    });
  const flips = (base: CapturedResponse, other: CapturedResponse) =>
    QUESTIONS.filter(([id]) => base.json.answers[id].choice !== other.json.answers[id].choice).length;

  for (const mode of ["none", "canonical", "shift"] as const) {
    it(`${mode}: ${mode === "none" ? "measured" : mode === "canonical" ? "no flip, identical probabilities" : "identical under a cyclic shift"}`, async () => {
      const base = await ask(mode, "as listed");
      const cyclic = await ask(mode, "cyclic shift");
      const shuffle = await ask(mode, "shuffle");
      const rate = (n: number) => `${n}/${QUESTIONS.length}`;
      figures.push(`${mode}: cyclic shift ${rate(flips(base, cyclic))}, shuffle ${rate(flips(base, shuffle))}, input tokens ${base.json.usage.input_tokens}`);
      const context = [base, cyclic, shuffle].map((r) => show(r)).join("\n");
      if (mode === "canonical") {
        expect(canonical(cyclic), context).toEqual(canonical(base));
        expect(canonical(shuffle), context).toEqual(canonical(base));
      }
      if (mode === "shift") expect(canonical(cyclic), context).toEqual(canonical(base));
      // Every answer is a distribution over the question's own options.
      for (const response of [base, cyclic, shuffle]) {
        for (const [id, , keys] of QUESTIONS) {
          const p = response.json.answers[id].probabilities as Record<string, number>;
          expect(Object.keys(p).sort(), show(response)).toEqual([...keys].sort());
          expect(Math.abs(Object.values(p).reduce((a, b) => a + b, 0) - 1), show(response)).toBeLessThan(1e-9);
        }
      }
    }, 600_000);
  }
});
