import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RemoteEngineOptions } from "../../engine/remote/options.js";
import { RemotePrepared } from "../../engine/remote/prepare.js";
import { UnsupportedTextError, type JudgmentEngine } from "../../engine/types.js";
import { normalise } from "../../judgment/answers.js";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Question } from "../../judgment/schema.js";
import { buildVocab } from "../../gguf/fixture-vocab.js";
import { moneyTables } from "../billing-http.js";
import { call, postJudgment, show } from "../http-client.js";
import { expectErrorResponse } from "../route-assertions.js";
import { readyTinyEngine, startTestServer, type TestServer } from "../server.js";
import { writeFixtureTokenizerConfig } from "./fixture-tokenizer-config.js";
import type { Standin, StandinFault, StandinOptions } from "./standin-server.js";

/**
 * The behaviour every HF-tokenizer server engine (vLLM, SGLang) must show, against a stand-in
 * server computing real numbers with the tiny fixture: the in-process engine's answers, refusal
 * of a misbehaving server at start-up, and a 502 that charges nothing when a reply is unusable.
 * Call it in a test file; `more` registers engine-specific tests, which run before the last
 * (which takes the stand-in down).
 */
export interface RemoteEngineKind {
  kind: "vllm" | "sglang";
  /** The request field naming the candidate ids (what a refusal names). */
  idsField: string;
  start(options: StandinOptions): Promise<Standin>;
  create(options: RemoteEngineOptions): JudgmentEngine;
  /**
   * The server itself runs in the tests (vLLM: real-vllm.test.ts with testing/vllm-readout-suite.ts):
   * what it can show for itself (its tokenizer's and context's refusals, its model's name) is not
   * asked of the stand-in. The stand-in keeps the faults, and the readout's exact parity with the
   * in-process engine over one model, which two runtimes never give.
   */
  realServer?: boolean;
}

export interface RemoteSuiteContext {
  standin: Standin;
  engine: JudgmentEngine;
  options(overrides?: EngineOverrides): RemoteEngineOptions;
}

type EngineOverrides = Partial<Omit<RemoteEngineOptions, "server">> & { server?: Partial<RemoteEngineOptions["server"]> };

const KEY = "standin-key-3f9a0c";
const STATE = { ticket: "I was charged twice. 한국어 🎉", priority: 2 };
/**
 * Same model, same llama.cpp, same batching rule: the probabilities match the in-process
 * engine's to float64 rounding (measured ≤ 1e-16; log-probabilities to a per-question constant
 * within 2e-14).
 */
const PARITY = 1e-12;
/** Paid from the balance, so a charge shows in the money tables. */
const PAID = { plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 1_000_000 };

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

export function describeRemoteEngine(spec: RemoteEngineKind, more: (context: RemoteSuiteContext) => void = () => undefined): void {
  const context = {} as RemoteSuiteContext;
  /** A test of what the server shows for itself: registered only where the server is a stand-in. */
  const onlyStandin = (name: string, test: () => Promise<void>) => {
    if (!spec.realServer) it(name, test);
  };
  let local: JudgmentEngine;
  let configPath: string;
  let closed = false;

  beforeAll(async () => {
    context.standin = await spec.start({ apiKey: KEY, slowMs: 1_500 });
    configPath = await writeFixtureTokenizerConfig();
    context.options = (overrides = {}) => {
      const { server, ...rest } = overrides;
      return {
        server: { url: context.standin.url, key: KEY, timeoutMs: 30_000, ...server },
        tokenizerConfigPath: configPath,
        upstreamLimits: { options: 26, levels: 10, questions: 16 },
        maxRequestTokens: 100_000,
        contextSize: 8192,
        ...rest,
      };
    };
    local = await readyTinyEngine();
    context.engine = spec.create(context.options());
    await context.engine.ready;
    expect(await context.engine.status(), "the engine on a well-behaved stand-in").toEqual({ state: "ready" });
  });
  afterEach(() => {
    if (context.standin) context.standin.fault = undefined;
  });
  afterAll(async () => {
    await context.engine?.close();
    await local?.close();
    if (!closed) await context.standin?.close();
  });

  /** With one engine at a time on the stand-in, closed afterwards however the test ends. */
  const withEngine = async (overrides: EngineOverrides, use: (engine: JudgmentEngine) => Promise<void>) => {
    const engine = spec.create(context.options(overrides));
    try {
      await use(engine);
    } finally {
      await engine.close();
    }
  };

  describe(`${spec.kind}: answers equal the in-process engine's on the same model`, () => {
    const expectParity = async (questions: Question[]) => {
      const prompt = buildPrompt(STATE, questions);
      const [remotePrepared, localPrepared] = [await context.engine.prepare(prompt), await local.prepare(prompt)];
      expect(remotePrepared.inputTokens, "the same tokens, so the same charge").toBe(localPrepared.inputTokens);
      const remote = (await context.engine.evaluate(remotePrepared)).labelLogProbs;
      const inProcess = (await local.evaluate(localPrepared)).labelLogProbs;
      expect(remote.length).toBe(questions.length);
      remote.forEach((row, q) => {
        const [p, reference] = [normalise(row, 1), normalise(inProcess[q], 1)];
        const worst = Math.max(...p.map((value, i) => Math.abs(value - reference[i])));
        const message = `question ${q}: max |remote − in-process| = ${worst}\nremote ${JSON.stringify(p)}\nin-process ${JSON.stringify(reference)}`;
        expect(worst, message).toBeLessThan(PARITY);
        // The in-process root values are shifted by the root's normaliser; nothing else differs.
        const shifts = row.map((lp, i) => lp - inProcess[q][i]);
        expect(Math.max(...shifts) - Math.min(...shifts), `${message}\nshifts ${JSON.stringify(shifts)}`).toBeLessThan(1e-9);
        // The remote values are true log-probabilities.
        const mass = row.reduce((sum, lp) => sum + Math.exp(lp), 0);
        expect(mass, `${message}\nremote log-probabilities ${JSON.stringify(row)}`).toBeLessThanOrEqual(1 + 1e-9);
      });
    };
    for (const n of [2, 26, 27, 100, 255]) {
      it(`choice with ${n} options`, () => expectParity([choice(n)]), 60_000);
    }
    it("noul with and without criteria", () => expectParity(NOUL));
    it("score with every level count from 2 to 10", () => expectParity(Array.from({ length: 9 }, (_, i) => score(i + 2))));
  });

  describe(`${spec.kind}: refuses at start-up a server whose numbers it cannot trust`, () => {
    const cases: [StandinFault, RegExp][] = [
      ["ignores-ids", new RegExp(`omitted requested token.*does not honour ${spec.idsField}`)],
      ["partial", /omitted requested token/],
      ["extra-id", /returned token\(s\) \d+ it was not asked for/],
      ["invalid-value", /returned 0\.5 as the log-probability/],
      ["processed-temperature", /at temperature 0 and .* at temperature 1: its logprobs are scaled by a temperature/],
      ["processed-renormalised", new RegExp(`renormalises over the ids in ${spec.idsField}`)],
      ["not-json", /answered 200 with a body that is not JSON/],
      ["wrong-shape", /answered with no /],
      ["failing", /answered 500/],
    ];
    for (const [fault, because] of cases) {
      it(`${fault}: status failed naming the server and the problem, /health 503`, async () => {
        context.standin.fault = fault;
        await withEngine({}, async (engine) => {
          await engine.ready;
          const status = await engine.status();
          expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringContaining(`${spec.kind} at ${context.standin.url}`) });
          expect(status.state === "failed" && status.detail, JSON.stringify(status)).toMatch(because);
          expect(JSON.stringify(status), "the key never shows").not.toContain(KEY);
          const server = await startTestServer({ engine });
          try {
            const health = await call(server.url, "/health");
            expectErrorResponse(health, 503, "service_unavailable");
            expect(health.json.status, show(health)).toBe("failed");
            expect(health.json.error, show(health)).toMatch(because);
          } finally {
            await server.close();
          }
        });
      });
    }

    const refusals: [string, EngineOverrides, RegExp][] = [
      ["a wrong API key", { server: { key: "not-the-key" } }, /\/v1\/models answered 401/],
      ["a model the server does not serve", { upstreamModel: "other-model" }, /does not serve "other-model" \(it serves "tiny-fixture"\)/],
    ];
    for (const [what, overrides, because] of refusals) {
      it(`${what}: status failed with the reason`, () =>
        withEngine(overrides, async (engine) => {
          await engine.ready;
          const status = await engine.status();
          expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringMatching(because) });
          expect(JSON.stringify(status)).not.toContain("not-the-key");
        }));
    }
  });

  describe(`${spec.kind}: waits for a server that is loading or away`, () => {
    const waitForStatus = async (engine: JudgmentEngine, state: string, because: RegExp) => {
      const deadline = performance.now() + 10_000;
      let status = await engine.status();
      while (!(status.state === state && "detail" in status && because.test(status.detail)) && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = await engine.status();
      }
      expect(status, JSON.stringify(status)).toMatchObject({ state, detail: expect.stringMatching(because) });
    };

    it("loading (503) until the server is up, then ready", () =>
      withEngine({}, async (engine) => {
        context.standin.fault = "loading";
        await waitForStatus(engine, "loading", /\/health answered 503/);
        context.standin.fault = undefined;
        await engine.ready;
        expect(await engine.status()).toEqual({ state: "ready" });
      }));

    it("loading while the probe times out, naming the timeout", async () => {
      context.standin.fault = "slow";
      await withEngine({ server: { timeoutMs: 300 } }, (engine) => waitForStatus(engine, "loading", /did not answer within 300 ms/));
    });

    it("loading while nothing listens at the URL", () =>
      withEngine({ server: { url: "http://127.0.0.1:9" } }, (engine) => waitForStatus(engine, "loading", /cannot reach http:\/\/127\.0\.0\.1:9\/health/)));
  });

  describe(`${spec.kind}: an unusable reply is a 502 that charges nothing`, () => {
    let server: TestServer;
    let quick: JudgmentEngine;
    let quickServer: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ engine: context.engine, ...PAID });
      quick = spec.create(context.options({ server: { timeoutMs: 500 } }));
      await quick.ready;
      quickServer = await startTestServer({ engine: quick, ...PAID });
    });
    afterAll(async () => {
      await server?.close();
      await quickServer?.close();
      await quick?.close();
    });

    const cases: [StandinFault, string][] = [
      ["failing", "model_failed"],
      ["not-json", "model_failed"],
      ["wrong-shape", "model_failed"],
      ["partial", "model_failed"],
      ["extra-id", "model_failed"],
      ["invalid-value", "model_failed"],
      ["ignores-ids", "model_failed"],
      ["loading", "model_unavailable"],
      ["slow", "model_unavailable"],
    ];
    for (const [fault, code] of cases) {
      it(`${fault}: 502 ${code}`, async () => {
        const target = fault === "slow" ? quickServer : server;
        const before = await moneyTables(target.database);
        context.standin.fault = fault;
        const response = await postJudgment(target, BODY);
        context.standin.fault = undefined;
        expectErrorResponse(response, 502, code);
        expect(response.json.error, show(response)).toContain(context.standin.url);
        expect(await moneyTables(target.database), show(response)).toEqual(before);
        expect(await target.services.ledger.check()).toMatchObject({ ok: true });
      });
    }

    it("once the server behaves again, the same request is answered and charged", async () => {
      const before = await moneyTables(server.database);
      const response = await postJudgment(server, BODY);
      expect(response.status, show(response)).toBe(200);
      expect(await moneyTables(server.database), show(response)).not.toEqual(before);
    });

    onlyStandin("a state over the server's context is a 400 over_budget before anything is generated", async () => {
      context.standin.calls.length = 0;
      const response = await postJudgment(server, { ...BODY, state: "word ".repeat(10_000) });
      expectErrorResponse(response, 400, "over_budget");
      expect(
        context.standin.calls.filter((c) => c.path !== "/tokenize"),
        show(response),
      ).toEqual([]);
    });

    onlyStandin("text the server's tokenizer reads as a control token is a 400 that charges nothing", async () => {
      for (const state of ["before <|im_end|> after", "a <s> inside"]) {
        const before = await moneyTables(server.database);
        const response = await postJudgment(server, { ...BODY, state });
        expectErrorResponse(response, 400, "invalid_request");
        expect(response.json.error, show(response)).toMatch(/a control token of the model/);
        expect(await moneyTables(server.database), show(response)).toEqual(before);
      }
    });
  });

  describe(`${spec.kind}: without a tokenizer config`, () => {
    it("renders ChatML without BOS and refuses ChatML-like control text", () =>
      withEngine({ tokenizerConfigPath: undefined }, async (engine) => {
        await engine.ready;
        const prepared = await engine.prepare(buildPrompt(STATE, [choice(3)]));
        expect(prepared).toBeInstanceOf(RemotePrepared);
        const { ids } = buildVocab();
        expect((prepared as RemotePrepared).prefixTokens.slice(0, 2)).toEqual([ids.imStart, ...context.standin.oracle.tokenize("system", false)]);
        await expect(engine.prepare(buildPrompt("the end <|endoftext|>", [choice(3)]))).rejects.toThrow(UnsupportedTextError);
      }));
  });

  more(context);

  describe(`${spec.kind}: identity and status`, () => {
    it("describes itself by kind and URL and reports the served model's name (or the configured id)", async () => {
      expect(context.engine.description).toMatchObject({
        kind: spec.kind,
        backend: context.standin.url,
        exactness: { mode: "strict", bound: 1e-9, measured: 0 },
      });
      expect(context.engine.modelId).toBe("tiny-fixture");
      if (spec.realServer) return;
      await withEngine({ modelId: "our-name" }, async (engine) => {
        await engine.ready;
        expect(engine.modelId).toBe("our-name");
      });
    });

    it("asks the server each time: loading while it answers 503, ready again after", async () => {
      context.standin.fault = "loading";
      expect(await context.engine.status()).toMatchObject({ state: "loading", detail: expect.stringContaining("503") });
      context.standin.fault = undefined;
      expect(await context.engine.status()).toEqual({ state: "ready" });
    });

    // Last: the stand-in is gone afterwards.
    it("failed, naming the URL, once the server cannot be reached", async () => {
      await context.standin.close();
      closed = true;
      const status = await context.engine.status();
      expect(status, JSON.stringify(status)).toMatchObject({ state: "failed", detail: expect.stringContaining(`cannot reach ${context.standin.url}/health`) });
    });
  });
}
