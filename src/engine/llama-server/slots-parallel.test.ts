// @lane timed: asserts on elapsed time, so it runs after everything else, beside one other timed file at most (src/testing/test-kinds.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyFixturePath } from "../../testing/fixture.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { startLlamaServerStandIn, type LlamaServerStandIn } from "../../testing/llama-server-standin.js";
import { choiceQuestion as choice } from "../../testing/exactness.js";
import { createLlamaServerEngine } from "./engine.js";
import { probabilities, remoteOptions } from "./test-helpers.js";

/**
 * Requests on different slots run concurrently against a server that batches (tolerant), and
 * one at a time in strict mode: a stand-in in front of a real llama-server on the tiny fixture
 * adds 50 ms to every call, so the wall time shows whether calls overlapped.
 */

let llamaServer: LlamaServerProcess;
let stand: LlamaServerStandIn;
const measured: string[] = [];

beforeAll(async () => {
  llamaServer = await startLlamaServer({ model: await tinyFixturePath(), slots: 8, contextSize: 8 * 8192 });
  stand = await startLlamaServerStandIn(llamaServer.url);
});
afterAll(async () => {
  if (measured.length > 0) console.log(`8 requests on 8 slots:\n  ${measured.join("\n  ")}`);
  await stand?.close();
  await llamaServer?.stop();
});

describe("slots run in parallel against a server that batches", () => {
  async function timeEight(mode: "strict" | "tolerant") {
    const engine = createLlamaServerEngine(remoteOptions(stand.url, { exactness: mode }));
    try {
      await engine.ready;
      const states = Array.from({ length: 8 }, (_, i) => `state number ${i} `.repeat(10));
      // Each state's prefix is cached first, so the timed requests cost the same alone and together.
      await Promise.all(states.map((state) => probabilities(engine, state, [choice(3)])));
      stand.delayMs = 50;
      let started = performance.now();
      await probabilities(engine, states[0], [choice(3)]);
      const alone = performance.now() - started;
      const callsBefore = stand.exchanges.length;
      stand.maxInFlight = 0;
      started = performance.now();
      await Promise.all(states.map((state) => probabilities(engine, state, [choice(3)])));
      return { alone, eight: performance.now() - started, calls: stand.exchanges.length - callsBefore, maxInFlight: stand.maxInFlight };
    } finally {
      stand.delayMs = 0;
      await engine.close();
    }
  }

  it("tolerant: 8 concurrent requests on 8 states take about as long as one or two (50 ms per call)", async () => {
    const t = await timeEight("tolerant");
    measured.push(`8 concurrent (tolerant): ${JSON.stringify(t)}`);
    expect(t.eight, JSON.stringify(t)).toBeLessThan(2.5 * t.alone);
    expect(t.maxInFlight, JSON.stringify(t)).toBeGreaterThan(1);
  });

  // Counted rather than compared with one request alone (a ratio a busy machine can skew): no
  // two calls were ever in flight together, so the calls' 50 ms delays add up end to end.
  it("strict: the same 8 requests run one at a time (nothing batched beside a read)", async () => {
    const t = await timeEight("strict");
    measured.push(`8 concurrent (strict): ${JSON.stringify(t)}`);
    expect(t.maxInFlight, JSON.stringify(t)).toBe(1);
    expect(t.calls, JSON.stringify(t)).toBeGreaterThanOrEqual(8);
    expect(t.eight, JSON.stringify(t)).toBeGreaterThan(0.95 * 50 * t.calls);
  });
});
