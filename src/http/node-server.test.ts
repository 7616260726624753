import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hangingEngine } from "../testing/hanging-engine.js";
import { startMainServer, type MainServer } from "../testing/main-server.js";
import { rawExchange, type RawResponse } from "../testing/raw-http.js";

/**
 * What the HTTP server itself answers, before any route: clients too slow to send their
 * request, and requests that are not HTTP. Every refusal carries the JSON error body of every
 * other error, and the connection is closed. Raw sockets, against the server main.ts starts.
 */

const HEADERS_TIMEOUT_MS = 1_000;
const BODY_TIMEOUT_MS = 2_000;
let server: MainServer;

beforeAll(async () => {
  server = await startMainServer({
    engine: hangingEngine(),
    settings: { JUDGE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), JUDGE_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) },
  });
});

afterAll(async () => {
  await server?.close();
});

const show = (response: RawResponse) => JSON.stringify(response);

function expectJsonRefusal(response: RawResponse, status: number, code: string): Record<string, unknown> {
  expect(response.status, show(response)).toBe(status);
  expect(response.headers["content-type"], show(response)).toBe("application/json");
  expect(response.headers["connection"], show(response)).toBe("close");
  expect(response.headers["x-request-id"], show(response)).toMatch(/^req_[0-9a-f]{24}$/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body, show(response)).toMatchObject({ code, error: expect.any(String), detail: { error_type: expect.any(String), message: body.error } });
  return body;
}

const judgmentHead = (key: string, length: number) =>
  `POST /v1/systemone HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

describe("the HTTP server under the app", () => {
  it("answers headers that never finish with 408 request_timeout once the headers timeout passes", async () => {
    const response = await rawExchange(server.port, { chunks: ["POST /v1/systemone HTTP/1.1\r\nHost: test\r\nContent-Type: applic"] });
    const body = expectJsonRefusal(response, 408, "request_timeout");
    expect(body.error, show(response)).toContain("headers did not arrive within 1 s");
    // Node checks every quarter of the headers timeout here (every second at most), not every 30 s.
    expect(response.ms, show(response)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(response.ms, show(response)).toBeLessThan(HEADERS_TIMEOUT_MS + 1_500);
  });

  it("answers a body that never finishes with 408 request_timeout once the body timeout passes, holding nothing", async () => {
    const response = await rawExchange(server.port, { chunks: [judgmentHead(server.key, 200) + '{"state": "half a bo'] });
    const body = expectJsonRefusal(response, 408, "request_timeout");
    expect(body.error, show(response)).toContain("did not arrive whole within 2 s");
    expect(response.ms, show(response)).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    expect(response.ms, show(response)).toBeLessThan(BODY_TIMEOUT_MS + 1_500);
    const summary = await server.running.services.accounts.summary(server.accountId);
    expect(summary?.usage, JSON.stringify(summary)).toMatchObject({ reserved: 0, reservedMicro: 0, used: 0 });
  });

  it("reads a body that trickles in but arrives within the body timeout", async () => {
    const text = '{"state": "x", "questions": {}}';
    const parts = [text.slice(0, 10), text.slice(10, 20), text.slice(20)];
    const response = await rawExchange(server.port, { chunks: [judgmentHead(server.key, text.length), ...parts], pauseMs: 400 });
    // The route's own answer (no questions), not the server's 408.
    expect(response.status, show(response)).toBe(400);
    expect(JSON.parse(response.body).code, show(response)).toBe("invalid_request");
  });

  it("answers headers over 16 KB with 431 headers_too_large", async () => {
    const response = await rawExchange(server.port, { chunks: [`GET /health HTTP/1.1\r\nHost: test\r\nX-Padding: ${"a".repeat(20_000)}\r\n\r\n`] });
    expectJsonRefusal(response, 431, "headers_too_large");
  });

  const malformed: [string, string][] = [
    ["a request line that is not HTTP", "HELLO THERE\r\n\r\n"],
    ["an unknown method", "FETCH /health HTTP/1.1\r\nHost: test\r\n\r\n"],
    ["a header without a colon", "GET /health HTTP/1.1\r\nHost: test\r\nNo colon here\r\n\r\n"],
    ["a header name with a space", "GET /health HTTP/1.1\r\nHost: test\r\nBad Name: x\r\n\r\n"],
    [
      "both Content-Length and Transfer-Encoding",
      "POST /v1/systemone HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    ["a chunk size that is not hexadecimal", "POST /v1/systemone HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"],
    ["a bare CR inside a header value", "GET /health HTTP/1.1\r\nHost: te\rst\r\n\r\n"],
  ];
  for (const [what, request] of malformed) {
    it(`answers ${what} with 400 malformed_request`, async () => {
      const response = await rawExchange(server.port, { chunks: [request] });
      const body = expectJsonRefusal(response, 400, "malformed_request");
      expect(body.error, show(response)).toMatch(/^not a well-formed HTTP\/1\.1 request: /);
    });
  }

  it("answers CONNECT (a tunnel request) with 404 not_found instead of dropping the connection", async () => {
    const response = await rawExchange(server.port, { chunks: ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"] });
    const body = expectJsonRefusal(response, 404, "not_found");
    expect(body.error, show(response)).toContain("CONNECT example.com:443");
  });

  it("keeps serving well-formed requests afterwards", async () => {
    const response = await fetch(`${server.url}/health`);
    expect(response.status, await response.clone().text()).toBe(200);
  });
});
