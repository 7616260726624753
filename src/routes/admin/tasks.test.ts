import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { show } from "../../testing/http-client.js";
import { openApiConformance, type OpenApiConformance } from "../../testing/openapi-conformance.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { addTestAccount, readyTinyEngine, startTestServer, type TestServer } from "../../testing/server.js";
import { gatedEngine, settledFit, type GatedEngine } from "../tasks/test-helpers.js";
import { createTask, fittedTask, startFit } from "./tasks-test-helpers.js";

/**
 * GET /admin/v1/accounts/{id}/tasks and …/tasks/{task}: a tenant's tasks as the operator sees
 * them, fitted on the tiny fixture model through the tenant API; a fit held mid-way shows its
 * progress. Every response is checked against the admin OpenAPI document. On SQLite and PostgreSQL.
 */

describe.each(STORE_ENGINES)("the admin API's tasks on %s", (store) => {
  let server: TestServer;
  let engine: GatedEngine;
  let doc: OpenApiConformance;
  beforeAll(async () => {
    engine = gatedEngine(await readyTinyEngine());
    server = await startTestServer({ store, engine });
    doc = openApiConformance((await adminCall(server, "GET", "/admin/openapi.json")).json);
  });
  afterAll(async () => {
    engine?.releaseAll();
    await server?.close();
    await engine?.close();
  });

  const get = async (path: string, template: string) => {
    const response = await adminCall(server, "GET", path);
    doc.check({ ...response, path: template });
    return response;
  };
  const list = (account: string) => get(`/admin/v1/accounts/${account}/tasks`, "/admin/v1/accounts/{id}/tasks");
  const detail = (account: string, task: string) =>
    get(`/admin/v1/accounts/${account}/tasks/${encodeURIComponent(task)}`, "/admin/v1/accounts/{id}/tasks/{task}");

  it("lists no tasks for an account without any, and 404s an unknown account or task", async () => {
    const other = await addTestAccount(server.services);
    const empty = await list(other.accountId);
    expect(empty.status, show(empty)).toBe(200);
    expect(empty.json, show(empty)).toEqual({ tasks: [] });
    expectErrorResponse(await list("acct_nope"), 404, "account_not_found");
    expectErrorResponse(await detail("acct_nope", "anything"), 404, "account_not_found");
    expectErrorResponse(await detail(other.accountId, "task_nope"), 404, "task_not_found");
    expectErrorResponse(await adminCall(server, "GET", `/admin/v1/accounts/${other.accountId}/tasks`, { token: null }), 404, "not_found");
  });

  it("shows a fitted task: listed with its finished fit and version 1, and its report per question", async () => {
    const id = await fittedTask(server, "support");
    const listed = await list(server.accountId);
    expect(listed.status, show(listed)).toBe(200);
    const summary = listed.json.tasks.find((task: { id: string }) => task.id === id);
    expect(summary, show(listed)).toMatchObject({
      name: "support",
      questions: ["angry", "team"],
      examples: 6,
      latest_version: 1,
      latest_fit: { state: "succeeded", examples: 6, examples_read: 6, version: 1, error: null, key_id: expect.stringMatching(/^key_/) },
    });
    expect(summary.latest_fit.input_tokens, show(listed)).toBeGreaterThan(0);

    for (const ref of [id, "support"]) {
      const shown = await detail(server.accountId, ref);
      expect(shown.status, show(shown)).toBe(200);
      expect(shown.json.task, show(shown)).toMatchObject({ id, name: "support", account_id: server.accountId, examples: 6 });
      expect(shown.json.task.classes, show(shown)).toEqual({ angry: ["true", "false"], team: ["billing", "tech"] });
      expect(
        shown.json.fits.map((fit: { state: string }) => fit.state),
        show(shown),
      ).toEqual(["succeeded"]);
      const [version] = shown.json.versions;
      expect(version, show(shown)).toMatchObject({ version: 1, fit: shown.json.fits[0].id, report: { examples: 6 } });
      for (const question of ["angry", "team"]) {
        const report = version.report.questions[question];
        expect(report.perClass, show(shown)).toEqual([3, 3]);
        expect(version.heads[question], show(shown)).toBe(report.chosen);
        for (const head of ["prior", "plain", "level1"]) expect(report[head], show(shown)).toMatchObject({ n: 6, accuracy: expect.any(Number) });
        const binned = report.reliability.bins.reduce((sum: number, bin: { count: number }) => sum + bin.count, 0);
        expect(binned, show(shown)).toBe(6);
      }
    }
  });

  it("shows a running fit's progress, then its version once it is done", async () => {
    const id = await createTask(server, "held");
    const gate = engine.holdAfter(2);
    const location = await startFit(server, id);
    await gate.entered;
    const running = await list(server.accountId);
    const summary = running.json.tasks.find((task: { id: string }) => task.id === id);
    expect(summary, show(running)).toMatchObject({ latest_version: null, latest_fit: { state: "running", examples: 6, finished_at: null, version: null } });
    expect(summary.latest_fit.examples_read, show(running)).toBeLessThan(6);
    const shown = await detail(server.accountId, id);
    expect(shown.json, show(shown)).toMatchObject({ fits: [{ state: "running" }], versions: [] });
    gate.release();
    expect((await settledFit(server, location)).json.state).toBe("succeeded");
    const done = await detail(server.accountId, id);
    expect(done.json.fits[0], show(done)).toMatchObject({ state: "succeeded", examples_read: 6, version: 1 });
    expect(
      done.json.versions.map((v: { version: number }) => v.version),
      show(done),
    ).toEqual([1]);
  });

  it("does not show one account's task under another account", async () => {
    const other = await addTestAccount(server.services);
    expectErrorResponse(await detail(other.accountId, "support"), 404, "task_not_found");
    expect((await list(other.accountId)).json.tasks, "the other account lists none").toEqual([]);
  });
});
