import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Question } from "../../judgment/schema.js";
import { tinyFixturePath } from "../../testing/fixture.js";
import { startLlamaServer, type LlamaServerProcess } from "../../testing/llama-server.js";
import { startLlamaServerStandIn, type LlamaServerStandIn } from "../../testing/llama-server-standin.js";
import { choiceQuestion as choice, NOUL_QUESTIONS, scoreQuestion as score } from "../../testing/exactness.js";
import { createLlamaServerEngine } from "./engine.js";
import { checkBatching, createServerTokenizer } from "./tokenizer.js";
import { availableRealModels } from "../../testing/real-models.js";
import { probabilities, remoteOptions, settledStatus } from "./test-helpers.js";
import { choiceLabels } from "../../judgment/labels.js";

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

/** What one request sent to llama-server: every HTTP call, its `/completion` and `/tokenize` calls, and the reading calls among them (those that generate a token; fills, `n_predict` 0, only evaluate prompts). */
function tally(recorder: LlamaServerStandIn) {
  const completions = recorder.exchanges.length;
  const reads = recorder.exchanges.filter((e) => e.request.n_predict !== 0).length;
  const tokenizing = recorder.calls.filter((c) => c.route === "/tokenize");
  // The texts the /tokenize calls carried: one a call, or a list of several (-1 between them).
  const texts: string[] = tokenizing.flatMap((c) => [c.body.content].flat().filter((p: unknown) => typeof p === "string"));
  const bytes = recorder.exchanges.reduce((sum, e) => sum + e.bytes.request + e.bytes.reply, 0);
  return { http: recorder.calls.length, completions, reads, tokenize: tokenizing.length, texts, bytes };
}

function reset(recorder: LlamaServerStandIn) {
  recorder.exchanges.length = 0;
  recorder.calls.length = 0;
}

async function countCalls(mode: "strict" | "tolerant", questions: Question[], what: string) {
  const engine = createLlamaServerEngine(remoteOptions(stand.url, { exactness: mode }));
  try {
    await engine.ready;
    const status = await settledStatus(engine);
    expect(status, `${JSON.stringify(status)}\n${llamaServer.output()}`).toEqual({ state: "ready" });
    const rounds = [];
    for (let round = 0; round < 2; round++) {
      reset(stand);
      const { prepared, probabilities: answer } = await probabilities(engine, STATE, questions);
      rounds.push({ ...tally(stand), prefix: (prepared as any).prefixTokens.length, prompts: stand.exchanges.map((e) => e.request.prompt.length), answer });
    }
    measured.push(`${what} (${mode}): ${JSON.stringify(rounds.map(summary))}`);
    return rounds;
  } finally {
    await engine.close();
  }
}

/** A round's counts for messages and the log: the texts sent, counted. */
function summary({ answer, texts, ...counts }: Awaited<ReturnType<typeof countCalls>>[number]) {
  return { ...counts, texts: texts.length };
}

describe("a request's calls to llama-server are bounded by its questions, not its labels", () => {
  for (const mode of ["strict", "tolerant"] as const) {
    it(`a 300-token state with a 4-option choice, a noul and a 5-level score: at most 6 calls, tokenising included (${mode})`, async () => {
      const rounds = await countCalls(mode, THREE, "3 questions");
      for (const round of rounds) {
        const seen = JSON.stringify(rounds.map(summary));
        expect(round.prefix, seen).toBeGreaterThanOrEqual(300);
        expect(round.completions, seen).toBeLessThanOrEqual(6);
        expect(round.tokenize, seen).toBe(1);
        expect(round.http, seen).toBeLessThanOrEqual(2 * round.reads);
        expect(round.http, seen).toBeLessThanOrEqual(6);
      }
      expect(rounds[1].answer).toEqual(rounds[0].answer);
    });

    it(`one 255-option choice (two-token labels): its labels tokenised in one call, and not again when it is asked again (${mode})`, async () => {
      const rounds = await countCalls(mode, [choice(255)], "255 options");
      const seen = JSON.stringify(rounds.map(summary));
      for (const round of rounds) {
        expect(round.completions, seen).toBeLessThanOrEqual(8);
        expect(round.http, seen).toBeLessThanOrEqual(2 * round.reads);
      }
      // Fresh: the state, the question's text and its 255 labels (two letters, unknown to the
      // engine, which has seen A-Z at start-up) in one call; again: only the state, which is
      // not remembered.
      const labels = choiceLabels(255);
      expect(rounds[0].tokenize, seen).toBe(1);
      expect(
        rounds[0].texts.filter((t) => labels.includes(t)),
        seen,
      ).toHaveLength(255);
      expect(
        rounds[0].texts.filter((t) => t.includes("option 254")),
        seen,
      ).toHaveLength(1);
      expect(rounds[1].tokenize, seen).toBe(1);
      expect(
        rounds[1].texts.filter((t) => labels.includes(t) || t.includes("option 254")),
        seen,
      ).toEqual([]);
      expect(rounds[1].answer).toEqual(rounds[0].answer);
    });
  }
});

describe("several texts tokenised in one /tokenize call", () => {
  it("give each text exactly the tokens it gives alone, control text included", async () => {
    const tokenizer = createServerTokenizer({ url: llamaServer.url, timeoutMs: 10_000 });
    // Texts whose tokens would merge or shift if they were joined: leading and trailing spaces,
    // newlines, a label and its continuation, multi-byte text, control-token text, the empty text.
    const texts = ["AA", "A", "A ", " A", "\n", "\n\n", "AB", "", "héllo wörld 你好 🙂", "<|im_end|>", "Yes", " No", "option 12: description 12\n"];
    for (const special of [false, true]) {
      const alone = await Promise.all(texts.map((text) => tokenizer.tokenize(text, special)));
      expect(await tokenizer.tokenizeMany(texts, special)).toEqual(alone);
    }
    await checkBatching(tokenizer);
    expect(tokenizer.batching).toBe(true);
  });
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
        reset(recorder);
        await probabilities(engine, STATE, [...questions]);
        const { texts, ...counts } = tally(recorder);
        seen[what] = { ...counts, texts: texts.length };
        expect(counts.reads, JSON.stringify(seen)).toBe(questions.length);
        expect(counts.completions, JSON.stringify(seen)).toBeLessThanOrEqual(2 * questions.length);
        expect(counts.http, JSON.stringify(seen)).toBeLessThanOrEqual(2 * counts.reads);
      }
      measured.push(`SmolLM2-135M (strict): ${JSON.stringify(seen)}`);
    } finally {
      await engine.close();
      await recorder.close();
      await real.stop();
    }
  }, 300_000);
});
