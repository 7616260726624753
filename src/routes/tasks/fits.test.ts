import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addAccount, billingState, moneyTables, useBillingServers } from "../../testing/billing-http.js";
import { expectedCharge, expectedEuros } from "../../testing/billing-store.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { postDecisions } from "../decisions/test-helpers.js";
import { documentOf, gatedEngine, settledFit, taskCall } from "./test-helpers.js";

/**
 * Fits over HTTP on the real tiny model: 202 and its location, polled to the version it writes
 * (a report per question, bound to the model), billed exactly what the fit says it charged; a
 * fit that cannot be paid (402, nothing charged, no fit left), one fit at a time per task, no
 * delete while fitting; and requests naming the task with `x_task` on both judging routes.
 */

/** Ids q1… so that /v1/decisions (which numbers its questions q1…qN) can name them too. */
const QUESTIONS = {
  q1: { type: "noul", instructions: "The customer is angry." },
  q2: { type: "choice", instructions: "Which team should answer?", criteria: { billing: "money matters", tech: "bugs and outages" } },
  // Labelled by no example: it gets no head.
  q3: { type: "score", instructions: "How urgent is it?", criteria: ["not", "somewhat", "very"] },
};

const STATES = [
  "I was charged twice for one order, this is outrageous!",
  "The app crashes when I log in.",
  "Refund me now or I will call my bank!!",
  "Could you explain how to export my data?",
  "Your invoice is wrong AGAIN. Fix it.",
  "The page shows an error 500 after the update.",
];

function taskBody(name: string, n: number, floors: Record<string, number> = {}) {
  return {
    name,
    questions: QUESTIONS,
    abstain_below: floors,
    examples: Array.from({ length: n }, (_, i) => ({
      state: `${STATES[i % STATES.length]} (#${i})`,
      gold: { q1: i % 3 !== 1, q2: i % 2 === 0 ? "billing" : "tech" },
    })),
  };
}

/** A plan whose balance pays every token (€1 per million: 1 µ€ a token), so charges are visible. */
const PAYING = { allowanceQuestions: 0, pricePerMillion: 1_000_000 };

describe.each(STORE_ENGINES)("fits on %s", (engine) => {
  const servers = useBillingServers({ store: engine });

  it("answers 202 with a location, runs to succeeded, writes a version with a report per question bound to the model, and bills exactly what it says", async () => {
    const server = await servers.server({ plan: PAYING, balanceMicro: 10_000_000 });
    const { check } = await documentOf(server.url);
    const created = await taskCall(server, "POST", "/v1/tasks", taskBody("support", 12));
    expect(created.status, show(created)).toBe(201);
    const before = await billingState(server, server.accountId);

    const started = check(await taskCall(server, "POST", "/v1/tasks/support/fits", { seed: 3 }));
    expect(started.status, show(started)).toBe(202);
    const location = started.headers.get("location");
    expect(location, show(started)).toBe(`/v1/tasks/${created.json.id}/fits/${started.json.id}`);
    expect(started.json, show(started)).toMatchObject({
      id: expect.stringMatching(/^fit_/),
      state: "running",
      model: server.engine.modelId,
      examples: 12,
      version: null,
      error: null,
      finished_at: null,
    });

    const done = check(await settledFit(server, location!));
    expect(done.json, show(done)).toMatchObject({ id: started.json.id, state: "succeeded", version: 1, examples: 12, examples_read: 12, error: null });
    expect(done.json.input_tokens, show(done)).toBeGreaterThan(0);
    expect(done.json.finished_at, show(done)).toMatch(/^\d{4}-/);

    const version = check(await taskCall(server, "GET", `/v1/tasks/${created.json.id}/versions/1`));
    expect(version.status, show(version)).toBe(200);
    const models = await taskCall(server, "GET", "/v1/models");
    expect(
      models.json.data.map((m: { id: string }) => m.id),
      show(models),
    ).toContain(server.engine.modelId);
    expect(version.json, show(version)).toMatchObject({
      version: 1,
      model: server.engine.modelId,
      fit: started.json.id,
      binding: { model: server.engine.modelId, weights: expect.any(String), promptStyle: expect.any(String), template: expect.any(String) },
    });
    // A head and a report for each labelled question; q3, labelled by no example, has neither.
    expect(Object.keys(version.json.heads).sort(), show(version)).toEqual(["q1", "q2"]);
    for (const kind of Object.values(version.json.heads)) expect(["plain", "level1", "level2"]).toContain(kind);
    const { report } = version.json;
    expect(Object.keys(report.questions).sort(), show(version)).toEqual(["q1", "q2"]);
    expect(report.questions.q1, show(version)).toMatchObject({ classes: 2, examples: 12, perClass: [8, 4] });
    expect(report.questions.q2, show(version)).toMatchObject({ classes: 2, examples: 12, perClass: [6, 6] });
    expect(report, show(version)).toMatchObject({ seed: 3, examples: 12, inputTokens: done.json.input_tokens, chargedMicro: expect.any(Number) });

    // Billed: the balance dropped by exactly what the fit and its report say, one charge per example.
    const after = await billingState(server, server.accountId);
    const charged = before.balanceMicro - after.balanceMicro;
    expect(charged).toBe(report.chargedMicro);
    expect(charged).toBe(expectedCharge(done.json.input_tokens, PAYING.pricePerMillion));
    expect(done.json.charged_eur).toBe(expectedEuros(charged));
    const charges = after.entries.slice(before.entries.length);
    expect(charges.map((e) => e.kind)).toEqual(Array(12).fill("charge"));
    expect(charges.reduce((sum, e) => sum + e.inputTokens, 0)).toBe(done.json.input_tokens);
    expect(after.reservedMicro).toBe(0);
    expect(await server.services.ledger.check()).toMatchObject({ ok: true });

    // The task shows it: its versions, newest first, and its latest fit.
    const shown = check(await taskCall(server, "GET", "/v1/tasks/support"));
    expect(shown.json.versions, show(shown)).toEqual([
      { version: 1, model: server.engine.modelId, fit: started.json.id, created_at: expect.any(String), heads: version.json.heads },
    ]);
    expect(shown.json.latest_fit, show(shown)).toEqual(done.json);
    // A second fit is version 2; the fit that wrote version 1 stays as it was.
    const again = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
    expect(again.status, show(again)).toBe(202);
    expect((await settledFit(server, again.headers.get("location")!)).json).toMatchObject({ state: "succeeded", version: 2 });
    expect((await taskCall(server, "GET", location!)).json).toEqual(done.json);
    expect((await taskCall(server, "GET", "/v1/tasks/support")).json.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  it("refuses a fit the account cannot pay with 402: nothing charged, no fit left running or recorded; after a top-up it starts", async () => {
    const server = await servers.server({ plan: PAYING });
    const { check } = await documentOf(server.url);
    await taskCall(server, "POST", "/v1/tasks", taskBody("support", 4));
    const before = await moneyTables(server.database);
    const refused = check(await taskCall(server, "POST", "/v1/tasks/support/fits", {}));
    expectErrorResponse(refused, 402, "insufficient_funds");
    expect(await moneyTables(server.database), "a 402 changed the money tables").toEqual(before);
    expect((await server.database.dump()).task_fits, "no fit is left").toEqual([]);
    expect((await taskCall(server, "GET", "/v1/tasks/support")).json.latest_fit).toBeNull();

    await server.store.ledger.topUp(server.accountId, 1_000_000, "for the fit");
    const started = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
    expect(started.status, show(started)).toBe(202);
    expect((await settledFit(server, started.headers.get("location")!)).json.state).toBe("succeeded");
  });

  it("fails a fit whose balance runs out part-way with insufficient_funds: what was read is charged once, no version is written", async () => {
    const server = await servers.server({ plan: PAYING });
    const body = taskBody("support", 8);
    await taskCall(server, "POST", "/v1/tasks", body);
    // What each example costs, read as the fit reads it (its state, the questions it labels), paid by another account.
    const measurer = await addAccount(server, { balanceMicro: 10_000_000 });
    const costs: number[] = [];
    for (const example of body.examples.slice(0, 4)) {
      const read = await postJudgment(measurer, { state: example.state, questions: { q1: QUESTIONS.q1, q2: QUESTIONS.q2 } });
      expect(read.status, show(read)).toBe(200);
      costs.push(expectedCharge(read.json.usage.input_tokens, PAYING.pricePerMillion));
    }
    // Enough for three examples and half of the fourth.
    const threeAndAHalf = costs[0] + costs[1] + costs[2] + Math.floor(costs[3] / 2);
    await server.store.ledger.topUp(server.accountId, threeAndAHalf, "three examples and a half");
    const started = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
    expect(started.status, show(started)).toBe(202);
    const done = await settledFit(server, started.headers.get("location")!);
    expect(done.json, show(done)).toMatchObject({
      state: "failed",
      version: null,
      examples_read: 3,
      charged_eur: expectedEuros(costs[0] + costs[1] + costs[2]),
      error: { code: "insufficient_funds", message: expect.stringMatching(/could not be paid/) },
    });
    const after = await billingState(server, server.accountId);
    expect(after.balanceMicro).toBe(Math.floor(costs[3] / 2));
    expect(after.reservedMicro).toBe(0);
    expect((await taskCall(server, "GET", "/v1/tasks/support")).json.versions).toEqual([]);
    expect(await server.services.ledger.check()).toMatchObject({ ok: true });
  });

  it("allows one fit at a time per task (409 fit_in_progress) and no delete while it runs (409); both are fine once it ended", async () => {
    const gated = gatedEngine(servers.inner);
    const server = await servers.server({ engine: gated, plan: PAYING, balanceMicro: 10_000_000 });
    const { check } = await documentOf(server.url);
    await taskCall(server, "POST", "/v1/tasks", taskBody("support", 4));
    await taskCall(server, "POST", "/v1/tasks", taskBody("other", 2));
    // The first example is read before the 202; the second waits at the gate.
    const gate = gated.holdAfter(1);
    try {
      const started = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
      expect(started.status, show(started)).toBe(202);
      await gate.entered;
      const second = check(await taskCall(server, "POST", "/v1/tasks/support/fits", {}));
      expectErrorResponse(second, 409, "fit_in_progress");
      const removed = check(await taskCall(server, "DELETE", "/v1/tasks/support"));
      expectErrorResponse(removed, 409, "fit_in_progress");
      const running = check(await taskCall(server, "GET", "/v1/tasks/support"));
      expect(running.json.latest_fit, show(running)).toMatchObject({ id: started.json.id, state: "running" });
      // Another task of the account is not held up by it.
      expect((await taskCall(server, "DELETE", "/v1/tasks/other")).status).toBe(204);
      gate.release();
      expect((await settledFit(server, started.headers.get("location")!)).json.state).toBe("succeeded");
      const next = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
      expect(next.status, show(next)).toBe(202);
      await settledFit(server, next.headers.get("location")!);
      const deleted = await taskCall(server, "DELETE", "/v1/tasks/support");
      expect(deleted.status, show(deleted)).toBe(204);
      const dump = await server.database.dump();
      expect([dump.tasks, dump.task_examples, dump.task_fits, dump.task_versions], "deleting a task deletes its fits and versions").toEqual([[], [], [], []]);
    } finally {
      gated.releaseAll();
    }
  });

  it("answers another account's fit and version with 404 task_not_found, by any route", async () => {
    const server = await servers.server({ balanceMicro: 10_000_000 });
    const other = await addAccount(server, { balanceMicro: 10_000_000 });
    const theirs = await taskCall(server, "POST", "/v1/tasks", taskBody("theirs", 3), { key: other.key });
    const fit = await taskCall(server, "POST", "/v1/tasks/theirs/fits", {}, { key: other.key });
    expect(fit.status, show(fit)).toBe(202);
    await settledFit({ url: server.url, key: other.key }, fit.headers.get("location")!);
    // The server's own account has a task of the same name: the other's fit is still not found under it.
    await taskCall(server, "POST", "/v1/tasks", taskBody("theirs", 3));
    for (const path of [fit.headers.get("location")!, `/v1/tasks/${theirs.json.id}/versions/1`, `/v1/tasks/theirs/fits/${fit.json.id}`]) {
      expectErrorResponse(await taskCall(server, "GET", path), 404, "task_not_found");
    }
    expectErrorResponse(await taskCall(server, "POST", `/v1/tasks/${theirs.json.id}/fits`, {}), 404, "task_not_found");
    expectErrorResponse(await taskCall(server, "DELETE", `/v1/tasks/${theirs.json.id}`), 404, "task_not_found");
    const judged = await postJudgment(server, { state: STATES[0], questions: { q1: QUESTIONS.q1 }, x_task: theirs.json.id });
    expectErrorResponse(judged, 404, "task_not_found");
    expect((await taskCall(server, "GET", `/v1/tasks/${theirs.json.id}`, undefined, { key: other.key })).json.versions).toHaveLength(1);
  });
});

describe("x_task on /v1/systemone and /v1/decisions", () => {
  let server: TestServer;
  let taskId: string;
  let check: (response: import("../../testing/http-client.js").CapturedResponse) => unknown;
  /** q1's floor: above any confidence this tiny model's head gives, so q1 abstains; q2's is 0.5, which a top probability of 2 classes never falls below. */
  const FLOORS = { q1: 0.999999, q2: 0.5 };

  beforeAll(async () => {
    server = await startTestServer();
    check = (await documentOf(server.url)).check;
    const created = await taskCall(server, "POST", "/v1/tasks", taskBody("support", 12, FLOORS));
    expect(created.status, show(created)).toBe(201);
    taskId = created.json.id;
    const started = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
    expect(started.status, show(started)).toBe(202);
    expect((await settledFit(server, started.headers.get("location")!)).json.state).toBe("succeeded");
  });
  afterAll(async () => {
    await server?.close();
  });

  const topOf = (probabilities: number[]) => Math.max(...probabilities);

  it("/v1/systemone: the task's questions are answered by its version, others plainly with a reason, and x_abstain under the floor", async () => {
    const version = (await taskCall(server, "GET", `/v1/tasks/${taskId}/versions/1`)).json;
    const body = {
      state: "I was charged twice and nobody answers!",
      questions: {
        q1: QUESTIONS.q1,
        // The task's question with its options in another order is the same question.
        q2: { ...QUESTIONS.q2, criteria: { tech: QUESTIONS.q2.criteria.tech, billing: QUESTIONS.q2.criteria.billing } },
        q3: QUESTIONS.q3,
        other: { type: "noul", instructions: "The customer is happy." },
        // The task's question under another id is not the task's.
        angry: QUESTIONS.q1,
      },
      x_task: "support",
    };
    const response = check(await postJudgment(server, body)) as Awaited<ReturnType<typeof postJudgment>>;
    expect(response.status, show(response)).toBe(200);
    const { answers } = response.json;
    expect(answers.q1.x_task, show(response)).toEqual({ id: taskId, version: 1, head: version.heads.q1 });
    expect(answers.q2.x_task, show(response)).toEqual({ id: taskId, version: 1, head: version.heads.q2 });
    expect(Object.keys(answers.q2.probabilities), "keyed in the request's order").toEqual(["tech", "billing"]);
    expect(answers.q3.x_task, show(response)).toEqual({ id: taskId, version: null, reason: expect.stringMatching(/label no answer of this question/) });
    for (const id of ["other", "angry"]) {
      expect(answers[id].x_task, show(response)).toEqual({ id: taskId, version: null, reason: expect.stringMatching(/not one of the task's questions/) });
      expect(answers[id].x_abstain, show(response)).toBeUndefined();
    }
    // The floor compares the head's top probability; q1's is below 0.999999, q2's (of 2 classes) never below 0.5.
    expect(topOf([answers.q1.noul, 1 - answers.q1.noul]), show(response)).toBeLessThan(FLOORS.q1);
    expect(answers.q1.x_abstain, show(response)).toBe(true);
    expect(answers.q2.x_abstain, show(response)).toBeUndefined();
    expect(response.headers.get("x-billed-to"), show(response)).toBe("plan");

    // Without x_task, the same request has no notes.
    const { x_task: _, ...plainBody } = body;
    const plain = await postJudgment(server, plainBody);
    expect(plain.status, show(plain)).toBe(200);
    for (const answer of Object.values<Record<string, unknown>>(plain.json.answers)) {
      expect(answer.x_task).toBeUndefined();
      expect(answer.x_abstain).toBeUndefined();
    }
    // A question the task does not have is answered as it would be without it.
    expect(answers.other.noul).toBeCloseTo(plain.json.answers.other.noul, 12);
  });

  it("/v1/decisions: the same notes on its answers, by the task's id or name", async () => {
    for (const ref of ["support", taskId]) {
      const response = check(
        await postDecisions(server, {
          model: "gpt-6-luna",
          input: "I was charged twice and nobody answers!",
          questions: [
            { type: "predicate", instructions: QUESTIONS.q1.instructions },
            { type: "predicate", instructions: "The customer is happy." },
          ],
          x_task: ref,
        }),
      ) as Awaited<ReturnType<typeof postDecisions>>;
      expect(response.status, show(response)).toBe(200);
      const [angry, happy] = response.json.answers;
      expect(angry, show(response)).toMatchObject({ type: "predicate", x_task: { id: taskId, version: 1, head: expect.any(String) }, x_abstain: true });
      expect(happy.x_task, show(response)).toEqual({ id: taskId, version: null, reason: expect.stringMatching(/not one of the task's questions/) });
      expect(happy.x_abstain).toBeUndefined();
    }
  });

  it("refuses x_task with x_debias or x_calibration (400), and a malformed x_task", async () => {
    for (const extra of [{ x_debias: "canonical" }, { x_calibration: "contextual" }]) {
      const refused = await postJudgment(server, { state: "s", questions: { q1: QUESTIONS.q1 }, x_task: "support", ...extra });
      expectErrorResponse(refused, 400, "invalid_request");
      expect(refused.json.error, show(refused)).toMatch(/x_task/);
    }
    for (const x_task of ["", 42, "x".repeat(201)]) {
      expectErrorResponse(await postJudgment(server, { state: "s", questions: { q1: QUESTIONS.q1 }, x_task }), 400, "invalid_request");
    }
  });
});

describe("x_task on a server that debiases by default (JUDGE_DEBIAS=canonical)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ debias: "canonical" });
    expect((await taskCall(server, "POST", "/v1/tasks", taskBody("support", 8))).status).toBe(201);
    const started = await taskCall(server, "POST", "/v1/tasks/support/fits", {});
    expect((await settledFit(server, started.headers.get("location")!)).json.state).toBe("succeeded");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers a request naming the task through it without x_debias (the default does not apply), and names x_task as the param of a 404 on /v1/decisions", async () => {
    const response = await postJudgment(server, { state: "I was charged twice.", questions: { q1: QUESTIONS.q1 }, x_task: "support" });
    expect(response.status, show(response)).toBe(200);
    expect(response.json.answers.q1.x_task, show(response)).toMatchObject({ version: 1 });
    const missing = await postDecisions(server, { model: "gpt-6-luna", input: "s", questions: [{ type: "predicate", instructions: "x" }], x_task: "nope" });
    expect(missing.status, show(missing)).toBe(404);
    expect(missing.json.error, show(missing)).toMatchObject({ code: "task_not_found", param: "x_task" });
  });
});
