import { afterEach, describe, expect, it } from "vitest";
import { billingStores, type BillingFixture } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { createBillingService } from "../billing.js";
import { judge } from "../judging/judge.js";
import type { JudgingDeps } from "../judging/judge.js";
import { parseTaskJson } from "./definition.js";
import { createTasksService, type TasksService } from "./service.js";
import { agreesRequest, informativeEngine, modelChoice, yesNoTask } from "./test-helpers.js";

/**
 * Several instances on one database (two stores on one SQLite file or PostgreSQL schema, each
 * with its own tasks service): a version fitted on one is served the same by the other, an
 * instance that stops fails its own fits cleanly, and one that died has its fit failed by
 * another's sweep, keeping what the read examples cost and making no version.
 */
describe.each(STORE_ENGINES)("tasks on two instances of %s", (engine) => {
  const stores = billingStores(engine);
  const services: TasksService[] = [];
  afterEach(async () => {
    for (const s of services.splice(0)) await s.close();
    await stores.closeAll();
  });

  async function instance(fixture: BillingFixture, first: boolean) {
    const store = first ? fixture.store : await fixture.database.store({ now: fixture.clock.now });
    const judging: JudgingDeps = { billing: first ? fixture.billing : createBillingService(store, fixture.clock.now), requestTimeoutMs: 10_000 };
    const tasks = createTasksService({ tasks: store.tasks, judging, maxTasksPerAccount: 5 });
    services.push(tasks);
    return { store, judging, tasks };
  }

  const until = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 500 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
  };

  async function answerOn(
    fixture: BillingFixture,
    judging: JudgingDeps,
    selection: Awaited<ReturnType<TasksService["selection"]>>,
    model: ReturnType<typeof modelChoice>,
  ) {
    const outcome = await judge(judging, agreesRequest(await fixture.payer(), { models: [model], task: selection }), (judged) =>
      JSON.stringify(judged.answers),
    );
    return JSON.parse(outcome.text)[0];
  }

  it("serves the version fitted on one instance, the same to the last bit, from the other", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const a = await instance(fixture, true);
    const b = await instance(fixture, false);
    const model = modelChoice(informativeEngine().engine);
    const task = await a.tasks.create(fixture.accountId, parseTaskJson(yesNoTask("agree", 40), 16));
    const fit = await a.tasks.fit(task, model, await fixture.payer(), { seed: 3 });
    await until(async () => (await b.tasks.getFit(task, fit.id))?.state !== "running");
    const fromA = (await a.tasks.selection(fixture.accountId, "agree"))!;
    const fromB = (await b.tasks.selection(fixture.accountId, task.record.id))!;
    expect(fromB).toEqual(fromA);
    expect(fromB.versions.map((v) => v.version)).toEqual([1]);
    const answerA = await answerOn(fixture, a.judging, fromA, model);
    const answerB = await answerOn(fixture, b.judging, fromB, model);
    expect(answerB).toEqual(answerA);
    expect(answerB.x_task).toEqual({ id: task.record.id, version: 1, head: "level2" });
  });

  it("fails the fit of an instance that stops, and another instance's sweep fails the fit of one that died; what was read stays paid, no version is made", async () => {
    const fixture = await stores.open({ balanceMicro: 1_000_000 });
    const a = await instance(fixture, true);
    const b = await instance(fixture, false);
    // An engine that stalls after its first two readings, as a process that died would.
    const { engine: fake } = informativeEngine();
    let readings = 0;
    let release = () => {};
    const stalled = new Promise<void>((resolve) => (release = resolve));
    const evaluate = fake.evaluate.bind(fake);
    fake.evaluate = async (prepared, signal) => {
      if (++readings > 2) await stalled;
      return evaluate(prepared, signal);
    };
    const model = modelChoice(fake);
    const task = await a.tasks.create(fixture.accountId, parseTaskJson(yesNoTask("agree", 10), 16));
    const fit = await a.tasks.fit(task, model, await fixture.payer());
    await until(async () => (await b.tasks.getFit(task, fit.id))!.done >= 2);
    expect(await b.tasks.sweep(60_000, Date.now() + 3_600_000)).toBe(1);
    expect((await b.tasks.getFit(task, fit.id))!).toMatchObject({ state: "failed", done: 2 });
    release();
    // The reading under way when the sweep came is paid and recorded; the fit reads no further.
    await until(async () => (await b.tasks.getFit(task, fit.id))!.done === 3);
    await a.tasks.close();
    const after = (await b.tasks.getFit(task, fit.id))!;
    expect(after).toMatchObject({ state: "failed", done: 3, chargedMicro: 30 });
    expect(await a.tasks.versions(task)).toEqual([]);
    expect((await fixture.store.accounts.get(fixture.accountId))!.balanceMicro).toBe(1_000_000 - 30);
    expect(await fixture.store.ledger.check()).toMatchObject({ ok: true });

    // A fit whose instance stops is failed as interrupted, and can be started again elsewhere.
    const again = await b.tasks.fit(task, modelChoice(informativeEngine().engine), await fixture.payer());
    await b.tasks.close();
    const interrupted = (await fixture.store.tasks.getFit(task.record.id, again.id))!;
    expect(interrupted).toMatchObject({ state: "failed", error: { code: "fit_interrupted" } });
    expect(await fixture.store.tasks.versions(task.record.id)).toEqual([]);
  });
});
