import { afterEach, describe, expect, it } from "vitest";
import { call, postJudgment, show } from "../../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../../testing/server.js";
import { fixedAnswerFor, startSystemOneStandIn, type SystemOneStandIn } from "../../../testing/standins/systemone-upstream.js";
import { createSystemOneEngine } from "./engine.js";

/**
 * A gateway whose upstream refuses its key (JUDGE_ENGINE_KEY wrong or revoked) is not healthy:
 * /health is 503 naming the refusal, for the operator; API clients get a plain 502 that says
 * nothing of the server's settings. When the key works again, so does /health.
 */

const KEY = "sk-gateway-key-9d1e";
const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});

const BODY = { state: "s", questions: { q: { type: "noul", instructions: "Is it?" } } };

/** An upstream that takes its key while `accepts()` says so, and answers 401 (as this service does) otherwise. */
async function upstream(accepts: () => boolean): Promise<SystemOneStandIn> {
  const s = await startSystemOneStandIn((request) => {
    if (request.method !== "POST") return undefined;
    if (!accepts()) return { status: 401, body: { error: "invalid or revoked API key", code: "invalid_api_key" } };
    return { body: fixedAnswerFor(request.body, 10) };
  });
  started.push(s);
  return s;
}

async function gatewayTo(s: SystemOneStandIn): Promise<TestServer> {
  const engine = createSystemOneEngine({
    server: { url: s.url, key: KEY, timeoutMs: 1_000 },
    upstreamLimits: { options: 255, levels: 10, questions: 64 },
    maxRequestTokens: 100_000,
    contextSize: 8192,
  });
  started.push(engine);
  const gateway = await startTestServer({ engine, balanceMicro: 1_000_000 });
  started.push(gateway);
  return gateway;
}

describe("an upstream that refuses the gateway's key", () => {
  it("from the start: /health is 503 naming the refusal, and a request gets a plain 502", async () => {
    const s = await upstream(() => false);
    const gateway = await gatewayTo(s);
    const health = await call(gateway.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.json.error, show(health)).toMatch(/refused this gateway's key/);
    expect(health.json.error, show(health)).toContain("JUDGE_ENGINE_KEY");
    expect(health.text, show(health)).not.toContain(KEY);

    const response = await postJudgment(gateway, BODY);
    expect(response.status, show(response)).toBe(502);
    expect(response.json.code, show(response)).toBe("model_unavailable");
    expect(response.text, show(response)).not.toMatch(/JUDGE_|key|401|127\.0\.0\.1/i);
  });

  it("revoked later: the first refused request makes /health 503; a key that works again makes it 200", async () => {
    let accepted = true;
    const s = await upstream(() => accepted);
    const gateway = await gatewayTo(s);
    expect((await postJudgment(gateway, BODY)).status).toBe(200);
    expect((await call(gateway.url, "/health")).status).toBe(200);
    accepted = false;
    const refused = await postJudgment(gateway, BODY);
    expect(refused.status, show(refused)).toBe(502);
    expect(refused.text, show(refused)).not.toMatch(/JUDGE_|key/i);
    const health = await call(gateway.url, "/health");
    expect(health.status, show(health)).toBe(503);
    expect(health.json.error, show(health)).toMatch(/refused this gateway's key/);
    accepted = true;
    const again = await call(gateway.url, "/health");
    expect(again.status, show(again)).toBe(200);
    expect(s.judgments().length, "the key probes are not judgments").toBe(2);
  });
});
