import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { ApiError } from "../errors.js";
import { createLogger } from "../logger.js";
import type { JudgingOutcome } from "../services/judging/judge.js";
import type { Metrics } from "../services/metrics.js";
import type { Standing } from "../services/types.js";
import { accessLog } from "./access-log.js";
import type { AppEnv } from "./context.js";

/** The billing outcomes counted, by a metrics stand-in that records only those. */
function counting() {
  const counted: [string, string | undefined][] = [];
  const metrics = { httpRequest: () => undefined, rateLimited: () => undefined, billingOutcome: (o: string, m?: string) => counted.push([o, m]) };
  return { counted, metrics: metrics as unknown as Metrics };
}

function appRecording(outcome: Partial<JudgingOutcome> | undefined, headers: Record<string, string> = {}) {
  const { counted, metrics } = counting();
  const app = new Hono<AppEnv>();
  app.use(
    accessLog(
      createLogger("error", () => undefined),
      metrics,
      new WeakMap<object, ApiError>(),
    ),
  );
  app.post("/judge", (c) => {
    c.set("model", "m1");
    if (outcome) c.set("judging", { text: "{}", billedTo: "plan", standing: {} as Standing, replayed: false, ...outcome });
    return c.body("{}", 200, headers);
  });
  return { app, counted };
}

describe("billing metrics, from the judging outcome the route recorded", () => {
  it("counts who paid from the outcome, whatever the response's headers say", async () => {
    const { app, counted } = appRecording({ billedTo: "balance" }, { "x-billed-to": "plan" });
    expect((await app.request("/judge", { method: "POST" })).status).toBe(200);
    expect(counted).toEqual([["balance", "m1"]]);
  });

  it("counts nothing for a replay (billed the first time) or a 200 that judged nothing, even with billing headers", async () => {
    const replay = appRecording({ replayed: true });
    await replay.app.request("/judge", { method: "POST" });
    expect(replay.counted).toEqual([]);
    const none = appRecording(undefined, { "x-billed-to": "plan" });
    await none.app.request("/judge", { method: "POST" });
    expect(none.counted).toEqual([]);
  });
});
