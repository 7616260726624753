import OpenAI from "openai";
import { TypeSafeClient } from "@typesafe-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, show } from "../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../testing/server.js";
import { DECISIONS_MODEL_ALIASES } from "../decisions/route.js";
import { OWNED_BY } from "./body.js";
import { MODEL_ALIASES } from "../systemone/route.js";

/**
 * GET /v1/models answers both ecosystems from one body: `client.models.list()` of the official
 * `openai` package and of `@typesafe-ai/sdk`, unchanged, each see the served model and every
 * alias a judging route accepts.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const everyName = () => [server.engine.modelId, ...MODEL_ALIASES, ...DECISIONS_MODEL_ALIASES];

describe("GET /v1/models in both shapes", () => {
  it("the openai SDK's client.models.list() lists every accepted name, with OpenAI's fields", async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    const message = JSON.stringify(models);
    expect(
      models.map((m) => m.id),
      message,
    ).toEqual(everyName());
    for (const model of models) {
      expect(model.object, message).toBe("model");
      expect(Number.isInteger(model.created) && model.created > 1_700_000_000, message).toBe(true);
      expect(model.owned_by, message).toBe(OWNED_BY);
    }
  });

  it("@typesafe-ai/sdk's client.models.list() lists the same names in the ecosystem's shape", async () => {
    const client = new TypeSafeClient({ apiKey: server.key, baseURL: server.url, logLevel: "off" });
    const models = await client.models.list();
    const message = JSON.stringify(models);
    expect(
      models.map((m) => m.name),
      message,
    ).toEqual(everyName());
    for (const model of models) expect(model.release_date, message).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("the OpenAI alias is accepted by POST /v1/decisions, the ecosystem's by POST /v1/systemone", async () => {
    const decisions = await call(server.url, "/v1/decisions", {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: DECISIONS_MODEL_ALIASES[0], input: "It is.", questions: [{ type: "predicate", name: "q", instructions: "It is." }] }),
    });
    expect(decisions.status, show(decisions)).toBe(200);
    const list = await call(server.url, "/v1/models");
    expect(
      list.json.data.map((m: { id: string }) => m.id),
      show(list),
    ).toEqual(list.json.models.map((m: { name: string }) => m.name));
  });
});
