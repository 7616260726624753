import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hangingEngine } from "../../testing/hanging-engine.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { documentOf } from "./test-helpers.js";

/**
 * /v1/tasks… and x_task in GET /openapi.json: every operation with its statuses behind the key,
 * and the request field and answer notes on both judging routes. (Real responses are checked
 * against the document in route.test.ts and fits.test.ts.)
 */

let server: TestServer;
let doc: any;
beforeAll(async () => {
  server = await startTestServer({ engine: hangingEngine() });
  doc = (await documentOf(server.url)).document;
});
afterAll(async () => {
  await server?.close();
});

const OPERATIONS: [path: string, method: string, statuses: string[]][] = [
  ["/v1/tasks", "post", ["201", "400", "401", "409", "413", "415", "429", "502"]],
  ["/v1/tasks", "get", ["200", "401", "429", "502"]],
  ["/v1/tasks/{task}", "get", ["200", "401", "404", "429", "502"]],
  ["/v1/tasks/{task}", "delete", ["204", "401", "404", "409", "429", "502"]],
  ["/v1/tasks/{task}/fits", "post", ["202", "400", "401", "402", "404", "409", "413", "415", "429", "502"]],
  ["/v1/tasks/{task}/fits/{fit}", "get", ["200", "401", "404", "429", "502"]],
  ["/v1/tasks/{task}/versions/{version}", "get", ["200", "401", "404", "429", "502"]],
];

const pretty = (value: unknown) => JSON.stringify(value, null, 1);
const schemaOf = (name: string) => doc.components.schemas[name];

describe("GET /openapi.json describes /v1/tasks…", () => {
  for (const [path, method, statuses] of OPERATIONS) {
    it(`${method.toUpperCase()} ${path}: ${statuses.join(", ")}, behind the key, each with x-request-id`, () => {
      const operation = doc.paths?.[path]?.[method];
      expect(operation, pretty(doc.paths)).toBeTruthy();
      expect(Object.keys(operation.responses).sort(), pretty(operation)).toEqual(expect.arrayContaining(statuses));
      expect(operation.security, pretty(operation)).toEqual([{ bearerAuth: [] }]);
      for (const [status, entry] of Object.entries<any>(operation.responses)) {
        expect(entry.headers?.["x-request-id"], `${status}: ${pretty(entry)}`).toBeTruthy();
        // Everything after authentication counts against the rate limit, and says so.
        if (status !== "401") expect(entry.headers?.["x-ratelimit-remaining"], `${status}: ${pretty(entry)}`).toBeTruthy();
        if (status === "204") expect(entry.content, `${status}: ${pretty(entry)}`).toBeUndefined();
        else expect(entry.content?.["application/json"]?.schema, `${status}: ${pretty(entry)}`).toBeTruthy();
      }
      for (const parameter of path.match(/\{(\w+)\}/g) ?? []) {
        const name = parameter.slice(1, -1);
        expect(
          operation.parameters?.find((p: any) => p.name === name && p.in === "path"),
          pretty(operation),
        ).toBeTruthy();
      }
    });
  }

  it("documents the two upload formats, ?name=, and the fit's Location", () => {
    const create = doc.paths["/v1/tasks"].post;
    expect(Object.keys(create.requestBody.content).sort(), pretty(create)).toEqual(["application/json", "application/jsonl"]);
    expect(create.parameters.find((p: any) => p.name === "name")?.in, pretty(create)).toBe("query");
    expect(doc.paths["/v1/tasks/{task}/fits"].post.responses["202"].headers.location, pretty(doc.paths["/v1/tasks/{task}/fits"])).toBeTruthy();
    expect(schemaOf("TaskFit").properties.state.enum, pretty(schemaOf("TaskFit"))).toEqual(["running", "succeeded", "failed"]);
  });

  it("lists the tasks' error codes among the public ones", () => {
    expect(schemaOf("Error").properties.code.enum, pretty(schemaOf("Error"))).toEqual(
      expect.arrayContaining(["task_not_found", "task_exists", "task_quota_exceeded", "fit_in_progress"]),
    );
  });
});

describe("GET /openapi.json describes x_task on the judging routes", () => {
  it.each([
    ["/v1/systemone", "JudgmentRequest"],
    ["/v1/decisions", "DecisionsRequest"],
  ])("%s: the x_task request field, and a 404 for a task the account does not have", (path, request) => {
    expect(schemaOf(request).properties.x_task?.type, pretty(schemaOf(request))).toBe("string");
    const responses = doc.paths[path].post.responses;
    expect(responses["404"]?.description, pretty(responses)).toMatch(/task_not_found/);
  });

  it.each(["ChoiceAnswer", "NoulAnswer", "ScoreAnswer", "DecisionsPredicateAnswer", "DecisionsChoiceAnswer", "DecisionsScoreAnswer"])(
    "%s carries the optional x_task note and x_abstain",
    (name) => {
      const schema = schemaOf(name);
      expect(schema?.properties?.x_task, pretty(schema)).toBeTruthy();
      expect(schema.properties.x_abstain, pretty(schema)).toBeTruthy();
      expect(schema.required ?? [], pretty(schema)).not.toContain("x_task");
      expect(schema.required ?? [], pretty(schema)).not.toContain("x_abstain");
    },
  );
});
