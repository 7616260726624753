import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "./testing/admin-client.js";
import { evaluateFailsEngine } from "./testing/fault-engines.js";
import { hangingEngine, type HangingEngine } from "./testing/hanging-engine.js";
import { postJudgment, show } from "./testing/http-client.js";
import { parseExposition, sampleValue } from "./testing/prometheus.js";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "./testing/server.js";

/**
 * The access log and the client that leaves: through real sockets, a client that closes its
 * connection mid-body or while the model runs is logged (and counted) as 499
 * client_closed_request, never as a 500 internal_error; every line of a request carries its id.
 */

const SECRET_STATE = "state-text-that-must-never-be-logged-7f3a";
const BODY = JSON.stringify({
  state: SECRET_STATE,
  questions: { q: { type: "noul", instructions: "Is it paid?", criteria: { true: "yes", false: "no" } } },
});

let server: TestServer;
let engine: HangingEngine;
beforeAll(async () => {
  engine = hangingEngine();
  server = await startTestServer({ engine });
});
afterAll(async () => {
  await server?.close();
});

type Line = Record<string, unknown>;
const parsed = (from: number): Line[] => server.logLines.slice(from).map((line) => JSON.parse(line) as Line);

/** Sends `head` and `bodyPart` over a raw socket (Content-Length announcing the whole body). */
function rawPost(path: string, authorization: string, body: string, bodyPart: string): Socket {
  const { port } = new URL(server.url);
  const socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => undefined);
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${authorization}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${bodyPart}`,
  );
  return socket;
}

/** The access-log line of the one request to `path` logged since `from`, once it is there. */
async function accessLine(from: number, path: string): Promise<Line> {
  for (let waited = 0; waited < 5_000; waited += 20) {
    const lines = parsed(from).filter((l) => l.message === "request" && l.path === path);
    if (lines.length > 0) {
      expect(lines, JSON.stringify(lines)).toHaveLength(1);
      return lines[0];
    }
    await sleep(20);
  }
  throw new Error(`no access-log line for ${path}:\n${server.logLines.slice(from).join("")}`);
}

function expectClientAbort(from: number, line: Line): void {
  const all = server.logLines.slice(from).join("");
  expect(line.status, all).toBe(499);
  expect(line.code, all).toBe("client_closed_request");
  expect(line.level, all).toBe("info");
  expect(typeof line.request_id === "string" && line.request_id.startsWith("req_"), all).toBe(true);
  expect(all, "a client that left was logged as a failure").not.toMatch(/internal_error|"status":500|"level":"error"/);
  expect(all.includes(SECRET_STATE) || all.includes(server.key) || all.includes(TEST_ADMIN_TOKEN), all).toBe(false);
}

async function scrapeAborts(route: string): Promise<number> {
  const response = await adminCall(server, "GET", "/metrics");
  expect(response.status, show(response)).toBe(200);
  return sampleValue(parseExposition(response.text), "judge_http_requests_total", { method: "POST", route, status: "499" });
}

describe("a client that disconnects", () => {
  it("mid-body on POST /v1/systemone is logged and counted as 499 client_closed_request", async () => {
    const counted = await scrapeAborts("/v1/systemone");
    const from = server.logLines.length;
    const socket = rawPost("/v1/systemone", `Bearer ${server.key}`, BODY, BODY.slice(0, 20));
    await sleep(200);
    socket.destroy();
    expectClientAbort(from, await accessLine(from, "/v1/systemone"));
    expect(await scrapeAborts("/v1/systemone")).toBe(counted + 1);
  });

  it("while the model runs on POST /v1/systemone is logged as 499, and the engine was told", async () => {
    const calls = engine.calls;
    const aborted = engine.aborted;
    const from = server.logLines.length;
    const socket = rawPost("/v1/systemone", `Bearer ${server.key}`, BODY, BODY);
    for (let waited = 0; engine.calls === calls; waited += 10) {
      if (waited > 5_000) throw new Error(`the model was never asked:\n${server.logLines.slice(from).join("")}`);
      await sleep(10);
    }
    socket.destroy();
    expectClientAbort(from, await accessLine(from, "/v1/systemone"));
    expect(engine.aborted, "the engine's signal aborted").toBe(aborted + 1);
  });

  it("mid-body on an admin route is logged and counted as 499, not 500", async () => {
    const counted = await scrapeAborts("/admin/v1/accounts");
    const from = server.logLines.length;
    const body = JSON.stringify({ name: "never finished" });
    const socket = rawPost("/admin/v1/accounts", `Bearer ${TEST_ADMIN_TOKEN}`, body, body.slice(0, 5));
    await sleep(200);
    socket.destroy();
    expectClientAbort(from, await accessLine(from, "/admin/v1/accounts"));
    expect(await scrapeAborts("/admin/v1/accounts")).toBe(counted + 1);
  });
});

describe("the log lines of a request", () => {
  it("all carry its request id, as structured JSON, without the key or the state", async () => {
    const failing = await startTestServer({ engine: evaluateFailsEngine() });
    try {
      const from = failing.logLines.length;
      const response = await postJudgment(failing, JSON.parse(BODY));
      expect(response.status, show(response)).toBe(502);
      const id = response.headers.get("x-request-id");
      const lines = failing.logLines.slice(from).map((line) => JSON.parse(line) as Line);
      const all = failing.logLines.slice(from).join("");
      const mine = lines.filter((l) => l.request_id === id);
      // The error (with what went wrong) and the access line; nothing of the request without its id.
      expect(
        mine.map((l) => `${l.level} ${l.message} ${l.code}`),
        all,
      ).toEqual(["error request failed model_failed", "info request model_failed"]);
      expect(
        lines.filter((l) => l.request_id === undefined),
        all,
      ).toEqual([]);
      for (const line of mine) expect(typeof line.time === "string" && !Number.isNaN(Date.parse(line.time)), all).toBe(true);
      expect(all.includes(SECRET_STATE) || all.includes(failing.key) || /bearer|authorization/i.test(all), all).toBe(false);
    } finally {
      await failing.close();
    }
  });
});
