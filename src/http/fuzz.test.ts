// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JudgmentEngine } from "../engine/types.js";
import { moneyTables } from "../testing/billing-http.js";
import { STORE_ENGINES } from "../testing/databases.js";
import { hostileBytes, hostileRequest, seededRandom, type HostileRequest } from "../testing/hostile-requests.js";
import { startMainServer, type MainServer } from "../testing/main-server.js";
import { rawExchange } from "../testing/raw-http.js";
import { readyTinyEngine } from "../testing/server.js";

/**
 * 10,000 invalid or hostile requests over HTTP and 600 malformed ones over raw sockets, from a
 * seeded generator (the seed is printed with every failure), against the service as main.ts
 * starts it on the real engine, on each store (PostgreSQL refuses what SQLite takes, a NUL in
 * text): not one 5xx, every answer a JSON error body with the status its fault calls for, no
 * request reaches the model, the money tables are exactly as before, and the service is still
 * healthy afterwards.
 */

const SEED = 20_261_124;
const REQUESTS = 10_000;
const RAW_REQUESTS = 600;
const CONCURRENCY = 32;
const ADMIN_TOKEN = "a-fuzzed-admin-token-0123456789abcdef";

let tiny: JudgmentEngine;
let server: MainServer;
let prepared = 0;

beforeAll(async () => {
  tiny = await readyTinyEngine();
});

afterAll(async () => {
  agent.destroy();
  await tiny?.close();
});

// node:http rather than fetch: it costs half the CPU per request, and client and server share this process.
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function send(request: HostileRequest): Promise<{ status: number; text: string }> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  // Declared, as fetch would: node:http sends a DELETE's body undeclared, and its bytes then read as a next request.
  const headers = body === undefined ? request.headers : { ...request.headers, "content-length": String(body.length) };
  return new Promise((resolve, reject) => {
    const outgoing = http.request(server.url + request.path, { method: request.method, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

async function inParallel(count: number, run: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await run(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

describe.each(STORE_ENGINES)("hostile traffic on %s", (store) => {
  beforeAll(async () => {
    prepared = 0;
    const counting: JudgmentEngine = { ...tiny, prepare: (prompt, signal) => (prepared++, tiny.prepare(prompt, signal)), close: async () => undefined };
    server = await startMainServer({ engine: counting, balanceMicro: 5_000_000, store, settings: { JUDGE_ADMIN_TOKEN: ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it(`answers ${REQUESTS} invalid HTTP requests and ${RAW_REQUESTS} malformed ones without a 5xx, a charge or a model call`, async () => {
    const before = await moneyTables(server.database);
    const random = seededRandom(SEED);
    const wrong: string[] = [];
    const statuses: Record<string, number> = {};
    const count = (status: number) => (statuses[status] = (statuses[status] ?? 0) + 1);
    const started = performance.now();

    const requests = Array.from({ length: REQUESTS }, () => hostileRequest(random, server.key, ADMIN_TOKEN));
    const httpStarted = performance.now();
    await inParallel(REQUESTS, async (i) => {
      const request = requests[i];
      const described = () =>
        `#${i} (seed ${SEED}) ${request.what}: ${request.method} ${request.path.slice(0, 80)} ${JSON.stringify(request.headers).slice(0, 300)} ${String(request.body ?? "").slice(0, 300)}`;
      try {
        const response = await send(request);
        const text = response.text;
        count(response.status);
        const body = (() => {
          try {
            return JSON.parse(text) as { code?: unknown; error?: unknown };
          } catch {
            return {};
          }
        })();
        if (!request.expected.includes(response.status) || typeof body.code !== "string" || typeof body.error !== "string") {
          wrong.push(`${described()}\n  -> ${response.status} ${text.slice(0, 300)}`);
        }
      } catch (error) {
        count(0);
        wrong.push(`${described()}\n  -> no answer: ${String((error as Error).cause ?? error)}`);
      }
    });

    const httpSeconds = (performance.now() - httpStarted) / 1000;
    const rawRandom = seededRandom(SEED + 1);
    const raws = Array.from({ length: RAW_REQUESTS }, () => hostileBytes(rawRandom, server.key));
    await inParallel(RAW_REQUESTS, async (i) => {
      const { what, chunks, halfClose } = raws[i];
      const response = await rawExchange(server.port, { chunks, halfClose, timeoutMs: 5_000 });
      count(response.status);
      // A refusal is JSON like every other error; a client that stopped sending may get nothing.
      const refusedProperly = response.status >= 400 && response.status < 500 && /"code":"[a-z_]+"/.test(response.body);
      if (!(refusedProperly || (halfClose && response.status === 0))) wrong.push(`raw #${i} (seed ${SEED + 1}) ${what}\n  -> ${response.raw.slice(0, 300)}`);
    });
    const seconds = (performance.now() - started) / 1000;

    expect(wrong.slice(0, 20), `${wrong.length} wrong answers; statuses ${JSON.stringify(statuses)}`).toEqual([]);
    expect(
      Object.keys(statuses).filter((s) => Number(s) >= 500),
      JSON.stringify(statuses),
    ).toEqual([]);
    expect(prepared, "a hostile request reached the model").toBe(0);
    expect(await moneyTables(server.database)).toEqual(before);
    const health = await fetch(`${server.url}/health`);
    expect(health.status, await health.clone().text()).toBe(200);
    expect(seconds, `took ${seconds.toFixed(1)} s (HTTP ${httpSeconds.toFixed(1)} s)`).toBeLessThan(45);
  }, 120_000);
});
