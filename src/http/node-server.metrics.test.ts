import { afterAll, beforeAll, expect, it } from "vitest";
import { loadingEngine } from "../testing/fault-engines.js";
import { startMainServer, type MainServer } from "../testing/main-server.js";
import { rawExchange } from "../testing/raw-http.js";

/**
 * What the HTTP server refuses before any route (408, 431, 400) is traffic too: it shows in
 * judge_http_requests_total like every other answer, under route="refused_by_http_server". And a
 * /health 503 while the model loads is a probe's answer, not a server error of the console's.
 */

const TOKEN = "an-admin-token-for-metrics-0123456789";
let server: MainServer;
beforeAll(async () => {
  server = await startMainServer({ engine: loadingEngine(), settings: { JUDGE_ADMIN_TOKEN: TOKEN, JUDGE_HEADERS_TIMEOUT_MS: "1000" } });
});
afterAll(async () => {
  await server?.close();
});

const admin = (path: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });

it("counts the HTTP server's own 400, 431 and 408 in /metrics", async () => {
  expect((await rawExchange(server.port, { chunks: ["NOT HTTP AT ALL\r\n\r\n"] })).status).toBe(400);
  expect((await rawExchange(server.port, { chunks: [`GET /health HTTP/1.1\r\nHost: t\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`] })).status).toBe(431);
  expect((await rawExchange(server.port, { chunks: ["GET /health HTTP/1.1\r\nHost: t\r\n"] })).status).toBe(408);
  const metrics = await (await admin("/metrics")).text();
  for (const status of ["400", "431", "408"]) {
    expect(metrics, metrics).toMatch(new RegExp(`judge_http_requests_total\\{[^}]*route="refused_by_http_server"[^}]*status="${status}"[^}]*\\} 1`));
  }
});

it("a /health 503 while the model loads is no server error on the console's overview", async () => {
  expect((await fetch(`${server.url}/health`)).status).toBe(503);
  const overview = (await (await admin("/admin/v1/overview")).json()) as { http: { status_5xx: number } };
  expect(overview.http.status_5xx, JSON.stringify(overview)).toBe(0);
});
