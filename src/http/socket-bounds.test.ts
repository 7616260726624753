import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../logger.js";
import { startHttpServer, type HttpServer } from "./node-server.js";
import { SOCKET_LIMITS, type SocketLimits } from "./socket-bounds.js";

/**
 * One connection cannot make the server hold more than its bounds (socket-bounds.ts), whatever
 * the route: a socket that pipelines requests and never reads gets at most `maxInFlight` of them
 * handed to the app, is closed once more than `maxWaiting` wait, and is closed when its unread
 * answers stay past `maxBufferedBytes` with nothing taken; other clients are served meanwhile.
 * Asserted on what the server counts (requests handed to the app, its per-connection peaks),
 * never on memory or time.
 */

/** About the size of GET /openapi.json. */
const DOCUMENT = JSON.stringify({ text: "x".repeat(44_000) });
const BIG = "y".repeat(512 * 1024);

interface Served {
  http: HttpServer;
  /** Requests the app was handed, by path. */
  calls: Map<string, number>;
}

async function serve(socketLimits?: SocketLimits): Promise<Served> {
  const calls = new Map<string, number>();
  const http = await startHttpServer(
    async (request) => {
      const path = new URL(request.url).pathname;
      calls.set(path, (calls.get(path) ?? 0) + 1);
      const body = path === "/big" ? BIG : path.startsWith("/n/") ? path : DOCUMENT;
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
    { hostname: "127.0.0.1", port: 0, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, log: createLogger("silent"), socketLimits },
  );
  return { http, calls };
}

const gets = (path: (i: number) => string, count: number) => Array.from({ length: count }, (_, i) => `GET ${path(i)} HTTP/1.1\r\nHost: test\r\n\r\n`).join("");

/** A client that sends everything at once and then never reads a byte. */
function neverReading(port: number, bytes: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.pause();
      socket.write(bytes);
      resolve(socket);
    });
    socket.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNRESET" || error.code === "EPIPE" ? undefined : reject(error)));
  });
}

const others = async (port: number) => {
  const response = await fetch(`http://127.0.0.1:${port}/other`);
  return { status: response.status, length: (await response.text()).length };
};

describe("with the default limits", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve();
  });
  afterAll(async () => {
    await served?.http.shutdown(0);
  });

  it("hands a never-reading socket's 1,500 pipelined GETs to the app at most maxInFlight at a time, and closes it", async () => {
    const socket = await neverReading(
      served.http.port,
      gets(() => "/openapi.json", 1_500),
    );
    await vi.waitFor(() => expect(served.http.socketStats().closedForPipelining).toBe(1), { timeout: 10_000, interval: 20 });
    const stats = served.http.socketStats();
    expect(stats.peakInFlight, JSON.stringify(stats)).toBeLessThanOrEqual(SOCKET_LIMITS.maxInFlight);
    expect(stats.peakWaiting, JSON.stringify(stats)).toBeLessThanOrEqual(SOCKET_LIMITS.maxWaiting);
    expect(served.calls.get("/openapi.json"), JSON.stringify(stats)).toBeLessThanOrEqual(SOCKET_LIMITS.maxInFlight);
    expect(await others(served.http.port)).toEqual({ status: 200, length: DOCUMENT.length });
    socket.destroy();
  });

  it("answers a client that pipelines past maxInFlight and reads: every answer, in order", async () => {
    const count = SOCKET_LIMITS.maxInFlight + SOCKET_LIMITS.maxWaiting / 2;
    const received = await new Promise<string>((resolve, reject) => {
      let text = "";
      const socket = connect({ host: "127.0.0.1", port: served.http.port }, () => socket.write(gets((i) => `/n/${i}`, count)));
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        text += chunk;
        if ((text.match(/HTTP\/1\.1 200/g) ?? []).length === count && text.endsWith(`/n/${count - 1}`)) socket.end(), resolve(text);
      });
      socket.on("error", reject);
    });
    const bodies = [...received.matchAll(/\r\n\r\n(\/n\/\d+)/g)].map((m) => m[1]);
    expect(bodies).toEqual(Array.from({ length: count }, (_, i) => `/n/${i}`));
    expect(served.http.socketStats().peakInFlight).toBeLessThanOrEqual(SOCKET_LIMITS.maxInFlight);
  });
});

describe("a socket whose answers are not taken", () => {
  const limits: SocketLimits = { maxInFlight: 4, maxWaiting: 64, maxBufferedBytes: 256 * 1024, stallTimeoutMs: 500 };
  let served: Served;
  beforeAll(async () => {
    served = await serve(limits);
  });
  afterAll(async () => {
    await served?.http.shutdown(0);
  });

  it("starts none of its waiting requests while its buffered answers pass maxBufferedBytes, and is closed once nothing is taken", async () => {
    const requests = 60;
    const socket = await neverReading(
      served.http.port,
      gets(() => "/big", requests),
    );
    await vi.waitFor(() => expect(served.http.socketStats().closedForNotReading).toBe(1), { timeout: 10_000, interval: 20 });
    const stats = served.http.socketStats();
    const started = served.calls.get("/big") ?? 0;
    // What the kernel's buffers took and at most maxInFlight answers past the limit: far from all 60 (30 MB).
    expect(started, JSON.stringify(stats)).toBeLessThan(requests / 2);
    expect(stats.peakBufferedBytes, JSON.stringify(stats)).toBeLessThanOrEqual(limits.maxBufferedBytes + limits.maxInFlight * BIG.length * 1.01);
    expect(stats.peakInFlight).toBeLessThanOrEqual(limits.maxInFlight);
    expect(stats.closedForPipelining).toBe(0);
    expect(await others(served.http.port)).toEqual({ status: 200, length: DOCUMENT.length });
    socket.destroy();
  });
});
