import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JudgmentEngine } from "../engine/types.js";
import type { JudgmentPrompt } from "../judgment/prompt.js";
import { moneyTables } from "../testing/billing-http.js";
import { postJudgment, show } from "../testing/http-client.js";
import { readyTinyEngine, startTestServer, type TestServer } from "../testing/server.js";

/**
 * The body of POST /v1/systemone over HTTP, on the real engine: what the model is shown of
 * the numbers a client sent, and bodies in an encoding the service does not read.
 */

let tiny: JudgmentEngine;
let server: TestServer;
const prompts: JudgmentPrompt[] = [];

beforeAll(async () => {
  tiny = await readyTinyEngine();
  // The real engine, with each prompt it is given kept for the test to read.
  const seeing: JudgmentEngine = { ...tiny, prepare: (prompt, signal) => (prompts.push(prompt), tiny.prepare(prompt, signal)) };
  server = await startTestServer({ engine: seeing });
});

afterAll(async () => {
  await server?.close();
  await tiny?.close();
});

const question = { q: { type: "noul", instructions: "The numbers are large." } };

describe("numbers in the state", () => {
  const cases: [string, string][] = [
    ["1e999 (JSON.parse: null)", "1e999"],
    ["123456789012345678901234567890 (JSON.parse: 1.2345678901234568e+29)", "123456789012345678901234567890"],
    ["9007199254740993 (JSON.parse: 9007199254740992)", "9007199254740993"],
  ];
  for (const [what, number] of cases) {
    it(`reach the model as written: ${what}`, async () => {
      prompts.length = 0;
      const body = `{"state": {"order": {"id": ${number}, "lines": [${number}]}}, "questions": ${JSON.stringify(question)}}`;
      const response = await postJudgment(server, body);
      expect(response.status, show(response)).toBe(200);
      const state = prompts.at(-1)?.state ?? "";
      expect(state, state).toContain(`"id": ${number},\n`);
      expect(state, state).toContain(`    ${number}\n`);
      expect(state, state).not.toContain(JSON.stringify(JSON.parse(number)));
    });
  }

  it("reach the model as written inside a top-level array state", async () => {
    prompts.length = 0;
    const response = await postJudgment(server, `{"state": [9007199254740993, 1e999], "questions": ${JSON.stringify(question)}}`);
    expect(response.status, show(response)).toBe(200);
    const state = prompts.at(-1)?.state ?? "";
    expect(state, state).toContain("9007199254740993");
    expect(state, state).toContain("1e999");
    expect(state, state).not.toContain("9007199254740992");
  });

  it("are read from the same tokens as a state that wrote them in words would be: the prompt differs only there", async () => {
    prompts.length = 0;
    await postJudgment(server, `{"state": {"n": 9007199254740993}, "questions": ${JSON.stringify(question)}}`);
    await postJudgment(server, `{"state": {"n": 9007199254740992}, "questions": ${JSON.stringify(question)}}`);
    const [a, b] = prompts.map((p) => p.state);
    expect(a.replace("9007199254740993", "9007199254740992"), `${a}\n---\n${b}`).toBe(b);
  });
});

describe("a body in a content encoding", () => {
  const body = JSON.stringify({ state: "I was charged twice.", questions: question });

  for (const encoding of ["gzip", "deflate", "br", "zstd", "x-custom", "gzip, identity", "identity, gzip"]) {
    it(`is refused with 415 unsupported_content_encoding for ${JSON.stringify(encoding)}, charging nothing`, async () => {
      const before = await moneyTables(server.database);
      const response = await postJudgment(server, gzipSync(body).toString("latin1"), { headers: { "content-encoding": encoding } });
      expect(response.status, show(response)).toBe(415);
      expect(response.json, show(response)).toMatchObject({ code: "unsupported_content_encoding", detail: { error_type: "api_usage_error" } });
      expect(response.json.error, show(response)).toContain(JSON.stringify(encoding));
      expect(response.headers.get("accept-encoding"), show(response)).toBe("identity");
      expect(await moneyTables(server.database)).toEqual(before);
    });
  }

  it("is read when the encoding is identity", async () => {
    const response = await postJudgment(server, body, { headers: { "content-encoding": "identity" } });
    expect(response.status, show(response)).toBe(200);
  });

  it("is refused with 415 before it is read, even when it is too large", async () => {
    const response = await postJudgment(server, "x".repeat(300 * 1024), { headers: { "content-encoding": "gzip" } });
    expect(response.status, show(response)).toBe(415);
  });
});
