import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateFailsEngine, unavailableEngine } from "../../testing/fault-engines.js";
import { postJudgment, show } from "../../testing/http-client.js";
import { mulberry32 } from "../../bench/random.js";
import { expectErrorResponse } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** POST /v1/systemone: every way a request is refused (400, 401, 502) and what the logs keep. */

let server: TestServer;
let small: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  small = await startTestServer({ maxQuestions: 3 });
});
afterAll(async () => {
  await server?.close();
  await small?.close();
});

const yesNo = { type: "choice", instructions: "Is it?", criteria: { yes: "it is", no: "it is not" } };
const options = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, `description ${i}`]));
const levels = (n: number) => Array.from({ length: n }, (_, i) => `level ${i}`);
const ask = (question: unknown) => ({ state: "a state", questions: { q: question } });

/** ~100 KB of varied words and numbers: far more tokens than the tiny model's 8192-token context. */
function longState(bytes: number): string {
  const words = ["invoice", "refund", "the", "customer", "was", "charged", "twice", "für", "요금", "🎉", "order", "delivery", "late"];
  const random = mulberry32(7);
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    const word = random() < 0.3 ? String(Math.floor(random() * 100_000)) : words[Math.floor(random() * words.length)];
    parts.push(word);
    size += Buffer.byteLength(word) + 1;
  }
  return parts.join(" ");
}

const BAD_REQUESTS: [name: string, body: unknown, code: string][] = [
  ["a body that is not JSON", "{ questions: nope", "invalid_json"],
  ["an empty body", "", "invalid_json"],
  ["a whitespace-only body", "  \n ", "invalid_json"],
  ["a JSON array", [ask(yesNo)], "invalid_request"],
  ["a JSON number", 42, "invalid_request"],
  ["JSON null", null, "invalid_request"],
  ["a JSON string", '"questions"', "invalid_request"],
  ["missing questions", { state: "a state" }, "invalid_request"],
  ["empty questions", { state: "a state", questions: {} }, "invalid_request"],
  ["questions as an array", { questions: [yesNo] }, "invalid_request"],
  ["questions as a string", { questions: "is it?" }, "invalid_request"],
  ["a question that is not an object", { questions: { q: "is it?" } }, "invalid_request"],
  ["an unknown type", ask({ ...yesNo, type: "ranking" }), "invalid_request"],
  ["a missing type", ask({ instructions: "Is it?", criteria: { yes: "y", no: "n" } }), "invalid_request"],
  ["choice with 1 option", ask({ ...yesNo, criteria: options(1) }), "invalid_request"],
  ["choice with 256 options", ask({ ...yesNo, criteria: options(256) }), "invalid_request"],
  ["choice without criteria", ask({ type: "choice", instructions: "Is it?" }), "invalid_request"],
  ["choice criteria as an array", ask({ ...yesNo, criteria: ["yes", "no"] }), "invalid_request"],
  ["choice with an empty option name", ask({ ...yesNo, criteria: { "": "empty", no: "n" } }), "invalid_request"],
  ["score with 1 level", ask({ type: "score", instructions: "How much?", criteria: levels(1) }), "invalid_request"],
  ["score with 11 levels", ask({ type: "score", instructions: "How much?", criteria: levels(11) }), "invalid_request"],
  ["score criteria as an object", ask({ type: "score", instructions: "How much?", criteria: { 0: "low", 1: "high" } }), "invalid_request"],
  ["noul criteria with an unknown key", ask({ type: "noul", instructions: "It is.", criteria: { true: "y", maybe: "m" } }), "invalid_request"],
  ["noul criteria as a string", ask({ type: "noul", instructions: "It is.", criteria: "yes" }), "invalid_request"],
  // Required by the specification; docs/interface/fields.md: "Each question … with its `instructions` (required)".
  ["a question without instructions", ask({ type: "noul" }), "invalid_request"],
  ["instructions as a number", ask({ ...yesNo, instructions: 42 }), "invalid_request"],
  ["instructions as a boolean", ask({ type: "noul", instructions: true }), "invalid_request"],
  ["a state that is a number", { state: 7, questions: { q: yesNo } }, "invalid_request"],
  ["an empty question id", { questions: { "": yesNo } }, "invalid_request"],
  ["model as a number", { model: 4, questions: { q: yesNo } }, "invalid_request"],
  ["an unknown model name", { model: "jev-ultra", questions: { q: yesNo } }, "unknown_model"],
];

describe("400 for a bad request, never a 5xx", () => {
  for (const [name, body, code] of BAD_REQUESTS) {
    it(name, async () => {
      expectErrorResponse(await postJudgment(server, body), 400, code);
    });
  }

  it("more questions than the server's maximum", async () => {
    const questions = Object.fromEntries(["a", "b", "c", "d"].map((id) => [id, yesNo]));
    expectErrorResponse(await postJudgment(small, { questions }), 400, "too_many_questions");
    // At the maximum it answers.
    const three = await postJudgment(small, { questions: { a: yesNo, b: yesNo, c: yesNo } });
    expect(three.status, show(three)).toBe(200);
  });

  it("a state over the model's context budget", async () => {
    const state = longState(100 * 1024);
    const response = await postJudgment(server, { state, questions: { q: yesNo } });
    expectErrorResponse(response, 400, "over_budget");
    expect(response.json.error, show(response)).toMatch(/token/);
  });

  it("a state or instructions nested deeper than 64 levels", async () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    for (const body of [
      `{"state":${nested(100_000)},"questions":{"q":{"type":"noul","instructions":"x"}}}`,
      `{"questions":{"q":{"type":"noul","instructions":${'{"a":'.repeat(40_000)}1${"}".repeat(40_000)}}}}`,
    ]) {
      const response = await postJudgment(server, body);
      expectErrorResponse(response, 400, "invalid_request");
      expect(response.json.error, show(response)).toMatch(/nests .* deeper than 64 levels/);
    }
    // 60 levels inside the state fits (the body itself and "state" are the first two).
    const deepButAllowed = await postJudgment(server, `{"state":${nested(60)},"questions":{"q":{"type":"noul","instructions":"x"}}}`);
    expect(deepButAllowed.status, show(deepButAllowed)).toBe(200);
  });

  it("the same server still answers after all of them", async () => {
    const response = await postJudgment(server, ask(yesNo));
    expect(response.status, show(response)).toBe(200);
  });
});

describe("401 without a valid key", () => {
  it("no Authorization header", async () => {
    expectErrorResponse(await postJudgment(server, ask(yesNo), { key: null }), 401);
  });

  for (const authorization of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Token abc", "Bearer two words", "bearer-less"]) {
    it(`a malformed header: ${JSON.stringify(authorization)}`, async () => {
      expectErrorResponse(await postJudgment(server, ask(yesNo), { authorization }), 401);
    });
  }

  for (const key of ["tjs_" + "A".repeat(40), "tjs_short", "sk-not-a-key-at-all"]) {
    it(`an unknown key: ${key}`, async () => {
      expectErrorResponse(await postJudgment(server, ask(yesNo), { key }), 401);
    });
  }

  it("401 comes before the body is looked at", async () => {
    expectErrorResponse(await postJudgment(server, "{not json", { key: null }), 401);
  });

  for (const by of ["id", "prefix"] as const) {
    it(`a key revoked by ${by}: the very next request is refused`, async () => {
      const { key, record } = await server.store.keys.create({ accountId: server.accountId, name: `revoke by ${by}` });
      const before = await postJudgment(server, ask(yesNo), { key });
      expect(before.status, show(before)).toBe(200);
      expect((await server.store.keys.revoke(by === "id" ? record.id : record.prefix))?.revokedAt, "revoke() returned no revoked key").not.toBeNull();
      expectErrorResponse(await postJudgment(server, ask(yesNo), { key }), 401, "invalid_api_key");
      // Other keys still work.
      const other = await postJudgment(server, ask(yesNo));
      expect(other.status, show(other)).toBe(200);
    });
  }
});

describe("502 when the model cannot answer", () => {
  it("the engine fails while evaluating", async () => {
    const faulty = await startTestServer({ engine: evaluateFailsEngine() });
    try {
      expectErrorResponse(await postJudgment(faulty, ask(yesNo)), 502, "model_failed");
    } finally {
      await faulty.close();
    }
  });

  it("the engine is unavailable", async () => {
    const faulty = await startTestServer({ engine: unavailableEngine() });
    try {
      expectErrorResponse(await postJudgment(faulty, ask(yesNo)), 502, "model_unavailable");
    } finally {
      await faulty.close();
    }
  });

  it("a bad request to a failing engine is still a 400", async () => {
    const faulty = await startTestServer({ engine: evaluateFailsEngine() });
    try {
      expectErrorResponse(await postJudgment(faulty, { questions: {} }), 400);
    } finally {
      await faulty.close();
    }
  });
});

describe("logs", () => {
  it("keep no key material, whatever the key", async () => {
    const logged = await startTestServer({ engine: evaluateFailsEngine() });
    try {
      const { key: revoked, record } = await logged.store.keys.create({ accountId: logged.accountId });
      await logged.store.keys.revoke(record.id);
      const invalid = "tjs_" + "Zz9".repeat(13) + "Q";
      const responses = [
        await postJudgment(logged, ask(yesNo)), // valid key, 502 from the engine: logged as an error
        await postJudgment(logged, { questions: {} }), // valid key, 400
        await postJudgment(logged, ask(yesNo), { key: invalid }),
        await postJudgment(logged, ask(yesNo), { key: revoked }),
        await postJudgment(logged, ask(yesNo), { authorization: `Basic ${logged.key}` }),
      ];
      const statuses = responses.map((r) => r.status);
      expect(statuses, responses.map((r) => show(r)).join("\n")).toEqual([502, 400, 401, 401, 401]);
      const lines = logged.logLines.join("");
      expect(logged.logLines.length, `expected a log line per request:\n${lines}`).toBeGreaterThanOrEqual(responses.length);
      for (const secret of [logged.key, revoked, invalid]) {
        for (const fragment of [secret, secret.slice(4), secret.slice(-16)]) {
          expect(lines.includes(fragment), `logs contain key material ${fragment}:\n${lines}`).toBe(false);
        }
      }
      expect(lines, `logs mention Bearer:\n${lines}`).not.toMatch(/bearer/i);
      expect(lines, `logs mention the Authorization header:\n${lines}`).not.toMatch(/authorization/i);
    } finally {
      await logged.close();
    }
  });
});
