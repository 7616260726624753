import { describe, expect, it } from "vitest";
import { addAccount, useBillingServers, type BillingServer } from "../../testing/billing-http.js";
import { STORE_ENGINES } from "../../testing/databases.js";
import { postJudgment, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { TASK_LIMITS } from "../../services/tasks/definition.js";
import { postDecisions } from "../decisions/test-helpers.js";
import { documentOf, taskCall } from "./test-helpers.js";

/**
 * /v1/tasks… over HTTP on the real server: create from JSON and from JSONL, what a bad upload is
 * told (and that nothing of it is kept), the upload limit, names and the quota, list, show and
 * delete, and another account's task, which is not found on any route. Fits are fits.test.ts's.
 */

const QUESTIONS = {
  angry: { type: "noul", instructions: "The customer is angry." },
  team: { type: "choice", instructions: "Which team should answer?", criteria: { billing: "money matters", tech: "bugs and outages" } },
};

function taskBody(name: string, n = 6) {
  return {
    name,
    questions: QUESTIONS,
    abstain_below: { angry: 0.75 },
    examples: Array.from({ length: n }, (_, i) => ({
      state: i % 2 === 0 ? `I was charged twice (${i}), this is outrageous!` : `The app crashes when I log in (${i}).`,
      gold: i % 3 === 2 ? { team: i % 2 === 0 ? "billing" : "tech" } : { angry: i % 2 === 0, team: i % 2 === 0 ? "billing" : { billing: 0.25, tech: 0.75 } },
    })),
  };
}

/** The same task as `judge eval`'s dataset lines: the questions on each line that uses them. */
function jsonlOf(n: number): string {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `ex${i}`,
      state: i % 2 === 0 ? `Charged twice (${i}).` : `It crashes (${i}).`,
      questions: i === 1 ? { team: QUESTIONS.team } : QUESTIONS,
      gold: i === 1 ? { team: "tech" } : { angry: i % 2 === 0, team: i % 2 === 0 ? "billing" : "tech" },
    }),
  ).join("\n");
}

describe.each(STORE_ENGINES)("/v1/tasks on %s", (engine) => {
  const servers = useBillingServers({ store: engine });

  async function start(options: Parameters<typeof servers.server>[0] = {}) {
    const server = await servers.server(options);
    const doc = await documentOf(server.url);
    return { server, check: doc.check };
  }

  const listed = async (server: BillingServer, key = server.key) => {
    const response = await taskCall(server, "GET", "/v1/tasks", undefined, { key });
    expect(response.status, show(response)).toBe(200);
    return response.json.tasks as { id: string; name: string }[];
  };

  it("creates a task from JSON: 201 with the task, unfitted; shown by id and by name, listed", async () => {
    const { server, check } = await start();
    const created = check(await taskCall(server, "POST", "/v1/tasks", taskBody("support")));
    expect(created.status, show(created)).toBe(201);
    expect(created.json, show(created)).toEqual({
      id: expect.stringMatching(/^task_/),
      name: "support",
      questions: QUESTIONS,
      abstain_below: { angry: 0.75 },
      examples: 6,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      versions: [],
      latest_fit: null,
    });
    for (const ref of [created.json.id, "support", encodeURIComponent("support")]) {
      const shown = check(await taskCall(server, "GET", `/v1/tasks/${ref}`));
      expect(shown.status, show(shown)).toBe(200);
      expect(shown.json, show(shown)).toEqual(created.json);
    }
    const list = check(await taskCall(server, "GET", "/v1/tasks"));
    expect(list.json, show(list)).toEqual({ tasks: [created.json] });
    // Any other name is reachable by URL, encoded.
    for (const name of ["a/b c", "50% ✓ 계정", "a?b#c"]) {
      expect((await taskCall(server, "POST", "/v1/tasks", taskBody(name))).status).toBe(201);
      const shown = await taskCall(server, "GET", `/v1/tasks/${encodeURIComponent(name)}`);
      expect(shown.json?.name, show(shown)).toBe(name);
    }
  });

  it("creates a task from JSONL with ?name=: the questions are those the lines define, one example a line", async () => {
    const { server, check } = await start();
    const created = check(await taskCall(server, "POST", "/v1/tasks?name=from%20lines", `${jsonlOf(5)}\n\n`, { contentType: "application/jsonl" }));
    expect(created.status, show(created)).toBe(201);
    expect(created.json, show(created)).toMatchObject({ name: "from lines", questions: QUESTIONS, abstain_below: {}, examples: 5 });
    // application/x-ndjson is the same format.
    server.clock.advance(1);
    const ndjson = await taskCall(server, "POST", "/v1/tasks?name=ndjson", jsonlOf(2), { contentType: "application/x-ndjson; charset=utf-8" });
    expect(ndjson.status, show(ndjson)).toBe(201);
    expect((await listed(server)).map((t) => t.name)).toEqual(["from lines", "ndjson"]);
  });

  it("refuses a bad example with 400 naming the example and the field, and keeps nothing of it", async () => {
    const { server, check } = await start();
    const cases: [what: string, body: unknown, message: RegExp][] = [
      [
        "an option that is not one",
        (() => {
          const body = taskBody("bad");
          body.examples[3].gold = { team: "sales" } as never;
          return body;
        })(),
        /examples\[3\]\.gold\.team: "sales" is not an option/,
      ],
      [
        "a question the task does not have",
        (() => {
          const body = taskBody("bad");
          body.examples[1].gold = { mood: true } as never;
          return body;
        })(),
        /examples\[1\]\.gold\.mood: not a question of the task/,
      ],
      [
        "probabilities that do not sum to 1",
        (() => {
          const body = taskBody("bad");
          body.examples[4].gold = { team: { billing: 0.5, tech: 0.6 } } as never;
          return body;
        })(),
        /examples\[4\]\.gold\.team: probabilities must sum to 1/,
      ],
      ["no name", { ...taskBody("x"), name: undefined }, /name/],
      ["a name like an id", taskBody("task_mine"), /name: must not start with "task_"/],
      ["a name a URL cannot hold", taskBody(".."), /name: must not be "\." or "\.\."/],
      ["a floor of 1", { ...taskBody("bad"), abstain_below: { angry: 1 } }, /abstain_below\.angry: must be below 1/],
      ["a floor for no question", { ...taskBody("bad"), abstain_below: { mood: 0.5 } }, /abstain_below\.mood: not a question of the task/],
      ["no questions", { ...taskBody("bad"), questions: {} }, /questions: a task needs at least one question/],
    ];
    for (const [what, body, message] of cases) {
      const refused = check(await taskCall(server, "POST", "/v1/tasks", body));
      expectErrorResponse(refused, 400, "invalid_request");
      expect(refused.json.error, `${what}\n${show(refused)}`).toMatch(message);
    }
    const lines = jsonlOf(4).split("\n");
    lines[2] = JSON.stringify({ ...JSON.parse(lines[2]), gold: { angry: "yes" } });
    const badLine = check(await taskCall(server, "POST", "/v1/tasks?name=lines", lines.join("\n"), { contentType: "application/jsonl" }));
    expectErrorResponse(badLine, 400, "invalid_request");
    expect(badLine.json.error, show(badLine)).toMatch(/^line 3\.gold\.angry: must be true, false or a probability/);
    const notJson = await taskCall(server, "POST", "/v1/tasks?name=lines", `${jsonlOf(1)}\n{oops`, { contentType: "application/jsonl" });
    expectErrorResponse(notJson, 400, "invalid_request");
    expect(notJson.json.error, show(notJson)).toMatch(/^line 2: not valid JSON/);
    const noName = await taskCall(server, "POST", "/v1/tasks", jsonlOf(2), { contentType: "application/jsonl" });
    expectErrorResponse(noName, 400, "invalid_request");
    expect(noName.json.error, show(noName)).toMatch(/^name: /);
    expectErrorResponse(await taskCall(server, "POST", "/v1/tasks", "{oops"), 400, "invalid_json");
    expect(await listed(server)).toEqual([]);
    const dump = await server.database.dump();
    expect([dump.tasks, dump.task_examples, dump.task_fits], "nothing of a refused upload is stored").toEqual([[], [], []]);
  });

  it(`refuses a body over ${TASK_LIMITS.maxUploadBytes / 1_048_576} MB with 413, and more than ${TASK_LIMITS.maxExamples} examples with 400`, async () => {
    const { server, check } = await start();
    const body = JSON.stringify(taskBody("big", 1));
    const padded = `${body.slice(0, -1)},"padding":"${"x".repeat(TASK_LIMITS.maxUploadBytes - body.length)}"}`;
    expect(Buffer.byteLength(padded)).toBeGreaterThan(TASK_LIMITS.maxUploadBytes);
    expectErrorResponse(check(await taskCall(server, "POST", "/v1/tasks", padded)), 413, "body_too_large");
    const lines = `${jsonlOf(1)}\n`.repeat(Math.ceil(TASK_LIMITS.maxUploadBytes / jsonlOf(1).length) + 1);
    expectErrorResponse(await taskCall(server, "POST", "/v1/tasks?name=big", lines, { contentType: "application/jsonl" }), 413, "body_too_large");
    const many = taskBody("many", TASK_LIMITS.maxExamples + 1);
    const tooMany = await taskCall(server, "POST", "/v1/tasks", many);
    expectErrorResponse(tooMany, 400, "invalid_request");
    expect(tooMany.json.error, show(tooMany)).toMatch(new RegExp(`at most ${TASK_LIMITS.maxExamples}`));
    // Over 256 KB (a judgment's limit) and under the upload limit is fine.
    const large = taskBody("large", TASK_LIMITS.maxExamples);
    expect(Buffer.byteLength(JSON.stringify(large))).toBeGreaterThan(256 * 1024);
    const created = await taskCall(server, "POST", "/v1/tasks", large);
    expect(created.status, show(created)).toBe(201);
    expect(created.json.examples).toBe(TASK_LIMITS.maxExamples);
    expect((await listed(server)).map((t) => t.name)).toEqual(["large"]);
  });

  it("refuses a second task of the same name with 409 task_exists; another account may use the name", async () => {
    const { server, check } = await start();
    expect((await taskCall(server, "POST", "/v1/tasks", taskBody("support"))).status).toBe(201);
    const again = check(await taskCall(server, "POST", "/v1/tasks", taskBody("support", 2)));
    expectErrorResponse(again, 409, "task_exists");
    const jsonl = await taskCall(server, "POST", "/v1/tasks?name=support", jsonlOf(2), { contentType: "application/jsonl" });
    expectErrorResponse(jsonl, 409, "task_exists");
    const other = await addAccount(server);
    const theirs = await taskCall(server, "POST", "/v1/tasks", taskBody("support"), { key: other.key });
    expect(theirs.status, show(theirs)).toBe(201);
    expect((await listed(server)).map((t) => t.name)).toEqual(["support"]);
  });

  it("refuses a task past JUDGE_TASKS_PER_ACCOUNT with 409 task_quota_exceeded, per account; deleting one makes room", async () => {
    const { server, check } = await start({ env: { JUDGE_TASKS_PER_ACCOUNT: "2" } });
    for (const name of ["one", "two"]) {
      expect((await taskCall(server, "POST", "/v1/tasks", taskBody(name))).status).toBe(201);
      server.clock.advance(1);
    }
    const over = check(await taskCall(server, "POST", "/v1/tasks", taskBody("three")));
    expectErrorResponse(over, 409, "task_quota_exceeded");
    const other = await addAccount(server);
    expect((await taskCall(server, "POST", "/v1/tasks", taskBody("three"), { key: other.key })).status, "the quota is the account's").toBe(201);
    const removed = check(await taskCall(server, "DELETE", "/v1/tasks/one"));
    expect(removed.status, show(removed)).toBe(204);
    expect(removed.text).toBe("");
    expect((await taskCall(server, "POST", "/v1/tasks", taskBody("three"))).status).toBe(201);
    expect((await listed(server)).map((t) => t.name)).toEqual(["two", "three"]);
  });

  it("deletes a task with its examples: 204, then 404 task_not_found", async () => {
    const { server, check } = await start();
    const created = await taskCall(server, "POST", "/v1/tasks", taskBody("support"));
    const removed = check(await taskCall(server, "DELETE", `/v1/tasks/${created.json.id}`));
    expect(removed.status, show(removed)).toBe(204);
    expectErrorResponse(check(await taskCall(server, "GET", `/v1/tasks/${created.json.id}`)), 404, "task_not_found");
    expectErrorResponse(check(await taskCall(server, "DELETE", "/v1/tasks/support")), 404, "task_not_found");
    expect(await listed(server)).toEqual([]);
    expect((await server.database.dump()).task_examples).toEqual([]);
  });

  it("answers another account's task, by id or name, with 404 task_not_found on every route and in x_task, and leaves it alone", async () => {
    const { server, check } = await start();
    const other = await addAccount(server);
    const theirs = await taskCall(server, "POST", "/v1/tasks", taskBody("theirs"), { key: other.key });
    expect(theirs.status, show(theirs)).toBe(201);
    const mine = await taskCall(server, "POST", "/v1/tasks", taskBody("mine"));
    for (const ref of [theirs.json.id, "theirs", "task_nonexistent"]) {
      const attempts: CapturedResponse[] = [
        await taskCall(server, "GET", `/v1/tasks/${ref}`),
        await taskCall(server, "DELETE", `/v1/tasks/${ref}`),
        await taskCall(server, "POST", `/v1/tasks/${ref}/fits`, {}),
        await taskCall(server, "GET", `/v1/tasks/${ref}/fits/fit_0123456789`),
        await taskCall(server, "GET", `/v1/tasks/${ref}/versions/1`),
      ];
      for (const attempt of attempts) expectErrorResponse(check(attempt), 404, "task_not_found");
      const judged = await postJudgment(server, { state: "I was charged twice.", questions: { angry: QUESTIONS.angry }, x_task: ref });
      expectErrorResponse(check(judged), 404, "task_not_found");
      expect(judged.json.error, show(judged)).toMatch(/^x_task: /);
      const decided = await postDecisions(server, {
        model: "gpt-6-luna",
        input: "I was charged twice.",
        questions: [{ type: "predicate", instructions: "The customer is angry." }],
        x_task: ref,
      });
      expect(decided.status, show(decided)).toBe(404);
      expect(decided.json.error, show(decided)).toMatchObject({ code: "task_not_found", message: expect.stringMatching(/^x_task: /) });
    }
    // Its own routes find nothing of the other account's task either: its list holds its own task only.
    expect((await listed(server)).map((t) => t.id)).toEqual([mine.json.id]);
    expect((await listed(server, other.key)).map((t) => t.id)).toEqual([theirs.json.id]);
    const still = await taskCall(server, "GET", `/v1/tasks/${theirs.json.id}`, undefined, { key: other.key });
    expect(still.json, show(still)).toEqual(theirs.json);
    // A fit or a version of the account's own task that does not exist is not found either.
    expectErrorResponse(check(await taskCall(server, "GET", `/v1/tasks/mine/fits/fit_nope`)), 404, "task_not_found");
    for (const version of ["1", "0", "-1", "x", "1e3"]) {
      expectErrorResponse(check(await taskCall(server, "GET", `/v1/tasks/mine/versions/${version}`)), 404, "task_not_found");
    }
  });

  it("needs a key on every route (401), and refuses a bad fit body or an unknown model with 400 before anything runs", async () => {
    const { server, check } = await start();
    await taskCall(server, "POST", "/v1/tasks", taskBody("support"));
    for (const [method, path] of [
      ["GET", "/v1/tasks"],
      ["POST", "/v1/tasks"],
      ["GET", "/v1/tasks/support"],
      ["DELETE", "/v1/tasks/support"],
      ["POST", "/v1/tasks/support/fits"],
      ["GET", "/v1/tasks/support/fits/fit_x"],
      ["GET", "/v1/tasks/support/versions/1"],
    ]) {
      expectErrorResponse(check(await taskCall(server, method, path, undefined, { key: "tjs_" + "k".repeat(40) })), 401, "invalid_api_key");
    }
    for (const body of [{ model: "gpt-4o" }, { seed: -1 }, { heads: [] }, { heads: ["level3"] }, { unknown: 1 }, "{oops"]) {
      const refused = check(await taskCall(server, "POST", "/v1/tasks/support/fits", body));
      expectErrorResponse(refused, 400);
    }
    expect((await server.database.dump()).task_fits).toEqual([]);
  });
});
