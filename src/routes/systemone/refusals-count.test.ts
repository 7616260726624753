import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJudgment, show } from "../../testing/http-client.js";
import { startTestServer, type TestServer } from "../../testing/server.js";

/**
 * Refused requests cost their sender a request of the plan's per-minute limit like answered
 * ones (they are counted before the body is read), and a body over the token limit (the
 * issue's 225 KB: 64 questions × 255 options) is refused without tokenising all of it.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ plan: { requestsPerMinute: 3 } });
});
afterAll(async () => {
  await server?.close();
});

const HUGE = {
  state: "s",
  questions: Object.fromEntries(
    Array.from({ length: 64 }, (_, q) => [
      `q${q}`,
      { type: "choice", instructions: "Which?", criteria: Object.fromEntries(Array.from({ length: 255 }, (_, i) => [`o${i}`, "desc"])) },
    ]),
  ),
};

describe("refused requests and the rate limit", () => {
  it("a 225 KB body over the token limit is refused (over_budget) before all of it is tokenised, and each refusal counts: the fourth request of the minute is a 429", async () => {
    expect(JSON.stringify(HUGE).length).toBeGreaterThan(190_000);
    for (const remaining of [2, 1, 0]) {
      const refused = await postJudgment(server, HUGE);
      expect(refused.status, show(refused)).toBe(400);
      expect(refused.json.code, show(refused)).toBe("over_budget");
      expect(refused.json.error, show(refused)).toMatch(/needs (at least|more than) \d+ input tokens/);
      expect(refused.headers.get("x-ratelimit-remaining"), show(refused)).toBe(String(remaining));
    }
    const limited = await postJudgment(server, { state: "s", questions: { q: { type: "noul", instructions: "Is it?" } } });
    expect(limited.status, show(limited)).toBe(429);
  });
});
