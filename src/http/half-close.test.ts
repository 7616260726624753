import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { judgmentBody, waitFor } from "../testing/billing-http.js";
import { reservationRows } from "../testing/billing-store.js";
import { faultEngine } from "../testing/fault-engines.js";
import { parseResponse, rawExchange, type RawResponse } from "../testing/raw-http.js";
import { startTestServer, type TestServer } from "../testing/server.js";

/**
 * A client that half-closes its sending side (shutdown(SHUT_WR)) once its request is sent still
 * reads: it gets its answer, and is charged for it. A client that closed the connection sends
 * the same FIN, and is found out by the server's `100 Continue` probes: it is cut as a client
 * that left, its hold released while the model still runs (http/half-close.ts). Raw sockets,
 * against the server main.ts starts.
 */

let server: TestServer;
let port: number;
/** How long the model takes to answer (it is given no signal: the route stops waiting for it on its own). */
let answerMs = 200;
const seen = { evaluations: 0 };

beforeAll(async () => {
  server = await startTestServer({
    engine: faultEngine({
      evaluate: () => {
        seen.evaluations++;
        return new Promise((resolve) =>
          setTimeout(() => resolve({ labelLogProbs: [[Math.log(0.3), Math.log(0.7)]], inputTokens: 1, timingMs: answerMs }), answerMs),
        );
      },
    }),
  });
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await server?.close();
});

const show = (response: RawResponse) => JSON.stringify(response);

/** The final response, past any interim (1xx) ones. */
function finalResponse(response: RawResponse): RawResponse {
  let raw = response.raw;
  while (/^HTTP\/1\.1 1\d\d /.test(raw) && raw.includes("\r\n\r\n")) raw = raw.slice(raw.indexOf("\r\n\r\n") + 4);
  return parseResponse(raw, response.ms);
}

function request(options: { connection?: "close"; version?: "1.0" } = {}) {
  const body = JSON.stringify(judgmentBody(1));
  const head = [
    `POST /v1/systemone HTTP/${options.version ?? "1.1"}`,
    "Host: test",
    `Authorization: Bearer ${server.key}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(options.connection ? [`Connection: ${options.connection}`] : []),
  ];
  return `${head.join("\r\n")}\r\n\r\n${body}`;
}

const charges = async () => (await server.store.ledger.entries(server.accountId)).filter((e) => e.kind !== "top_up").length;

describe("a client that half-closes after sending", () => {
  for (const connection of [undefined, "close"] as const) {
    it(`gets its answer, and is charged once${connection ? " (Connection: close)" : " (keep-alive)"}`, async () => {
      answerMs = 400;
      const [before, charged] = [seen.evaluations, await charges()];
      const sent = await rawExchange(port, { chunks: [request({ connection })], halfClose: true, timeoutMs: 10_000 });
      const response = finalResponse(sent);
      expect(response.status, show(sent)).toBe(200);
      expect(JSON.parse(response.body).answers.q0, show(sent)).toEqual({ type: "noul", noul: 0.3 });
      // Told it is still being worked on, by interim responses every HTTP/1.1 client reads past.
      expect(sent.raw, show(sent)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
      expect(seen.evaluations - before).toBe(1);
      expect(await charges(), show(sent)).toBe(charged + 1);
      // The server closes the connection once it has answered: the client is not kept waiting for an end.
      expect(sent.ms, show(sent)).toBeLessThan(5_000);
    });
  }
});

describe("a client that closes the connection while its request runs", () => {
  it("is cut as a client that left: its hold is released while the model still runs, nothing is charged", async () => {
    answerMs = 6_000;
    const charged = await charges();
    const socket = connect({ host: "127.0.0.1", port });
    socket.on("error", () => undefined);
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.write(request());
    let rows: Record<string, unknown>[] = [];
    await waitFor(
      async () => (rows = await reservationRows(server.database)).length === 1,
      () => `no hold: ${JSON.stringify(rows)}`,
    );
    // Gone: the FIN is all the server sees at first, as from a client that only half-closed.
    socket.destroy();
    const closedAt = performance.now();
    await waitFor(
      async () => (rows = await reservationRows(server.database)).length === 0,
      () => `the hold is still there: ${JSON.stringify(rows)}`,
      4_500,
    );
    expect(performance.now() - closedAt, "released before the model answered").toBeLessThan(answerMs - 1_000);
    expect(await charges()).toBe(charged);
  });

  it("an HTTP/1.0 client, which may not be sent an interim response, is cut at its FIN as before", async () => {
    answerMs = 200;
    const charged = await charges();
    const sent = await rawExchange(port, { chunks: [request({ version: "1.0" })], halfClose: true, timeoutMs: 10_000 });
    expect(sent.status, show(sent)).toBe(0);
    expect(await charges()).toBe(charged);
  });
});

describe("a client that half-closes before its request is whole", () => {
  for (const [what, cut] of [
    ["in the body", 10],
    ["in the headers", -40],
  ] as const) {
    it(`is refused at once with 400 malformed_request saying so, when it stops ${what}; nothing is held`, async () => {
      const whole = request();
      const sent = cut > 0 ? whole.slice(0, whole.length - cut) : whole.slice(0, -cut);
      const response = await rawExchange(port, { chunks: [sent], halfClose: true, timeoutMs: 10_000 });
      expect(response.status, show(response)).toBe(400);
      expect(JSON.parse(response.body), show(response)).toMatchObject({
        code: "malformed_request",
        error: expect.stringContaining("ended its sending side before the request was whole"),
      });
      // Well before the body timeout (30 s): the end of sending is news the server acts on.
      expect(response.ms, show(response)).toBeLessThan(5_000);
      expect(await reservationRows(server.database), show(response)).toEqual([]);
    });
  }
});
