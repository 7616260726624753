import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chargeFor } from "../../money/money.js";
import { adminCall } from "../../testing/admin-client.js";
import { judgmentBody } from "../../testing/billing-http.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { call, postJudgment, postWithKey, show, type CapturedResponse } from "../../testing/http-client.js";
import { parseExposition, sampleValue } from "../../testing/prometheus.js";
import { addTestAccount, startTestServer, type TestServer } from "../../testing/server.js";

/**
 * Several models of different engine kinds behind one instance (JUDGE_MODELS): the in-process
 * llama.cpp on the tiny fixture ("small", the default), the systemone gateway in front of a real
 * second instance ("big", ×3), the decisions gateway in front of the same instance's
 * /v1/decisions ("dec", ×2), a second in-process model that loads on first use and unloads
 * when idle ("cheap", ×0.25; "small" stays loaded, being the default), and a gateway whose upstream is down ("down", falling back to small).
 */

const PRICE = 1_000_000; // µ€ per million tokens: one µ€ per token, so every multiplier shows in the ledger

let upstream: TestServer;
let server: TestServer;

beforeAll(async () => {
  upstream = await startTestServer();
  const dir = mkdtempSync(join(tmpdir(), "judge-many-models-"));
  const fixture = await tinyFixturePath();
  const file = join(dir, "models.json");
  writeFileSync(
    file,
    JSON.stringify({
      default: "small",
      // Every in-process model would unload after 1 s idle; the default stays loaded all the same.
      keep_alive_s: 1,
      models: [
        { id: "small", engine: "llama", model: fixture, aliases: ["jev-latest"], threads: 1, slots: 1 },
        { id: "big", engine: "systemone", url: upstream.url, key_env: "BIG_UPSTREAM_KEY", price_multiplier: 3, aliases: ["large"] },
        { id: "dec", engine: "decisions", url: upstream.url, key_env: "BIG_UPSTREAM_KEY", price_multiplier: 2 },
        { id: "cheap", engine: "llama", model: fixture, price_multiplier: 0.25, threads: 1, slots: 1, keep_alive_s: 1 },
        { id: "down", engine: "systemone", url: "http://127.0.0.1:1", key_env: "BIG_UPSTREAM_KEY", fallback: "small", timeout_ms: 1000 },
      ],
    }),
  );
  server = await startTestServer({
    env: { JUDGE_MODELS: file, BIG_UPSTREAM_KEY: upstream.key },
    plan: { allowanceQuestions: 0, pricePerMillion: PRICE },
    balanceMicro: 1_000_000_000,
  });
  await server.engine.ready;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

const ask = (model: string | undefined, questions = 1, key = server.key) =>
  postWithKey({ url: server.url, key }, "/v1/systemone", { ...judgmentBody(questions), ...(model !== undefined && { model }) });

async function lastEntry() {
  const [entry] = await server.store.ledger.entries(server.accountId, { limit: 1 });
  return entry;
}

function ok(response: CapturedResponse) {
  expect(response.status, show(response)).toBe(200);
  return response.json;
}

describe("routing by the request's model", () => {
  it.each([
    [undefined, "small"],
    ["small", "small"],
    ["jev-latest", "small"],
    ["jev-preview", "small"],
    ["big", "big"],
    ["large", "big"],
    ["cheap", "cheap"],
    ["dec", "dec"],
  ])("model %s is answered by %s, the response naming it", async (asked, answered) => {
    const response = await ask(asked);
    expect(ok(response).model, show(response)).toBe(answered);
    expect(response.headers.get("x-judge-fallback"), show(response)).toBeNull();
  });

  it("POST /v1/decisions routes the same way; its SDK's default name means the default model", async () => {
    const body = (model: string) => ({ model, input: "It is.", questions: [{ type: "predicate", name: "q", instructions: "It is." }] });
    for (const [asked, answered] of [
      ["big", "big"],
      ["gpt-6-luna", "small"],
      ["cheap", "cheap"],
    ]) {
      const response = await postWithKey(server, "/v1/decisions", body(asked));
      expect(ok(response).model, show(response)).toBe(answered);
    }
  });

  it("an unknown name is a 400 unknown_model listing every accepted name, on both routes", async () => {
    const response = await ask("gpt-4o");
    expect(response.status, show(response)).toBe(400);
    expect(response.json.code, show(response)).toBe("unknown_model");
    for (const name of ["small", "jev-latest", "big", "large", "dec", "cheap", "down"]) expect(response.json.error, show(response)).toContain(`"${name}"`);
    const decisions = await postWithKey(server, "/v1/decisions", {
      model: "nope",
      input: "x",
      questions: [{ type: "predicate", name: "q", instructions: "x" }],
    });
    expect(decisions.status, show(decisions)).toBe(400);
    expect(decisions.json.error.param, show(decisions)).toBe("model");
  });
});

describe("money per model", () => {
  it("charges input tokens × the plan's price × the model's multiplier, rounded up once, and the ledger records the model", async () => {
    for (const [model, milli] of [
      ["small", 1000],
      ["big", 3000],
      ["dec", 2000],
      ["cheap", 250],
    ] as const) {
      const response = await ask(model, 3);
      const tokens = ok(response).usage.input_tokens as number;
      const entry = await lastEntry();
      expect(entry, show(response)).toMatchObject({ kind: "charge", model, inputTokens: tokens, amountMicro: -chargeFor(tokens, PRICE, milli) });
      expect(-entry.amountMicro, show(response)).toBe(Math.ceil((tokens * milli) / 1000));
    }
  });

  it("an allowance counts questions × the multiplier, rounded up to a whole question", async () => {
    const account = await addTestAccount(server.services, { plan: { name: "allowance 100", allowanceQuestions: 100, pricePerMillion: PRICE } });
    const used: number[] = [];
    for (const [model, questions] of [
      ["small", 2],
      ["big", 2],
      ["cheap", 2],
      ["cheap", 5],
    ] as const) {
      ok(await ask(model, questions, account.key));
      const [entry] = await server.store.ledger.entries(account.accountId, { limit: 1 });
      used.push(entry.questions);
      expect(entry).toMatchObject({ kind: "plan", model });
    }
    expect(used).toEqual([2, 6, 1, 2]);
    expect((await server.store.ledger.check()).ok).toBe(true);
  });

  it("a plan that names its models refuses the others with 400 model_not_allowed, charging nothing", async () => {
    const account = await addTestAccount(server.services, { plan: { name: "small only", allowedModels: ["small"] }, balanceMicro: 1_000_000 });
    ok(await ask("small", 1, account.key));
    const before = await server.store.ledger.entries(account.accountId);
    for (const name of ["big", "large"]) {
      const refused = await ask(name, 1, account.key);
      expect(refused.status, show(refused)).toBe(400);
      expect(refused.json.code, show(refused)).toBe("model_not_allowed");
    }
    expect(await server.store.ledger.entries(account.accountId)).toEqual(before);
  });

  it("the admin API sets and clears a plan's models", async () => {
    const created = await adminCall(server, "POST", "/admin/v1/plans", {
      body: { name: "big only", requests_per_minute: 60, allowance_questions: 0, price_per_million: "1", allowed_models: ["big"] },
    });
    expect(created.json.allowed_models, show(created)).toEqual(["big"]);
    const cleared = await adminCall(server, "PATCH", `/admin/v1/plans/${created.json.id}`, { body: { allowed_models: null } });
    expect(cleared.status, show(cleared)).toBe(200);
    expect(cleared.json.allowed_models, show(cleared)).toBeUndefined();
  });
});

describe("fallback, health, metrics, the model list", () => {
  it("a model that is down is answered by its fallback, never silently: model and x-judge-fallback say so", async () => {
    const response = await ask("down");
    expect(ok(response).model, show(response)).toBe("small");
    expect(response.headers.get("x-judge-fallback"), show(response)).toBe("down");
    expect(await lastEntry(), show(response)).toMatchObject({ model: "small" });
  });

  it("/health is 200 while the default answers, listing every model's state", async () => {
    const response = await call(server.url, "/health");
    expect(response.status, show(response)).toBe(200);
    const states = Object.fromEntries((response.json.models as { id: string; state: string }[]).map((m) => [m.id, m]));
    expect(states.small, show(response)).toMatchObject({ default: true, engine: "llama", state: "ready" });
    expect(states.big, show(response)).toMatchObject({ default: false, engine: "systemone", state: "ready" });
    expect(states.down, show(response)).toMatchObject({ fallback: "small" });
    expect(states.down.state, show(response)).not.toBe("ready");
  });

  it("an in-process model loads on first use and unloads after keep_alive_s idle, shown in /health", async () => {
    const state = async () => ((await call(server.url, "/health")).json.models as { id: string; state: string }[]).find((m) => m.id === "cheap")!.state;
    ok(await ask("cheap"));
    expect(await state()).toBe("ready");
    const deadline = Date.now() + 10_000;
    while ((await state()) !== "unloaded" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await state()).toBe("unloaded");
    expect(ok(await ask("cheap")).model).toBe("cheap");
  });

  it("the default model stays loaded past keep_alive_s: /health stays 200 and it answers without reloading", async () => {
    const small = async () => {
      const response = await call(server.url, "/health");
      expect(response.status, show(response)).toBe(200);
      return (response.json.models as { id: string; state: string }[]).find((m) => m.id === "small")!.state;
    };
    ok(await ask("small"));
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      expect(await small()).toBe("ready");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const response = await ask("small");
    expect(ok(response).model).toBe("small");
    expect(await small()).toBe("ready");
  });

  it("/metrics labels the engine series with the model", async () => {
    ok(await ask("big"));
    const scrape = await adminCall(server, "GET", "/metrics");
    const samples = parseExposition(scrape.text);
    for (const model of ["small", "big"]) {
      expect(sampleValue(samples, "judge_engine_input_tokens_total", { model }), scrape.text.slice(0, 2000)).toBeGreaterThan(0);
      expect(sampleValue(samples, "judge_engine_call_duration_seconds_count", { model, phase: "evaluate", outcome: "ok" })).toBeGreaterThan(0);
      expect(sampleValue(samples, "judge_billing_outcomes_total", { model, outcome: "balance" })).toBeGreaterThan(0);
    }
  });

  it("GET /v1/models lists every model and alias in both shapes, the default first", async () => {
    const response = await call(server.url, "/v1/models");
    const names = (response.json.models as { name: string }[]).map((m) => m.name);
    expect(names, show(response)).toEqual(["small", "jev-latest", "big", "large", "dec", "cheap", "down", "jev-preview", "gpt-6-luna"]);
    expect(
      response.json.data.map((m: { id: string }) => m.id),
      show(response),
    ).toEqual(names);
  });
});

describe("with JUDGE_MODELS and a single model alike", () => {
  it("postJudgment without a model still answers with the default", async () => {
    expect(ok(await postJudgment(server, judgmentBody(1))).model).toBe("small");
  });
});
