import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, postJudgment, show } from "../testing/http-client.js";
import { startTestServer, type TestServer } from "../testing/server.js";

/**
 * What the ecosystem's conformance suites check over raw HTTP, byte for byte where they do:
 * the score legend echoes each level as sent, and error bodies carry the hosted service's
 * `detail` beside our `error` and `code`.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe("the score legend", () => {
  it('echoes every level as sent: null comes back as "" (never null), empty stays empty, objects and arrays unchanged', async () => {
    const levels = [null, "", { label: "high", weight: 0.75, nested: { deep: [1, null, true] } }, ["all", "of", "it"], "plain"];
    const response = await postJudgment(server, {
      state: "The site is down.",
      questions: { urgency: { type: "score", instructions: "How urgent?", criteria: levels } },
    });
    expect(response.status, show(response)).toBe(200);
    // The raw text, as a suite compares it: no value re-rendered, no key reordered.
    const legend = Object.fromEntries(levels.map((level, i) => [String(i), level ?? ""]));
    expect(response.text, show(response)).toContain(`"legend":${JSON.stringify(legend)}`);
  });

  it("a level list of nothing but nulls comes back as empty strings", async () => {
    const response = await postJudgment(server, { questions: { q: { type: "score", instructions: null, criteria: [null, null, null] } } });
    expect(response.status, show(response)).toBe(200);
    expect(response.json.answers.q.legend, show(response)).toEqual({ "0": "", "1": "", "2": "" });
  });
});

describe("error bodies", () => {
  it("a path no route serves: not_found with detail not_found_error", async () => {
    const response = await call(server.url, "/v1/nothing-here", { method: "POST" });
    expect(response.status, show(response)).toBe(404);
    expect(response.json, show(response)).toEqual({
      error: "no route for POST /v1/nothing-here",
      code: "not_found",
      detail: { error_type: "not_found_error", message: "no route for POST /v1/nothing-here" },
    });
  });

  it("the admin API without its token answers the very same 404, detail included", async () => {
    const hidden = await call(server.url, "/admin/v1/accounts", { headers: { authorization: `Bearer ${server.key}` } });
    const absent = await call(server.url, "/admin/v1/nothing-here");
    for (const response of [hidden, absent]) {
      expect(response.status, show(response)).toBe(404);
      expect(response.json.detail, show(response)).toEqual({ error_type: "not_found_error", message: response.json.error });
    }
    expect(Object.keys(hidden.json), show(hidden)).toEqual(Object.keys(absent.json));
  });

  it("keeps our own fields first and unchanged: error, code, then detail", async () => {
    const response = await postJudgment(server, "{not json");
    expect(response.status, show(response)).toBe(400);
    expect(Object.keys(response.json), show(response)).toEqual(["error", "code", "detail"]);
    expect(response.json.code, show(response)).toBe("invalid_json");
    expect(response.json.detail, show(response)).toEqual({ error_type: "api_usage_error", message: response.json.error });
  });
});
