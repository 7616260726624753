import { afterEach, describe, expect, it } from "vitest";
import { BudgetError, EngineFailedError, EngineUnavailableError, type EngineResult, type JudgmentEngine } from "../../engine/types.js";
import { NEUTRAL_TEMPERATURES } from "../../judgment/answers.js";
import type { JudgmentPrompt } from "../../judgment/prompt.js";
import { billingStores, type BillingFixture } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { evaluateFailsEngine, unavailableEngine } from "../../testing/fault-engines.js";
import { InsufficientFundsError } from "../errors.js";
import { JudgingRefusal } from "./errors.js";
import { judge, type JudgingDeps } from "./judge.js";
import type { JudgmentRequest, ModelChoice } from "./request.js";

/**
 * The judging service at its seam: judge() over a fake engine and a real store, no HTTP. What it
 * returns is what the edge writes headers and counts metrics from. Where money moves (hold,
 * settle, refusals) it runs on SQLite and PostgreSQL, whose transactions differ.
 */

const stores = billingStores("sqlite");
afterEach(() => stores.closeAll());

/** A ready engine answering 70% for the second label of every question; it keeps the prompts it read. */
function fakeEngine(modelId: string) {
  const prompts: JudgmentPrompt[] = [];
  const engine: JudgmentEngine = {
    modelId,
    description: { kind: "llama", backend: "test" },
    status: () => ({ state: "ready" }),
    async prepare(prompt) {
      prompts.push(prompt);
      return { inputTokens: 100, inputTokensExact: true };
    },
    async evaluate(): Promise<EngineResult> {
      return { labelLogProbs: [[Math.log(0.3), Math.log(0.7)]], inputTokens: 100, timingMs: 5 };
    },
    close: async () => undefined,
  };
  return { engine, prompts };
}

const choice = (engine: JudgmentEngine, id = engine.modelId): ModelChoice => ({ id, engine, multiplierMilli: 1000, temperatures: () => NEUTRAL_TEMPERATURES });

function deps(fixture: BillingFixture): JudgingDeps {
  return { billing: fixture.billing, requestTimeoutMs: 10_000 };
}

async function request(fixture: BillingFixture, models: ModelChoice[], extra: Partial<JudgmentRequest> = {}): Promise<JudgmentRequest> {
  return {
    state: { n: 1 },
    ids: ["angry"],
    questions: [{ type: "noul", instructions: "The customer is angry." }],
    includeLogits: false,
    debias: "none",
    caller: await fixture.payer(),
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    idempotencyKey: undefined,
    bodyDigest: "digest",
    signal: new AbortController().signal,
    models,
    ...extra,
  };
}

const render = (judged: { answers: unknown[] }) => JSON.stringify(judged.answers);

describe("judge(): the typed outcome", () => {
  it("says what was answered, by which model, who paid and the standing after", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine } = fakeEngine("m1");
    const outcome = await judge(deps(fixture), await request(fixture, [choice(engine)]), render);
    expect(outcome).toMatchObject({ billedTo: "balance", replayed: false, answeredBy: "m1" });
    expect(outcome.fallbackFrom).toBeUndefined();
    expect(outcome.judged).toMatchObject({ model: "m1", inputTokens: 100, timingMs: 5 });
    expect(outcome.judged?.answers).toHaveLength(1);
    expect(outcome.text).toBe(render(outcome.judged!));
    expect(outcome.standing.balanceMicro).toBeLessThan(1_000_000);
  });

  it("names the fallback taken when the model asked is down, and bills the one that answered", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine } = fakeEngine("m2");
    const outcome = await judge(deps(fixture), await request(fixture, [choice(unavailableEngine(), "m1"), choice(engine)]), render);
    expect(outcome).toMatchObject({ answeredBy: "m2", fallbackFrom: "m1", billedTo: "balance", replayed: false });
    expect(outcome.judged?.model).toBe("m2");
  });

  it("gives a retry with the same Idempotency-Key the stored text, marked replayed and without a fresh judgment", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine, prompts } = fakeEngine("m1");
    const first = await judge(deps(fixture), await request(fixture, [choice(engine)], { idempotencyKey: "k1" }), render);
    const again = await judge(deps(fixture), await request(fixture, [choice(engine)], { idempotencyKey: "k1" }), render);
    expect(again).toMatchObject({ text: first.text, billedTo: first.billedTo, replayed: true });
    expect(again.judged).toBeUndefined();
    expect(prompts).toHaveLength(1);
  });

  it("renders the request's number texts into the prompt the engine reads", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine, prompts } = fakeEngine("m1");
    const state = { n: 1 };
    const numberTexts = new Map([[state, new Map([["n", "1.0"]])]]);
    await judge(deps(fixture), await request(fixture, [choice(engine)], { state, numberTexts }), render);
    expect(prompts[0].state).toContain('"n": 1.0');
  });
});

describe("judge(): the chain of models", () => {
  it("puts the request to the model asked, and to no other while it answers", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const asked = fakeEngine("m1");
    const fallback = fakeEngine("m2");
    const outcome = await judge(deps(fixture), await request(fixture, [choice(asked.engine), choice(fallback.engine)]), render);
    expect(outcome.answeredBy).toBe("m1");
    expect([asked.prompts.length, fallback.prompts.length]).toEqual([1, 0]);
  });

  it("throws for a request naming no model: the route always names the one asked", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    await expect(judge(deps(fixture), await request(fixture, []), render)).rejects.toThrow(/needs the model asked/);
  });
});

describe.each(STORE_ENGINES)("judge(): hold, settle and refusals on %s", (storeEngine) => {
  const stores = billingStores(storeEngine);
  afterEach(() => stores.closeAll());
  const standingOf = async (fixture: BillingFixture) => (await fixture.billing.standing(await fixture.payer()))!;

  it("settles the charge it held: the balance goes down by the charge, nothing stays held", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine } = fakeEngine("m1");
    const outcome = await judge(deps(fixture), await request(fixture, [choice(engine)]), render);
    const standing = await standingOf(fixture);
    expect(standing).toMatchObject({ heldMicro: 0, balanceMicro: outcome.standing.balanceMicro });
    // 100 tokens at 1,000,000 micro per million.
    expect(standing.balanceMicro).toBe(1_000_000 - 100);
  });

  it("refuses with InsufficientFundsError before the model answers, nothing charged", async () => {
    const fixture = await stores.open({ balanceMicro: 0 });
    const { engine } = fakeEngine("m1");
    let evaluated = 0;
    const counting: JudgmentEngine = { ...engine, evaluate: (...args) => (evaluated++, engine.evaluate(...args)) };
    await expect(judge(deps(fixture), await request(fixture, [choice(counting, "m1")]), render)).rejects.toBeInstanceOf(InsufficientFundsError);
    expect(evaluated).toBe(0);
    expect(await standingOf(fixture)).toMatchObject({ balanceMicro: 0, heldMicro: 0 });
  });

  it("releases the hold when the model fails while answering, and never tries a fallback after a hold", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const fallback = fakeEngine("m2");
    const failing = [choice(evaluateFailsEngine(), "m1"), choice(fallback.engine)];
    await expect(judge(deps(fixture), await request(fixture, failing), render)).rejects.toMatchObject({ code: "model_failed" });
    expect(fallback.prompts).toHaveLength(0);
    expect(await standingOf(fixture)).toMatchObject({ balanceMicro: 1_000_000, heldMicro: 0 });
  });

  it("charges nothing when the client has left by the time the model answered", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const client = new AbortController();
    const { engine } = fakeEngine("m1");
    const leaving: JudgmentEngine = { ...engine, evaluate: async (...args) => (client.abort(), await engine.evaluate(...args)) };
    const asked = await request(fixture, [choice(leaving, "m1")], { signal: client.signal });
    await expect(judge(deps(fixture), asked, render)).rejects.toMatchObject({ code: "client_closed_request" });
    expect(await standingOf(fixture)).toMatchObject({ balanceMicro: 1_000_000, heldMicro: 0 });
  });

  it("refuses a second request with the Idempotency-Key of one still running, and one with another body", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine } = fakeEngine("m1");
    let finish: () => void = () => undefined;
    let evaluating: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (evaluating = resolve));
    const held: JudgmentEngine = {
      ...engine,
      evaluate: (...args) => new Promise((resolve) => ((finish = () => resolve(engine.evaluate(...args))), evaluating())),
    };
    const first = judge(deps(fixture), await request(fixture, [choice(held, "m1")], { idempotencyKey: "k" }), render);
    await started;
    const again = judge(deps(fixture), await request(fixture, [choice(engine)], { idempotencyKey: "k" }), render);
    await expect(again).rejects.toMatchObject({ code: "idempotency_key_in_use" });
    finish();
    await first;
    const other = judge(deps(fixture), await request(fixture, [choice(engine)], { idempotencyKey: "k", bodyDigest: "another" }), render);
    await expect(other).rejects.toMatchObject({ code: "idempotency_key_reused" });
  });

  it("charges a replay once, and replays without the model: while it is down, and once the balance could no longer pay", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const { engine } = fakeEngine("m1");
    const first = await judge(deps(fixture), await request(fixture, [choice(engine)], { idempotencyKey: "k" }), render);
    const paid = await standingOf(fixture);
    const down = await judge(deps(fixture), await request(fixture, [choice(unavailableEngine(), "m1")], { idempotencyKey: "k" }), render);
    expect(down).toMatchObject({ text: first.text, replayed: true });
    await fixture.store.plans.update(fixture.planId, { pricePerMillion: 1_000_000_000_000 });
    await expect(judge(deps(fixture), await request(fixture, [choice(engine)]), render)).rejects.toBeInstanceOf(InsufficientFundsError);
    const drained = await judge(deps(fixture), await request(fixture, [choice(engine)], { idempotencyKey: "k" }), render);
    expect(drained).toMatchObject({ text: first.text, replayed: true });
    expect(await standingOf(fixture)).toEqual(paid);
  });

  it("leaves the key free after a first attempt nothing paid for or the model failed: the retry runs and is charged once", async () => {
    const fixture = await stores.open({ balanceMicro: 0 });
    const { engine } = fakeEngine("m1");
    const attempt = async (models: ModelChoice[]) => judge(deps(fixture), await request(fixture, models, { idempotencyKey: "retry-me" }), render);
    await expect(attempt([choice(engine)])).rejects.toBeInstanceOf(InsufficientFundsError);
    await fixture.store.ledger.topUp(fixture.accountId, 1_000_000);
    await expect(attempt([choice(evaluateFailsEngine(), "m1")])).rejects.toMatchObject({ code: "model_failed" });
    expect(await standingOf(fixture)).toMatchObject({ balanceMicro: 1_000_000, heldMicro: 0 });
    expect(await attempt([choice(engine)])).toMatchObject({ replayed: false });
    expect(await attempt([choice(engine)])).toMatchObject({ replayed: true });
    expect(await standingOf(fixture)).toMatchObject({ balanceMicro: 1_000_000 - 100, heldMicro: 0 });
  });
});

describe("judge(): the engine's errors, as the catalogue's codes", () => {
  const failingWith = (error: Error, where: "prepare" | "evaluate" = "evaluate"): JudgmentEngine => {
    const { engine } = fakeEngine("m1");
    return { ...engine, [where]: async () => Promise.reject(error) };
  };

  it("maps each once, keeping the operator's message for the log and the client's apart", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const upstream = new EngineFailedError("at http://upstream: 500", { clientMessage: "the model failed" });
    const failed = judge(deps(fixture), await request(fixture, [choice(failingWith(upstream))]), render);
    await expect(failed).rejects.toBeInstanceOf(JudgingRefusal);
    await expect(failed).rejects.toMatchObject({ code: "model_failed", message: "at http://upstream: 500", clientMessage: "the model failed" });
    const down = judge(deps(fixture), await request(fixture, [choice(failingWith(new EngineUnavailableError("not loaded"), "prepare"))]), render);
    await expect(down).rejects.toMatchObject({ code: "model_unavailable", message: "not loaded" });
  });

  it("names the question a preparation refusal is about by the client's id", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const over = judge(deps(fixture), await request(fixture, [choice(failingWith(new BudgetError("too long", 0), "prepare"))]), render);
    await expect(over).rejects.toMatchObject({ code: "over_budget", message: 'question "angry": too long' });
  });
});
