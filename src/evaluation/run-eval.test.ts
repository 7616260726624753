import { afterEach, describe, expect, it } from "vitest";
import { createJudgmentClient } from "./client.js";
import { parseDataset } from "./dataset.js";
import { replyTo, startFakeJudgeServer, type FakeJudgeServer, type ScriptedResponse } from "../testing/fake-judge-server.js";
import { runEvaluation, type EvalChecks } from "./run-eval.js";

/**
 * The robustness checks against servers built to fail them: each check must see exactly the
 * sensitivity the server has (the real server, which has none, is in src/cli/evaluation.test.ts).
 */

const show = (value: unknown) => JSON.stringify(value, null, 1);
const items = parseDataset(
  [
    {
      id: "a",
      state: "s1",
      questions: { pick: { type: "choice", instructions: "x", criteria: { red: null, green: null, blue: null } }, holds: { type: "noul", instructions: "y" } },
      gold: { pick: "red", holds: true },
    },
    { id: "b", questions: { level: { type: "score", instructions: "z", criteria: ["lo", "mid", "hi"] } }, gold: { level: 2 } },
  ]
    .map((item) => JSON.stringify(item))
    .join("\n"),
  "d.jsonl",
);

let server: FakeJudgeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function evaluate(respond: (body: any) => ScriptedResponse, checks: EvalChecks, extra: { debias?: "none" | "canonical" | "shift"; task?: string } = {}) {
  server = await startFakeJudgeServer(respond);
  const client = createJudgmentClient({ url: server.url, key: "k" });
  return runEvaluation({
    items,
    client,
    concurrency: 2,
    errorRates: [0.5],
    checks,
    seed: 7,
    model: "jev-latest",
    progress: () => ({ advance() {}, finish() {} }),
    ...extra,
  });
}

describe("runEvaluation", () => {
  it("scores the baseline answers and sends the model name when given", async () => {
    const result = await evaluate((body) => replyTo(body), {});
    expect(
      result.records.map((r) => [r.item, r.question, r.correct]),
      show(result.records),
    ).toEqual([
      ["a", "pick", true],
      ["a", "holds", true],
      ["b", "level", false],
    ]);
    expect(result.metrics.overall!.accuracy).toBeCloseTo(2 / 3, 14);
    expect(result.usage).toEqual({ requests: 2, input_tokens: 20 });
    expect(server!.received.map((r) => r.body.model)).toEqual(["jev-latest", "jev-latest"]);
    expect(server!.received[1].body, "an item without state sends none").not.toHaveProperty("state");
    expect(result.robustness).toEqual({});
  });

  it("option order: a server that always favours the first option listed changes its choice every time", async () => {
    const result = await evaluate((body) => replyTo(body), { order: "shift" });
    const order = result.robustness.optionOrder!;
    expect(order, show(order)).toMatchObject({ mode: "shift", overall: { compared: 1, changedRate: 1 } });
    expect(order.overall!.maxAbsChange).toBeCloseTo(0.6 - 0.2, 12);
    const reordered = server!.received.find((r) => Object.keys(r.body.questions.pick?.criteria ?? {})[0] === "green");
    expect(reordered, show(server!.received.map((r) => r.body))).toBeDefined();
  });

  it("--debias: every request, variants included, carries x_debias; none is sent without it", async () => {
    const result = await evaluate((body) => replyTo(body), { order: "shuffle", ids: true, interference: true }, { debias: "shift" });
    expect(result.debias).toBe("shift");
    expect(server!.received.length, show(server!.received)).toBe(result.usage.requests);
    expect(
      server!.received.map((r) => r.body.x_debias),
      show(server!.received.map((r) => r.body)),
    ).toEqual(server!.received.map(() => "shift"));
    await server!.close();
    const plain = await evaluate((body) => replyTo(body), { order: "shuffle" });
    expect(plain).not.toHaveProperty("debias");
    expect(
      server!.received.filter((r) => "x_debias" in r.body),
      show(server!.received.map((r) => r.body)),
    ).toEqual([]);
  });

  it("--task: every request, variants included, carries top-level x_task; none is sent without it", async () => {
    const result = await evaluate((body) => replyTo(body), { order: "shift", interference: true }, { task: "reviews" });
    expect(result.task).toBe("reviews");
    expect(
      server!.received.map((r) => r.body.x_task),
      show(server!.received.map((r) => r.body)),
    ).toEqual(server!.received.map(() => "reviews"));
    await server!.close();
    const plain = await evaluate((body) => replyTo(body), { order: "shift" });
    expect(plain).not.toHaveProperty("task");
    expect(server!.received.filter((r) => "x_task" in r.body)).toEqual([]);
  });

  it("question ids: a server that reads the ids is caught; one that does not is not", async () => {
    const readsIds = await evaluate(
      (body) =>
        replyTo(body, "m", (type, labels) =>
          Object.keys(body.questions)[0] === "q1"
            ? labels.map((_, i) => (i === labels.length - 1 ? 0.9 : 0.1 / (labels.length - 1)))
            : labels.map(() => 1 / labels.length),
        ),
      { ids: true },
    );
    expect(readsIds.robustness.questionIds!.overall, show(readsIds.robustness)).toMatchObject({ compared: 3, changedRate: 1 });
    await server!.close();
    const blind = await evaluate((body) => replyTo(body), { ids: true });
    expect(blind.robustness.questionIds!.overall, show(blind.robustness)).toMatchObject({ compared: 3, changedRate: 0, maxAbsChange: 0 });
  });

  it("interference: asks each question of a multi-question item alone and compares", async () => {
    const result = await evaluate(
      (body) =>
        replyTo(body, "m", (type, labels) =>
          Object.keys(body.questions).length === 1 ? labels.map(() => 1 / labels.length) : labels.map((_, i) => (i === 0 ? 0.6 : 0.4 / (labels.length - 1))),
        ),
      { interference: true },
    );
    // Item b has one question: its baseline already is that question alone.
    expect(result.usage.requests).toBe(2 + 2);
    const summary = result.robustness.interference!;
    expect(summary.overall, show(summary)).toMatchObject({ compared: 2 });
    expect(summary.noul!.meanAbsChange).toBeCloseTo(0.1, 12);
    expect(summary.choice!.maxAbsChange).toBeCloseTo(0.6 - 1 / 3, 12);
  });

  it("stops with the item's name when an answer is missing or malformed", async () => {
    await expect(evaluate(() => ({ status: 200, body: { model: "m", answers: {}, usage: { input_tokens: 1 } } }), {})).rejects.toThrow(
      /^item a \(line 1\): question "pick": the server sent no answer/,
    );
    await server!.close();
    await expect(
      evaluate((body) => {
        const reply = replyTo(body);
        if (body.questions.level) (reply.body as any).answers.level.probabilities = { "0": 0.5, "1": 0.5 };
        return reply;
      }, {}),
    ).rejects.toThrow(/^item b \(line 2\): question "level": probabilities\["2"\] is missing/);
  });
});
