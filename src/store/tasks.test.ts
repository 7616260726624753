import { afterEach, describe, expect, it } from "vitest";
import { billingStores } from "../testing/billing-store.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { isStoreError } from "../record-errors.js";
import { tamper } from "./test-helpers.js";

/**
 * The tasks repository on both engines: all-or-nothing creation, the quota counted exactly under
 * concurrency, one running fit per task, versions numbered in order and immutable, and another
 * account's task never found.
 */
describe.each(STORE_ENGINES)("tasks on %s", (engine) => {
  const stores = billingStores(engine);
  afterEach(() => stores.closeAll());

  const newTask = (accountId: string, name: string, examples = ['{"state":"a","gold":{"q":true}}'], maxTasks = 10) => ({
    accountId,
    name,
    definition: '{"questions":{}}',
    examples,
    maxTasks,
  });

  it("creates a task with its examples in order, finds it by id or name in its account only", async () => {
    const { store, accountId } = await stores.open();
    const examples = Array.from({ length: 450 }, (_, i) => JSON.stringify({ state: `s${i}`, gold: { q: i % 2 === 0 } }));
    const task = await store.tasks.create(newTask(accountId, "sentiment", examples));
    expect(task).toMatchObject({ name: "sentiment", examples: 450, accountId });
    expect(await store.tasks.examples(task.id)).toEqual(examples);
    expect((await store.tasks.get(accountId, task.id))?.id).toBe(task.id);
    expect((await store.tasks.get(accountId, "sentiment"))?.id).toBe(task.id);
    const other = await store.accounts.create({ name: "other", plan: (await store.accounts.get(accountId))!.planId });
    expect(await store.tasks.get(other.id, task.id)).toBeUndefined();
    expect(await store.tasks.get(other.id, "sentiment")).toBeUndefined();
    await expect(store.tasks.create(newTask(accountId, "sentiment"))).rejects.toSatisfy((e) => isStoreError(e, "task_exists"));
    expect(await store.tasks.list(accountId)).toHaveLength(1);
  });

  it("counts the quota exactly when creates race", async () => {
    const { store, accountId } = await stores.open();
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => store.tasks.create(newTask(accountId, `t${i}`, undefined, 5))));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(5);
    for (const o of outcomes) if (o.status === "rejected") expect(isStoreError(o.reason, "task_quota_exceeded")).toBe(true);
    expect(await store.tasks.list(accountId)).toHaveLength(5);
  });

  it("runs one fit per task at a time, numbers versions in order, and keeps them immutable", async () => {
    const { store, accountId, database } = await stores.open();
    const task = await store.tasks.create(newTask(accountId, "t"));
    const start = () => store.tasks.startFit({ taskId: task.id, accountId, model: "m", total: 1, owner: "i1" });
    const racing = await Promise.allSettled([start(), start(), start()]);
    expect(racing.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const fit = (racing.find((o) => o.status === "fulfilled") as PromiseFulfilledResult<Awaited<ReturnType<typeof start>>>).value;
    await expect(store.tasks.remove(accountId, task.id)).rejects.toSatisfy((e) => isStoreError(e, "fit_in_progress"));
    expect(await store.tasks.progress(fit.id, { done: 1, inputTokens: 40, chargedMicro: 7 })).toBe(true);
    const v1 = await store.tasks.succeed(fit.id, { model: "m", binding: "{}", heads: "[]", report: "{}" });
    expect(v1?.version).toBe(1);
    expect(await store.tasks.succeed(fit.id, { model: "m", binding: "{}", heads: "[]", report: "{}" })).toBeUndefined();
    expect(await store.tasks.getFit(task.id, fit.id)).toMatchObject({ state: "succeeded", version: 1, done: 1, inputTokens: 40, chargedMicro: 7 });
    const second = await start();
    expect((await store.tasks.succeed(second.id, { model: "m", binding: "{}", heads: "[1]", report: "{}" }))?.version).toBe(2);
    expect((await store.tasks.versions(task.id)).map((v) => v.version)).toEqual([2, 1]);
    expect((await store.tasks.versions(task.id, 1)).map((v) => v.version)).toEqual([2]);
    await expect(tamper(database, "UPDATE task_versions SET heads = 'x'")).rejects.toThrow(/immutable/);
    expect((await store.tasks.version(task.id, 1))?.heads).toBe("[]");
  });

  it("fails a fit whose owner went quiet, and a failed fit takes no progress or version", async () => {
    const { store, accountId, clock } = await stores.open();
    const task = await store.tasks.create(newTask(accountId, "t"));
    const fit = await store.tasks.startFit({ taskId: task.id, accountId, model: "m", total: 3, owner: "gone" });
    clock.advance(120_000);
    expect(await store.tasks.sweepStale(clock.now() - 60_000)).toBe(1);
    expect(await store.tasks.getFit(task.id, fit.id)).toMatchObject({ state: "failed", error: { code: "fit_interrupted" } });
    expect(await store.tasks.progress(fit.id, { done: 2, inputTokens: 1, chargedMicro: 1 })).toBe(false);
    expect(await store.tasks.succeed(fit.id, { model: "m", binding: "{}", heads: "[]", report: "{}" })).toBeUndefined();
    expect(await store.tasks.versions(task.id)).toEqual([]);
    expect(await store.tasks.remove(accountId, task.id)).toBe(true);
    expect(await store.tasks.get(accountId, task.id)).toBeUndefined();
  });
});
