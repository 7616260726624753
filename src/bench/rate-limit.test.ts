import { describe, expect, it } from "vitest";
import { checkRateLimit, describeRateLimit, offeredPerMinute, type PlannedRun } from "./rate-limit.js";

const phases = [
  { concurrency: 1, warmup: 1 },
  { concurrency: 4, warmup: 4 },
  { concurrency: 1, warmup: 1 },
];

describe("the load a bench offers against the key's rate limit", () => {
  it("counts every request of a run given in requests, when they fit in a minute at the first request's pace", () => {
    const run: PlannedRun = { probes: 2, phases, limit: { requests: 10 } };
    // 2 probes + 6 warm-up + 3 × 10 measured.
    expect(offeredPerMinute(run, 100)).toBe(38);
    // At 5 s a request, one client at a time gets through 12 in a minute.
    expect(offeredPerMinute(run, 5000)).toBe(12);
  });

  it("paces a timed run at one request per first latency, at least one request per client", () => {
    const run: PlannedRun = { probes: 2, phases, limit: { durationMs: 5000 } };
    // 2 + 6 + 3 × (5000 / 100): the three 5 s phases offer 158 requests, well inside a minute.
    expect(offeredPerMinute(run, 100)).toBe(158);
    // Requests slower than the phase: each client still sends one (1 + 4 + 1), and 6 fit in 7.5 of a minute.
    const bare = { probes: 0, phases: phases.map((phase) => ({ ...phase, warmup: 0 })), limit: run.limit };
    expect(offeredPerMinute(bare, 8000)).toBe(6);
    // A 0 ms answer does not divide by zero: a minute at 1 ms a request caps it.
    expect(offeredPerMinute({ ...run, limit: { durationMs: 120_000 } }, 0)).toBe(60_000);
  });

  it("is below only when the plan's limit is under the estimate", () => {
    const run: PlannedRun = { probes: 2, phases: [{ concurrency: 1, warmup: 0 }], limit: { requests: 3 } };
    expect(checkRateLimit({ limit: 5, remaining: 4 }, run, 50)).toEqual({ limit: 5, remaining: 4, offeredPerMinute: 5, below: false });
    expect(checkRateLimit({ limit: 4, remaining: 3 }, run, 50)).toEqual({ limit: 4, remaining: 3, offeredPerMinute: 5, below: true });
  });

  it("honours x-ratelimit-remaining: a limit high enough, but mostly used this minute by other clients, is below too", () => {
    const run: PlannedRun = { probes: 2, phases: [{ concurrency: 1, warmup: 0 }], limit: { requests: 3 } };
    expect(checkRateLimit({ limit: 100, remaining: 4 }, run, 50)).toMatchObject({ offeredPerMinute: 5, below: false });
    const short = checkRateLimit({ limit: 100, remaining: 2 }, run, 50);
    expect(short).toMatchObject({ offeredPerMinute: 5, below: true });
    expect(describeRateLimit(short, false)).toMatch(
      /^this key's plan allows 100 requests per minute \(only 2 left in this minute: other clients of the account use it too\) and this run/,
    );
  });

  it("names the limit, the load and the way out, on one line", () => {
    const check = { limit: 5, remaining: 4, offeredPerMinute: 158, below: true };
    const refusal = describeRateLimit(check, false);
    expect(refusal).toBe(
      "this key's plan allows 5 requests per minute and this run would send at least 158 in a minute: the figures would mostly " +
        "measure the rate limit (429s and Retry-After waits). Bench with a key on a plan with a higher limit (e.g. judge plans create " +
        "--name bench --rpm 1000000 --allowance 0 --price 0.05, then judge accounts set-plan <account id> bench), or pass " +
        "--allow-rate-limit to measure anyway",
    );
    expect(describeRateLimit(check, true)).toMatch(/^WARNING: this key's plan allows 5 requests per minute .* going on as --allow-rate-limit asks/);
    expect(describeRateLimit(check, true)).not.toContain("\n");
  });
});
