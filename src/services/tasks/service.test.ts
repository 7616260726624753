import { afterEach, describe, expect, it } from "vitest";
import { billingStores, type BillingFixture } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { InsufficientFundsError } from "../errors.js";
import { judge } from "../judging/judge.js";
import type { JudgmentRequest } from "../judging/request.js";
import { parseTaskJson } from "./definition.js";
import { createTasksService, type TasksService } from "./service.js";
import { agreesRequest, informativeEngine, modelChoice, yesNoTask } from "./test-helpers.js";

/**
 * The tasks service at its seam, over a fake engine whose readout knows nothing and whose hidden
 * state knows the answer, and a real store: a fit is billed like the requests it makes, leaves a
 * version whose head answers what the readout could not, and a request names the task.
 */
describe.each(STORE_ENGINES)("tasks service on %s", (engine) => {
  const stores = billingStores(engine);
  const services: TasksService[] = [];
  afterEach(async () => {
    for (const s of services.splice(0)) await s.close();
    await stores.closeAll();
  });

  async function setup(balanceMicro = 1_000_000) {
    // A plan without allowance: the balance pays for every token, so charges are visible.
    const fixture = await stores.open({ balanceMicro, plan: { allowanceQuestions: 0, pricePerMillion: 1_000_000 } });
    const judging = { billing: fixture.billing, requestTimeoutMs: 10_000 };
    const tasks = createTasksService({ tasks: fixture.store.tasks, judging, maxTasksPerAccount: 5 });
    services.push(tasks);
    return { fixture, judging, tasks };
  }

  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 500 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  };

  async function ask(fixture: BillingFixture, judging: { billing: BillingFixture["billing"]; requestTimeoutMs: number }, extra: Partial<JudgmentRequest>) {
    return judge(judging, agreesRequest(await fixture.payer(), extra), (judged) => JSON.stringify(judged.answers));
  }

  it("fits in the background, billed per example like requests, and its head answers what the readout cannot", async () => {
    const { fixture, judging, tasks } = await setup();
    const { engine: fake } = informativeEngine();
    const model = modelChoice(fake);
    const task = await tasks.create(fixture.accountId, parseTaskJson(yesNoTask("agree", 60), 16));
    const fit = await tasks.fit(task, model, await fixture.payer(), { seed: 1 });
    expect(fit).toMatchObject({ state: "running", total: 60 });
    await until(async () => (await tasks.getFit(task, fit.id))?.state !== "running");
    const done = await tasks.getFit(task, fit.id);
    expect(done).toMatchObject({ state: "succeeded", version: 1, done: 60, inputTokens: 600 });
    // 10 tokens per example at €1 per million tokens: 10 micro-euros each.
    expect(done?.chargedMicro).toBe(600);
    expect((await fixture.store.accounts.get(fixture.accountId))?.balanceMicro).toBe(1_000_000 - 600);
    expect(await fixture.store.ledger.check()).toMatchObject({ ok: true });

    const selection = (await tasks.selection(fixture.accountId, "agree"))!;
    const outcome = await ask(fixture, judging, { models: [model], task: selection });
    const [answer] = JSON.parse(outcome.text);
    expect(answer.x_task).toEqual({ id: task.record.id, version: 1, head: "level2" });
    expect(answer.noul).toBeGreaterThan(0.9);
    const plain = JSON.parse((await ask(fixture, judging, { models: [model] })).text)[0];
    expect(plain.noul).toBeCloseTo(0.5, 6);
  });

  it("answers plainly, saying why, a question that is not the task's, and any question on a model the task was not fitted on", async () => {
    const { fixture, judging, tasks } = await setup();
    const { engine: fake } = informativeEngine();
    const task = await tasks.create(fixture.accountId, parseTaskJson(yesNoTask("agree", 20), 16));
    const fit = await tasks.fit(task, modelChoice(fake), await fixture.payer());
    await until(async () => (await tasks.getFit(task, fit.id))?.state !== "running");
    const selection = (await tasks.selection(fixture.accountId, task.record.id))!;
    const other = await ask(fixture, judging, { models: [modelChoice(fake)], task: selection, questions: [{ type: "noul", instructions: "Something else." }] });
    expect(JSON.parse(other.text)[0].x_task).toMatchObject({ version: null, reason: expect.stringMatching(/not one of the task's questions/) });
    const moved = await ask(fixture, judging, { models: [modelChoice(fake, "fake:other-weights")], task: selection });
    expect(JSON.parse(moved.text)[0].x_task).toMatchObject({ version: null, reason: expect.stringMatching(/fit it again/) });
  });

  it("reads no hidden states for a fit without level 2, and its version never answers with level 2", async () => {
    const { fixture, tasks } = await setup();
    const informative = informativeEngine();
    const task = await tasks.create(fixture.accountId, parseTaskJson(yesNoTask("agree", 20), 16));
    const fit = await tasks.fit(task, modelChoice(informative.engine), await fixture.payer(), { heads: ["level1"] });
    await until(async () => (await tasks.getFit(task, fit.id))?.state !== "running");
    expect(await tasks.getFit(task, fit.id)).toMatchObject({ state: "succeeded", done: 20 });
    expect(informative.reads()).toBe(20);
    expect(informative.featureReads()).toBe(0);
    const [version] = await tasks.versions(task);
    expect(JSON.parse(version.report).questions.agrees).toMatchObject({ level2Omitted: "not among the heads asked for" });
    expect(JSON.parse(version.heads).agrees.kind).not.toBe("level2");
  });

  it("refuses a fit whose first example cannot be paid with 402, leaving no fit and charging nothing", async () => {
    const { fixture, tasks } = await setup(5);
    const { engine: fake } = informativeEngine();
    const task = await tasks.create(fixture.accountId, parseTaskJson(yesNoTask("agree", 10), 16));
    await expect(tasks.fit(task, modelChoice(fake), await fixture.payer())).rejects.toBeInstanceOf(InsufficientFundsError);
    expect(await tasks.fits(task)).toEqual([]);
    expect((await fixture.store.accounts.get(fixture.accountId))?.balanceMicro).toBe(5);
  });

  it("keeps money exact when fits of several tasks race for one balance: each example paid once, the fits that ran out failed", async () => {
    // 3 fits × 20 examples × 10 µ€ = 600 µ€ wanted; 450 µ€ there.
    const { fixture, tasks } = await setup(450);
    const { engine: fake } = informativeEngine();
    const all = await Promise.all([0, 1, 2].map((i) => tasks.create(fixture.accountId, parseTaskJson(yesNoTask(`t${i}`, 20), 16))));
    const payer = await fixture.payer();
    const fits = await Promise.all(all.map((task) => tasks.fit(task, modelChoice(fake), payer)));
    await until(async () => (await Promise.all(fits.map((f, i) => tasks.getFit(all[i], f.id)))).every((f) => f?.state !== "running"));
    const ended = await Promise.all(fits.map((f, i) => tasks.getFit(all[i], f.id)));
    const charged = ended.reduce((sum, f) => sum + f!.chargedMicro, 0);
    const balance = (await fixture.store.accounts.get(fixture.accountId))!.balanceMicro;
    expect(balance + charged).toBe(450);
    expect(balance).toBeLessThan(10);
    expect(ended.filter((f) => f!.state === "failed").every((f) => f!.error?.code === "insufficient_funds")).toBe(true);
    expect(ended.some((f) => f!.state === "failed")).toBe(true);
    expect(await fixture.store.ledger.check()).toMatchObject({ ok: true });
  });
});
