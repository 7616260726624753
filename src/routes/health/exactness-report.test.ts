import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall } from "../../testing/admin-client.js";
import { call, show } from "../../testing/http-client.js";
import { parseExposition, sampleValue } from "../../testing/prometheus.js";
import { readyTinyEngine, startTestServer, type TestServer } from "../../testing/server.js";
import type { JudgmentEngine } from "../../engine/types.js";

/** The engine's exactness contract (JUDGE_EXACTNESS) is visible to operators: /health and /metrics. */

let server: TestServer;
let engine: JudgmentEngine;
beforeAll(async () => {
  engine = await readyTinyEngine();
  server = await startTestServer({ engine });
});
afterAll(async () => {
  await server?.close();
  await engine?.close();
});

describe("the exactness contract is reported", () => {
  it("/health names the mode and its bound", async () => {
    const response = await call(server.url, "/health");
    expect(response.status, show(response)).toBe(200);
    expect((response.json as any).engine.exactness, show(response)).toEqual({ mode: "strict", bound: 1e-9 });
  });

  it("/metrics exposes judge_engine_exactness_max_dp by mode and figure", async () => {
    const response = await adminCall(server, "GET", "/metrics");
    expect(response.status, show(response)).toBe(200);
    const samples = parseExposition(response.text);
    expect(sampleValue(samples, "judge_engine_exactness_max_dp", { mode: "strict", figure: "bound" }), response.text).toBe(1e-9);
  });
});
