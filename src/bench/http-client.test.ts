import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { endpointUrl } from "../clients/judgment-endpoint.js";
import { createBenchClient, readRateLimit, readResponse, waitAfter429 } from "./http-client.js";

describe("reading the server's answers", () => {
  it("takes input tokens and the model from a 200", () => {
    const body = JSON.stringify({ model: "m", answers: {}, usage: { input_tokens: 281, output_tokens: 0 }, timing_ms: 3 });
    expect(readResponse(200, body, 12)).toEqual({ status: 200, latencyMs: 12, inputTokens: 281, model: "m" });
  });

  it("treats a 200 it cannot count as a failure, not as zero tokens", () => {
    expect(readResponse(200, "<html>", 1).error).toBe("a 200 without usage.input_tokens");
    expect(readResponse(200, "{}", 1).error).toBe("a 200 without usage.input_tokens");
  });

  it("keeps the error code of a failure, and Retry-After of a 429 only", () => {
    expect(readResponse(502, JSON.stringify({ error: "loading", code: "model_unavailable" }), 5)).toMatchObject({
      status: 502,
      inputTokens: 0,
      error: "model_unavailable",
      retryAfterMs: undefined,
    });
    expect(readResponse(429, JSON.stringify({ error: "slow down" }), 5, "3")).toMatchObject({ error: "slow down", retryAfterMs: 3000 });
    expect(readResponse(503, "busy", 5, "3")).toMatchObject({ error: "busy", retryAfterMs: undefined });
  });

  it("reads Retry-After as seconds or an HTTP date, waiting a second when it is unusable", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(waitAfter429("2", now)).toBe(2000);
    expect(waitAfter429("0", now)).toBe(0);
    expect(waitAfter429("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(waitAfter429("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
    expect(waitAfter429(undefined, now)).toBe(1000);
    expect(waitAfter429("soon", now)).toBe(1000);
  });

  it("reads the plan's limit from x-ratelimit-limit and -remaining, only when both are whole numbers", () => {
    expect(readRateLimit({ "x-ratelimit-limit": "60", "x-ratelimit-remaining": "0" })).toEqual({ limit: 60, remaining: 0 });
    expect(readRateLimit({ "x-ratelimit-limit": "60" })).toBeUndefined();
    expect(readRateLimit({ "x-ratelimit-limit": "lots", "x-ratelimit-remaining": "3" })).toBeUndefined();
    expect(readRateLimit({})).toBeUndefined();
  });

  it("posts to /v1/systemone under the base address, keeping a proxy's path", () => {
    expect(endpointUrl("http://127.0.0.1:8080").href).toBe("http://127.0.0.1:8080/v1/systemone");
    expect(endpointUrl("https://judge.example/api/").href).toBe("https://judge.example/api/v1/systemone");
    expect(endpointUrl("https://judge.example/api").href).toBe("https://judge.example/api/v1/systemone");
    expect(() => endpointUrl("ftp://x")).toThrow(TypeError);
  });
});

describe("the bench client against a live socket", () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("sends the key, reuses one connection, passes on the rate-limit headers, and reports a refused connection as a network failure", async () => {
    const connections = new Set<unknown>();
    const seen: (string | undefined)[] = [];
    server = http.createServer((req, res) => {
      connections.add(req.socket);
      seen.push(req.headers.authorization);
      req.resume();
      req.on("end", () => {
        res.setHeader("x-ratelimit-limit", "100");
        res.setHeader("x-ratelimit-remaining", String(100 - seen.length));
        res.end(JSON.stringify({ model: "m", usage: { input_tokens: 7 } }));
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = createBenchClient({ url, key: "tjs_test", maxSockets: 1 });
    for (let i = 0; i < 5; i++) {
      const outcome = await client.send({ body: "{}", questions: 1 });
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ status: 200, inputTokens: 7, rateLimit: { limit: 100, remaining: 99 - i } });
    }
    client.close();
    expect(seen).toEqual(Array(5).fill("Bearer tjs_test"));
    expect(connections.size).toBe(1);

    const refused = createBenchClient({ url: "http://127.0.0.1:1", key: "k", maxSockets: 1 });
    expect(await refused.send({ body: "{}", questions: 1 })).toMatchObject({ status: 0, error: expect.stringContaining("ECONNREFUSED") });
    refused.close();
  });
});
