import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { startLlamaServerStandIn } from "../../testing/llama-server-standin.js";
import { readyTinyEngine } from "../../testing/server.js";
import type { JudgmentEngine } from "../types.js";
import { createLlamaServerEngine } from "./engine.js";
import { choiceQuestion as choice, NOUL_QUESTIONS as NOULS, scoreQuestion as score } from "../../testing/exactness.js";
import { maxDifference, probabilities, remoteOptions, settledStatus } from "./test-helpers.js";

/**
 * The llama-server engine against a real llama-server on the tiny fixture, compared with the
 * in-process engine on the same file: same tokens, same probabilities.
 */

/**
 * Both engines run the same ggml libraries (scripts/build-llama-server.sh runs llama-server on
 * node-llama-cpp's own libllama, libggml and CPU variants), so what remains is the read protocol:
 * probabilities that travel as the server's float32 lists through JSON, lifted reads undone in
 * double (lifted-read.ts). Measured max |Δp| (-fa off, one thread each): 1e-11 to 1e-7 for most
 * cases, 3.2e-7 for 255 options (two-token labels renormalised over a small mass). The server
 * alone gives a cached read and a fresh one bit-identical numbers (its start-up probe checks that).
 * Flash attention alone would cause ~1e-4, and reads of single tokens 3e-5 after a long state.
 */
const TOLERANCE = 1e-6;

const STATE = { ticket: "I was charged twice. 한국어 🎉", priority: 2 };
const LONG_STATE = "word ".repeat(120);

let llamaServer: LlamaServerProcess;
let remote: JudgmentEngine;
let local: JudgmentEngine;
const measured: string[] = [];

beforeAll(async () => {
  llamaServer = await startLlamaServer({ model: await tinyFixturePath(), slots: 2, contextSize: 16384 });
  const engine = createLlamaServerEngine(remoteOptions(llamaServer.url));
  remote = engine;
  [local] = await Promise.all([readyTinyEngine(), engine.ready]);
  const status = await settledStatus(remote);
  expect(status, `${JSON.stringify(status)}\n${llamaServer.output()}`).toEqual({ state: "ready" });
});
afterAll(async () => {
  // The measured differences, for the record (vitest prints console output with the results).
  if (measured.length > 0) console.log(`max |Δp| llama-server vs in-process:\n  ${measured.join("\n  ")}`);
  await remote?.close();
  await local?.close();
  await llamaServer?.stop();
});

async function expectSameAsInProcess(state: unknown, questions: Question[], what: string) {
  const [ours, reference] = [await probabilities(remote, state, questions), await probabilities(local, state, questions)];
  // Same tokens first: the server's tokenizer, fed piece by piece, must give the in-process ids.
  expect((ours.prepared as any).prefixTokens, `${what}: prefix tokens`).toEqual((reference.prepared as any).prefixTokens);
  expect(ours.prepared.inputTokens, `${what}: input tokens`).toBe(reference.prepared.inputTokens);
  const worst = maxDifference(ours.probabilities, reference.probabilities);
  measured.push(`${what}: ${worst.toExponential(2)}`);
  expect(
    worst,
    `${what}: max |Δp| = ${worst}\nllama-server ${JSON.stringify(ours.probabilities)}\nin-process ${JSON.stringify(reference.probabilities)}`,
  ).toBeLessThanOrEqual(TOLERANCE);
}

describe("the llama-server engine's probabilities equal the in-process engine's", () => {
  for (const n of [2, 26, 27, 100, 255]) {
    it(`choice with ${n} options`, async () => {
      await expectSameAsInProcess(STATE, [choice(n)], `choice ${n}`);
    });
  }

  it("noul without criteria, two-sided and one-sided", async () => {
    await expectSameAsInProcess(STATE, NOULS, "noul");
  });

  it("score with every level count from 2 to 10", async () => {
    await expectSameAsInProcess(
      STATE,
      Array.from({ length: 9 }, (_, i) => score(i + 2)),
      "score 2..10",
    );
  });

  it('a long state ("word " × 120) with several question types', async () => {
    await expectSameAsInProcess(LONG_STATE, [choice(27), score(5), NOULS[0]], "long state");
  });
});

describe("answers depend only on the state and the question itself", () => {
  const a = choice(4);
  const b = score(5);
  const c = NOULS[0];

  it("adding, removing and reordering other questions changes nothing", async () => {
    const alone = (await probabilities(remote, STATE, [a])).probabilities;
    const withOthers = (await probabilities(remote, STATE, [b, a, c])).probabilities;
    const reordered = (await probabilities(remote, STATE, [c, b, a])).probabilities;
    expect(withOthers[1], "a in [b, a, c] vs alone").toEqual(alone[0]);
    expect(reordered[2], "a in [c, b, a] vs alone").toEqual(alone[0]);
    expect(reordered[1], "b in [c, b, a] vs [b, a, c]").toEqual(withOthers[0]);
  });

  const cases: Array<[string, unknown, Question[]]> = [
    ["a short state", STATE, [a, b, c]],
    ["a long state", LONG_STATE, [a, b, c]],
    // Without the walk's rollback, the second of two identical requests here differed by 2e-7.
    ["two-letter labels", "The sky is green.", [choice(27)]],
  ];
  for (const [name, state, questions] of cases) {
    it(`the same request gives the same probabilities, right after itself and after others (${name})`, async () => {
      const first = (await probabilities(remote, state, questions)).probabilities;
      const again = (await probabilities(remote, state, questions)).probabilities;
      expect(again, "right after itself").toEqual(first);
      await probabilities(remote, "something else entirely", [c, choice(30)]);
      await probabilities(remote, state === STATE ? LONG_STATE : STATE, [b]);
      const later = (await probabilities(remote, state, questions)).probabilities;
      expect(later, "after other requests").toEqual(first);
    });
  }

  it("different states give different answers (the server reads the state)", async () => {
    const one = (await probabilities(remote, "The sky is green.", [a])).probabilities;
    const other = (await probabilities(remote, { numbers: [1, 2, 3] }, [a])).probabilities;
    expect(one[0], "two different states gave identical probabilities").not.toEqual(other[0]);
  });
});

describe("prefix reuse", () => {
  it("interleaved states keep their own slots and reuse their cached prefix", async () => {
    // Through a recording stand-in: the server's own reply says which slot served and how much it took from the cache.
    const stand = await startLlamaServerStandIn(llamaServer.url);
    const engine = createLlamaServerEngine(remoteOptions(stand.url));
    await engine.ready;
    const states = [
      { tenant: "one", text: "first state ".repeat(20) },
      { tenant: "two", text: "second state ".repeat(20) },
    ];
    const questions = [choice(3), score(4)];
    const rounds: Array<Array<{ slots: number[]; firstCached: number; prefix: number }>> = [];
    try {
      for (let round = 0; round < 3; round++) {
        const seen = [];
        for (const state of states) {
          stand.exchanges.length = 0;
          const { prepared } = await probabilities(engine, state, questions);
          // One call carries several prompts (an array of replies); each reply says what it took from the cache.
          const first = [stand.exchanges[0].reply].flat()[0];
          seen.push({
            slots: stand.exchanges.map((e) => e.request.id_slot),
            firstCached: first["timings/cache_n"],
            prefix: (prepared as any).prefixTokens.length,
          });
        }
        rounds.push(seen);
      }
    } finally {
      await engine.close();
      await stand.close();
    }
    const record = JSON.stringify(rounds);
    const slotOf = rounds[0].map((s) => s.slots[0]);
    expect(new Set(slotOf).size, `the two states share a slot: ${record}`).toBe(2);
    for (const [round, seen] of rounds.entries()) {
      seen.forEach((s, i) => {
        expect(new Set(s.slots), `round ${round}, state ${i}: served by several slots\n${record}`).toEqual(new Set([slotOf[i]]));
        // A new state is read from its start; afterwards its slot still holds the whole state.
        if (round === 0) expect(s.firstCached, `round 0, state ${i}\n${record}`).toBeLessThan(s.prefix);
        else expect(s.firstCached, `round ${round}, state ${i}: cache not reused\n${record}`).toBeGreaterThanOrEqual(s.prefix);
      });
    }
  });

  it("answers concurrent requests on different states in parallel, with the numbers each gets alone", async () => {
    const questions = [choice(5)];
    const alone = await Promise.all(["x ".repeat(30), "y ".repeat(30)].map(async (s) => (await probabilities(remote, s, questions)).probabilities));
    const together = await Promise.all(
      ["x ".repeat(30), "y ".repeat(30), "x ".repeat(30), "y ".repeat(30)].map(async (s) => (await probabilities(remote, s, questions)).probabilities),
    );
    expect(together, JSON.stringify({ alone, together })).toEqual([...alone, ...alone]);
  });
});
