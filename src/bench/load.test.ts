import { describe, expect, it } from "vitest";
import { runLoad, type Outcome } from "./load.js";

const request = { body: "{}", questions: 3 };
const next = () => request;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ok = (inputTokens: number, latencyMs = 10): Outcome => ({ status: 200, latencyMs, inputTokens, model: "m" });

describe("the load loop", () => {
  it("sends exactly the asked number of requests, never more than `concurrency` at once", async () => {
    let inFlight = 0;
    let most = 0;
    const result = await runLoad({
      next,
      concurrency: 4,
      limit: { requests: 25 },
      send: async () => {
        most = Math.max(most, ++inFlight);
        await wait(2);
        inFlight--;
        return ok(100);
      },
    });
    expect(result).toMatchObject({ sent: 25, answered: 25, questions: 75, inputTokens: 2500, errors: {}, model: "m", maxInFlight: 4 });
    expect(most).toBe(4);
    expect(result.latenciesMs).toHaveLength(25);
    expect(result.elapsedMs).toBeGreaterThan(0);
  });

  it("at a set rate, starts requests on schedule rather than as fast as answers come back", async () => {
    const result = await runLoad({ next, concurrency: 8, limit: { durationMs: 500 }, ratePerSecond: 100, send: async () => ok(1, 1) });
    // 100 per second for half a second, whatever the answers' speed.
    expect(result.sent, JSON.stringify(result)).toBeGreaterThanOrEqual(40);
    expect(result.sent, JSON.stringify(result)).toBeLessThanOrEqual(51);
  });

  it("at a set rate, counts the wait of a request that starts late in its latency", async () => {
    // One client, 100 per second, answers taking 40 ms: each start falls further behind schedule.
    const result = await runLoad({
      next,
      concurrency: 1,
      limit: { requests: 5 },
      ratePerSecond: 100,
      send: async () => {
        await wait(40);
        return ok(1, 40);
      },
    });
    const [first, , , , last] = result.latenciesMs;
    expect(first, JSON.stringify(result.latenciesMs)).toBeLessThan(50);
    // The fifth was due 40 ms after the first but started ~160 ms after it: ~120 ms late.
    expect(last, JSON.stringify(result.latenciesMs)).toBeGreaterThan(140);
  });

  it("counts failures by status and keeps them out of latencies and throughput counts", async () => {
    const outcomes: Outcome[] = [
      ok(100, 10),
      { status: 502, latencyMs: 1, inputTokens: 0, error: "model_unavailable" },
      { status: 0, latencyMs: 1, inputTokens: 0, error: "ECONNRESET" },
      { status: 200, latencyMs: 1, inputTokens: 0, error: "a 200 without usage.input_tokens" },
      ok(120, 30),
      { status: 502, latencyMs: 1, inputTokens: 0, error: "model_unavailable" },
    ];
    let i = 0;
    const result = await runLoad({ next, concurrency: 1, limit: { requests: 6 }, send: async () => outcomes[i++], sleep: async () => {} });
    expect(result).toMatchObject({ sent: 6, answered: 2, questions: 6, inputTokens: 220, errors: { "502": 2, network: 1, "bad-200": 1 } });
    expect(result.latenciesMs).toEqual([10, 30]);
    expect(result.errorSamples).toEqual(["502: model_unavailable", "network: ECONNRESET", "bad-200: a 200 without usage.input_tokens"]);
  });

  it("waits Retry-After after a 429 before that client sends again", async () => {
    const events: string[] = [];
    let i = 0;
    await runLoad({
      next,
      concurrency: 1,
      limit: { requests: 3 },
      send: async () => {
        events.push("send");
        return i++ === 0 ? { status: 429, latencyMs: 1, inputTokens: 0, retryAfterMs: 2000, error: "rate_limited" } : ok(1);
      },
      sleep: async (ms) => void events.push(`sleep ${ms}`),
    });
    expect(events).toEqual(["send", "sleep 2000", "send", "send"]);
  });

  it("stops starting requests at the end of a timed phase, finishing those in flight, and never sleeps past it", async () => {
    const slept: number[] = [];
    const result = await runLoad({
      next,
      concurrency: 2,
      limit: { durationMs: 60 },
      send: async () => {
        await wait(5);
        return { status: 429, latencyMs: 5, inputTokens: 0, retryAfterMs: 60_000 };
      },
      sleep: async (ms) => {
        slept.push(ms);
        await wait(ms);
      },
    });
    // Each client: one request, then a sleep cut short at the deadline (timers may wake a
    // millisecond early, letting one more request start).
    expect(result.sent).toBeGreaterThanOrEqual(2);
    expect(result.sent).toBeLessThanOrEqual(4);
    expect(Math.max(...slept)).toBeLessThanOrEqual(60);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(55);
    expect(result.elapsedMs).toBeLessThan(1000);
  });

  it("runs a timed phase for about its duration", async () => {
    const result = await runLoad({ next, concurrency: 3, limit: { durationMs: 100 }, send: async () => (await wait(5), ok(10)) });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(result.elapsedMs).toBeLessThan(1000);
    expect(result.sent).toBeGreaterThan(6);
    expect(result.answered).toBe(result.sent);
  });

  it("reports progress while it runs", async () => {
    const seen: number[] = [];
    await runLoad({
      next,
      concurrency: 1,
      limit: { durationMs: 120 },
      progressEveryMs: 30,
      send: async () => (await wait(5), ok(10)),
      onProgress: (progress) => seen.push(progress.answered),
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[seen.length - 1]).toBeGreaterThan(0);
  });
});
