import { describe, expect, it } from "vitest";
import { normalise } from "../judgment/answers.js";
import { buildPrompt } from "../judgment/prompt.js";
import type { Question } from "../judgment/schema.js";
import { moneyTables } from "./billing-http.js";
import { postJudgment, show } from "./http-client.js";
import { expectErrorResponse } from "./route-assertions.js";
import type { TestServer } from "./server.js";
import type { RemoteEngineOptions } from "../engine/remote/options.js";
import type { JudgmentEngine } from "../engine/types.js";
import { createVllmEngine } from "../engine/hf/vllm/engine.js";

/**
 * What the stand-in suite (testing/standins/remote-engine-suite.ts) shows for SGLang and the
 * real vLLM shows for itself: every question shape read through its /v1/completions (a choice of
 * 255 options is several reads of vLLM's 128 ids each), refusals by its own tokenizer and its own
 * context length, the model's name. Registered by real-vllm.test.ts before its last describe
 * kills the server (the lane's files share one vLLM).
 */
export interface RealVllmReadoutContext {
  engine(): JudgmentEngine;
  local(): JudgmentEngine;
  server(): TestServer;
  options(overrides?: Partial<RemoteEngineOptions>): RemoteEngineOptions;
  /** The largest |Δp| accepted between vLLM (bf16) and the in-process engine (Q4_1). */
  loose: number;
}

const STATE = { ticket: "I was charged twice. 한국어 🎉", priority: 2 };
const choice = (n: number): Question => ({
  type: "choice",
  instructions: `Pick one of ${n}.`,
  criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, i % 3 === 0 ? null : `description ${i}`])),
});
const score = (n: number): Question => ({ type: "score", instructions: "How strong is it?", criteria: Array.from({ length: n }, (_, i) => `level ${i}`) });
const NOUL: Question[] = [
  { type: "noul", instructions: "The customer was charged twice.", criteria: null },
  { type: "noul", instructions: "It is urgent.", criteria: { true: "needs action today", false: "can wait" } },
  { type: "noul", instructions: { claim: "refund due" }, criteria: { true: "a refund is owed" } },
];
const BODY = { state: "I was charged twice for one order.", questions: { q: { type: "noul", instructions: "It is about billing." } } };

export function describeReadoutOnRealVllm(context: RealVllmReadoutContext): void {
  describe("the vllm engine: every question shape, near the in-process engine on the same tokens", () => {
    const expectNear = async (questions: Question[]) => {
      const prompt = buildPrompt(STATE, questions);
      const [remotePrepared, localPrepared] = [await context.engine().prepare(prompt), await context.local().prepare(prompt)];
      expect(remotePrepared.inputTokens, "the same tokens, so the same charge").toBe(localPrepared.inputTokens);
      const remote = (await context.engine().evaluate(remotePrepared)).labelLogProbs;
      const inProcess = (await context.local().evaluate(localPrepared)).labelLogProbs;
      expect(remote.map((row) => row.length)).toEqual(inProcess.map((row) => row.length));
      const gaps = remote.map((row, q) => {
        const [p, reference] = [normalise(row, 1), normalise(inProcess[q], 1)];
        // True log-probabilities over the full vocabulary: the labels hold at most all of it.
        expect(
          row.reduce((sum, lp) => sum + Math.exp(lp), 0),
          `question ${q}`,
        ).toBeLessThanOrEqual(1 + 1e-9);
        return Math.max(...p.map((value, i) => Math.abs(value - reference[i])));
      });
      console.info(`vLLM against in-process, ${questions.length} question(s), max |Δp|: ${gaps.map((g) => g.toExponential(2)).join(", ")}`);
      for (const [q, gap] of gaps.entries()) expect(gap, `question ${q}`).toBeLessThan(context.loose);
    };
    for (const n of [2, 26, 27, 100, 255]) {
      it(`choice with ${n} options`, () => expectNear([choice(n)]), 300_000);
    }
    it("noul with and without criteria", () => expectNear(NOUL));
    it("score with every level count from 2 to 10", () => expectNear(Array.from({ length: 9 }, (_, i) => score(i + 2))), 300_000);
  });

  describe("the vllm engine: what vLLM's own tokenizer and context refuse", () => {
    it("a state over vLLM's --max-model-len (8192, ours set higher) is a 400 over_budget that charges nothing", async () => {
      const before = await moneyTables(context.server().database);
      const response = await postJudgment(context.server(), { ...BODY, state: "word ".repeat(10_000) });
      expectErrorResponse(response, 400, "over_budget");
      expect(response.json.error, show(response)).toMatch(/8192/);
      expect(await moneyTables(context.server().database), show(response)).toEqual(before);
    });

    it("text vLLM's tokenizer reads as a control token is a 400 that charges nothing", async () => {
      for (const state of ["before <|im_end|> after", "the end <|endoftext|>"]) {
        const before = await moneyTables(context.server().database);
        const response = await postJudgment(context.server(), { ...BODY, state });
        expectErrorResponse(response, 400, "invalid_request");
        expect(response.json.error, show(response)).toMatch(/a control token of the model/);
        expect(await moneyTables(context.server().database), show(response)).toEqual(before);
      }
    });

    it("reports the served model's name, or the configured id", async () => {
      const named = createVllmEngine(context.options({ modelId: "our-name" }));
      try {
        await named.ready;
        expect(named.modelId).toBe("our-name");
      } finally {
        await named.close();
      }
    });
  });
}
