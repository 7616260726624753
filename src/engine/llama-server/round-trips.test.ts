import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { startLlamaServerStandIn, type LlamaServerStandIn } from "../../testing/llama-server-standin.js";
import { choiceQuestion as choice, NOUL_QUESTIONS, scoreQuestion as score } from "../../testing/exactness.js";
import { createLlamaServerEngine } from "./engine.js";
import { availableRealModels } from "../../testing/real-models.js";
import { probabilities, remoteOptions, settledStatus } from "./test-helpers.js";

/**
 * How many HTTP calls a request makes to llama-server, counted by a recording stand-in in front
 * of a real one, on the random-weight tiny fixture (its labels are almost never in a top list,
 * the case that used to cost one forced call per label token). That slots run in parallel is
 * slots-parallel.test.ts, which asserts on elapsed time.
 */

const STATE = { notes: "the customer wrote again about the order and the refund ".repeat(8) };
const THREE: Question[] = [choice(4), NOUL_QUESTIONS[0], score(5)];

let llamaServer: LlamaServerProcess;
let stand: LlamaServerStandIn;
const measured: string[] = [];

beforeAll(async () => {
  llamaServer = await startLlamaServer({ model: await tinyFixturePath(), slots: 8, contextSize: 8 * 8192 });
  stand = await startLlamaServerStandIn(llamaServer.url);
});
afterAll(async () => {
  if (measured.length > 0) console.log(`calls to llama-server per request:\n  ${measured.join("\n  ")}`);
  await stand?.close();
  await llamaServer?.stop();
});

async function countCalls(mode: "strict" | "tolerant", questions: Question[], what: string) {
  const engine = createLlamaServerEngine(remoteOptions(stand.url, { exactness: mode }));
  try {
    await engine.ready;
    const status = await settledStatus(engine);
    expect(status, `${JSON.stringify(status)}\n${llamaServer.output()}`).toEqual({ state: "ready" });
    const rounds = [];
    for (let round = 0; round < 2; round++) {
      stand.exchanges.length = 0;
      const { prepared } = await probabilities(engine, STATE, questions);
      const bytes = stand.exchanges.reduce((sum, e) => sum + e.bytes.request + e.bytes.reply, 0);
      rounds.push({ calls: stand.exchanges.length, bytes, prefix: (prepared as any).prefixTokens.length, prompts: stand.exchanges.map((e) => e.request.prompt.length) });
    }
    measured.push(`${what} (${mode}): ${JSON.stringify(rounds)}`);
    return rounds;
  } finally {
    await engine.close();
  }
}

describe("a request's calls to llama-server are bounded by its questions, not its labels", () => {
  for (const mode of ["strict", "tolerant"] as const) {
    it(`a 300-token state with a 4-option choice, a noul and a 5-level score: at most 6 calls (${mode})`, async () => {
      const rounds = await countCalls(mode, THREE, "3 questions");
      for (const round of rounds) {
        expect(round.prefix, JSON.stringify(rounds)).toBeGreaterThanOrEqual(300);
        expect(round.calls, JSON.stringify(rounds)).toBeLessThanOrEqual(6);
      }
    });

    it(`one 255-option choice (two-token labels): at most 8 calls (${mode})`, async () => {
      const rounds = await countCalls(mode, [choice(255)], "255 options");
      for (const round of rounds) expect(round.calls, JSON.stringify(rounds)).toBeLessThanOrEqual(8);
    });
  }
});

/** A real model (scripts/real-models.sh; required under CI): labels are near the top, one call per question. */
const REAL_MODEL = availableRealModels().find((m) => m.name === "smollm2-135m-instruct")?.file ?? "";

describe.skipIf(!REAL_MODEL)("on a real model (SmolLM2-135M-Instruct Q4_1)", () => {
  it("the 3-question request reads each question once (its labels are near the top) and stays within 6 calls", async () => {
    const real = await startLlamaServer({ model: REAL_MODEL, slots: 1, contextSize: 8192 });
    const recorder = await startLlamaServerStandIn(real.url);
    const engine = createLlamaServerEngine(remoteOptions(recorder.url, { server: { url: recorder.url, timeoutMs: 120_000 } }));
    try {
      await engine.ready;
      const status = await settledStatus(engine);
      expect(status, `${JSON.stringify(status)}\n${real.output()}`).toEqual({ state: "ready" });
      const seen: Record<string, unknown> = {};
      // The 255-option choice (2 calls, ~1 MB, measured once) takes minutes on a shared 2-core machine: not repeated here.
      for (const [what, questions] of [["3 questions", THREE]] as const) {
        recorder.exchanges.length = 0;
        await probabilities(engine, STATE, [...questions]);
        // Reading calls generate a token; fill calls (n_predict 0) only evaluate prompts.
        const reads = recorder.exchanges.filter((e) => e.request.n_predict !== 0).length;
        seen[what] = { calls: recorder.exchanges.length, reads, bytes: recorder.exchanges.reduce((sum, e) => sum + e.bytes.request + e.bytes.reply, 0) };
        expect(reads, JSON.stringify(seen)).toBe(questions.length);
        expect(recorder.exchanges.length, JSON.stringify(seen)).toBeLessThanOrEqual(2 * questions.length);
      }
      measured.push(`SmolLM2-135M (strict): ${JSON.stringify(seen)}`);
    } finally {
      await engine.close();
      await recorder.close();
      await real.stop();
    }
  }, 300_000);
});
