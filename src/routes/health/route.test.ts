import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLlamaEngine } from "../../engine/llama/engine.js";
import { failedEngine, loadingEngine } from "../../testing/fault-engines.js";
import { call, show, type CapturedResponse } from "../../testing/http-client.js";
import { expectErrorResponse, expectRequestId } from "../../testing/route-assertions.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/** GET /health (no key) and GET /v1/models (no key). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/**
 * 503 with `{ error, code, status }` saying why, and each part asked: the model down with the
 * reason, the database (SQLite here) up. The body is also checked against the OpenAPI document elsewhere.
 */
function expectUnhealthy(response: CapturedResponse, status: "loading" | "failed", because: RegExp): void {
  const message = show(response);
  expectErrorResponse(response, 503, "service_unavailable");
  expect(response.json.error, `the message should say why\n${message}`).toMatch(because);
  // An error body like every other: the hosted service's shape beside ours.
  expect(response.json.detail, message).toEqual({ error_type: "api_error", message: response.json.error });
  expect(response.json.status, message).toBe(status);
  expect(response.json.parts?.model, message).toMatchObject({ ok: false, detail: expect.stringMatching(because) });
  expect(response.json.parts?.database, message).toMatchObject({ ok: true, name: expect.stringMatching(/^SQLite /) });
  expect(response.json.parts?.rate_limiter, `no Redis is configured\n${message}`).toBeUndefined();
}

describe("GET /health", () => {
  it("is 200 with status, model and upstream when the real engine is ready, without a key", async () => {
    const response = await call(server.url, "/health");
    expect(response.status, show(response)).toBe(200);
    expect(response.headers.get("content-type") ?? "", show(response)).toMatch(/^application\/json/);
    expect(response.json, show(response)).toEqual({
      status: "ok",
      model: server.engine.modelId,
      upstream: "ok",
      engine: { kind: "llama", backend: "cpu", slots: 1, exactness: { mode: "strict", bound: 1e-9 } },
    });
    expectRequestId(response);
  });

  it("ignores an Authorization header, even an invalid one", async () => {
    const response = await call(server.url, "/health", { headers: { authorization: "Bearer not-a-key" } });
    expect(response.status, show(response)).toBe(200);
  });

  it("is 503 while the model is loading, and says so", async () => {
    const loading = await startTestServer({ engine: loadingEngine("downloading the model: 42%") });
    try {
      const response = await call(loading.url, "/health");
      expectUnhealthy(response, "loading", /loading/);
      expect(response.json.error, show(response)).toContain("downloading the model: 42%");
    } finally {
      await loading.close();
    }
  });

  it("is 503 when the model has failed, with the failure", async () => {
    const failed = await startTestServer({ engine: failedEngine("model failed to load: out of memory") });
    try {
      expectUnhealthy(await call(failed.url, "/health"), "failed", /out of memory/);
    } finally {
      await failed.close();
    }
  });

  it("is 503 with the reason when the real engine is given a model file that does not exist", async () => {
    const missing = path.join(os.tmpdir(), `tjs-no-such-dir-${randomBytes(6).toString("hex")}`, "missing-model.gguf");
    const engine = createLlamaEngine({ model: missing, modelsDir: path.dirname(missing), contextSize: 8192, maxRequestTokens: 100_000, threads: 1 });
    await engine.ready;
    const broken = await startTestServer({ engine });
    try {
      const response = await call(broken.url, "/health");
      expectUnhealthy(response, "failed", /fail/i);
      expect(response.json.error, `the message should name the missing file\n${show(response)}`).toContain(missing);
      expect(response.json.error, show(response)).toMatch(/no model file|not found|does not exist|ENOENT/i);
      // And the judgment endpoint says the model is unavailable: a 502, not a 500.
      const judged = await call(broken.url, "/v1/systemone", {
        method: "POST",
        headers: { authorization: `Bearer ${broken.key}`, "content-type": "application/json" },
        body: JSON.stringify({ questions: { q: { type: "noul", instructions: "It is." } } }),
      });
      expectErrorResponse(judged, 502, "model_unavailable");
    } finally {
      await broken.close();
      await engine.close();
    }
  });
});

describe("GET /v1/models", () => {
  it("lists the served model and the jev-latest and jev-preview aliases, without a key", async () => {
    const response = await call(server.url, "/v1/models");
    const message = show(response);
    expect(response.status, message).toBe(200);
    expect(response.headers.get("content-type") ?? "", message).toMatch(/^application\/json/);
    expectRequestId(response);
    expect(Object.keys(response.json), message).toEqual(["models", "object", "data"]);
    const models = response.json.models as { name: unknown; description: unknown; release_date: unknown }[];
    expect(Array.isArray(models), message).toBe(true);
    for (const model of models) {
      expect(typeof model.name, message).toBe("string");
      expect(typeof model.description, message).toBe("string");
      expect(model.release_date, message).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(Number.isNaN(Date.parse(model.release_date as string)), `release_date is not a real date\n${message}`).toBe(false);
    }
    const names = models.map((model) => model.name);
    expect(names, message).toEqual(expect.arrayContaining([server.engine.modelId, "jev-latest", "jev-preview"]));
    expect(new Set(names).size, `model names repeat\n${message}`).toBe(names.length);
  });

  it("every listed name is accepted as the request's model (the decisions alias by POST /v1/decisions: see models.sdk.test.ts)", async () => {
    const list = await call(server.url, "/v1/models");
    for (const { name } of (list.json.models as { name: string; description: string }[]).filter((m) => !m.description.includes("/v1/decisions"))) {
      const response = await call(server.url, "/v1/systemone", {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: name, questions: { q: { type: "noul", instructions: "It is." } } }),
      });
      expect(response.status, show(response, `model ${name}`)).toBe(200);
      expect(response.json.model, show(response)).toBe(server.engine.modelId);
    }
  });
});
