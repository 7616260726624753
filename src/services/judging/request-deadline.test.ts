// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { afterEach, describe, expect, it } from "vitest";
import { RequestAbortedError, type EngineResult, type JudgmentEngine, type PreparedJudgment } from "../../engine/types.js";
import { judgmentBody, moneyTables } from "../../testing/billing-http.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/**
 * JUDGE_REQUEST_TIMEOUT_MS is one deadline over the whole request: preparing (tokenising, a model
 * loading) and answering share it, so a request never runs past it however its time is split.
 * Fault double: an engine whose steps take fixed times and stop when their signal aborts.
 */

interface SlowEngine extends JudgmentEngine {
  readonly seen: { prepares: number; evaluations: number; evaluationsAborted: number };
}

function slowEngine(prepareMs: number, evaluateMs: number): SlowEngine {
  const seen = { prepares: 0, evaluations: 0, evaluationsAborted: 0 };
  const wait = (ms: number, signal: AbortSignal | undefined, onAbort = () => undefined) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          onAbort();
          reject(new RequestAbortedError("aborted"));
        },
        { once: true },
      );
    });
  return {
    modelId: "slow-model",
    description: { kind: "llama", backend: "test" },
    status: () => ({ state: "ready" }),
    seen,
    async prepare(_prompt, signal): Promise<PreparedJudgment> {
      seen.prepares++;
      await wait(prepareMs, signal);
      return { inputTokens: 100, inputTokensExact: true };
    },
    async evaluate(_prepared, signal): Promise<EngineResult> {
      seen.evaluations++;
      await wait(evaluateMs, signal, () => void seen.evaluationsAborted++);
      return { labelLogProbs: [[Math.log(0.3), Math.log(0.7)]], inputTokens: 100, timingMs: evaluateMs };
    },
    close: async () => undefined,
  };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start = (engine: JudgmentEngine, requestTimeoutMs: number) =>
  startTestServer({ engine, requestTimeoutMs, plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 }, balanceMicro: 10_000 });

describe("JUDGE_REQUEST_TIMEOUT_MS over the whole request", () => {
  it("preparing and answering each within it but together past it: 502 model_timeout at the deadline, nothing charged", async () => {
    const engine = slowEngine(1_200, 1_200);
    server = await start(engine, 2_000);
    const before = await moneyTables(server.database);
    const started = performance.now();
    const response = await postJudgment(server, judgmentBody(1));
    const ms = performance.now() - started;
    expectErrorResponse(response, 502, "model_timeout");
    expect(response.json.error, show(response)).toContain("2000 ms");
    expect(engine.seen, show(response)).toEqual({ prepares: 1, evaluations: 1, evaluationsAborted: 1 });
    // Not before the deadline; the upper bound is loose for a loaded machine, yet below the 2 400 ms both steps take.
    expect(ms, show(response)).toBeGreaterThanOrEqual(1_950);
    expect(ms, show(response)).toBeLessThan(2_400 + 5_000);
    expect(await moneyTables(server.database), show(response)).toEqual(before);
  });

  it("a preparation that outlives it alone is a 502 model_timeout too, the model never asked", async () => {
    const engine = slowEngine(60_000, 0);
    server = await start(engine, 500);
    const before = await moneyTables(server.database);
    const response = await postJudgment(server, judgmentBody(1));
    expectErrorResponse(response, 502, "model_timeout");
    expect(engine.seen, show(response)).toMatchObject({ prepares: 1, evaluations: 0 });
    expect(await moneyTables(server.database), show(response)).toEqual(before);
  });

  it("a request whose steps together fit is answered and charged", async () => {
    const engine = slowEngine(200, 200);
    server = await start(engine, 10_000);
    const response = await postJudgment(server, judgmentBody(1));
    expect(response.status, show(response)).toBe(200);
    expect(engine.seen).toEqual({ prepares: 1, evaluations: 1, evaluationsAborted: 0 });
  });
});
