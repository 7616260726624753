import { afterEach, describe, expect, it } from "vitest";
import { Mulberry32 } from "../gguf/prng.js";
import { createJudgmentClient, type JudgmentClient, type JudgmentReply } from "./client.js";
import { parseDataset } from "./dataset.js";
import { startFakeJudgeServer, type FakeJudgeServer } from "../testing/fake-judge-server.js";
import { runCalibration, splitItems } from "./run-calibrate.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);

let server: FakeJudgeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * A dataset of noul and 3-option choice items whose true probabilities are known (the state
 * carries them), gold labels drawn from them, and a server whose logits are T·log q: a model
 * that is overconfident by exactly T. Calibrating must recover T.
 */
function syntheticDataset(count: number, seed: number): string {
  const rng = new Mulberry32(seed);
  const draw = (q: number[]) => {
    let u = rng.next();
    const i = q.findIndex((p) => (u -= p) < 0);
    return i < 0 ? q.length - 1 : i;
  };
  return Array.from({ length: count }, (_, n) => {
    const p = 0.02 + 0.96 * rng.next();
    const raw = [rng.next(), rng.next(), rng.next()].map((x) => Math.exp(3 * x));
    const q = raw.map((x) => x / raw.reduce((a, b) => a + b, 0));
    return JSON.stringify({
      id: `s${n}`,
      state: { noul: p, choice: q },
      questions: { holds: { type: "noul", instructions: "x" }, pick: { type: "choice", instructions: "y", criteria: { a: null, b: null, c: null } } },
      gold: { holds: draw([p, 1 - p]) === 0, pick: ["a", "b", "c"][draw(q)] },
    });
  }).join("\n");
}

/** In process rather than over HTTP (the client has its own tests): 1000 requests stay fast. */
function overconfidentClient(temperature: number): JudgmentClient {
  const reply = (body: any): JudgmentReply => {
    const { noul, choice } = body.state as { noul: number; choice: number[] };
    const logits = (ps: number[]) => ps.map((p) => temperature * Math.log(p));
    const softmax = (zs: number[]) => zs.map((z) => Math.exp(z) / zs.reduce((s, w) => s + Math.exp(w), 0));
    const pChoice = softmax(logits(choice));
    const pNoul = softmax(logits([noul, 1 - noul]));
    const [za, zb, zc] = logits(choice);
    return {
      model: "synthetic",
      answers: {
        holds: { type: "noul", noul: pNoul[0], logits: { true: logits([noul])[0], false: logits([1 - noul])[0] } },
        pick: { type: "choice", choice: "a", probabilities: { a: pChoice[0], b: pChoice[1], c: pChoice[2] }, logits: { a: za, b: zb, c: zc } },
      },
      usage: { input_tokens: 1 },
    };
  };
  return { judge: async (body) => reply(JSON.parse(JSON.stringify(body))) };
}

describe("runCalibration on synthetic data", () => {
  it("recovers the server's known overconfidence per type and lowers the held-out ECE", async () => {
    const items = parseDataset(syntheticDataset(1000, 3), "synthetic.jsonl");
    const client = overconfidentClient(2);
    const result = await runCalibration({
      items,
      client,
      concurrency: 8,
      holdout: 0.3,
      seed: 1,
      minBucketAnswers: 50,
      progress: () => ({ advance() {}, finish() {} }),
    });
    const context = show({ temperatures: result.temperatures, heldOut: result.heldOut, split: result.split });

    expect(result.model).toBe("synthetic");
    expect(result.logitsSource).toBe("logits");
    expect(result.split, context).toEqual({ fitItems: 700, fitAnswers: 1400, heldOutItems: 300, heldOutAnswers: 600, inSample: false });
    expect(result.temperatures.noul / 2, context).toBeGreaterThan(0.85);
    expect(result.temperatures.noul / 2, context).toBeLessThan(1.15);
    expect(result.temperatures.choice / 2, context).toBeGreaterThan(0.85);
    expect(result.temperatures.choice / 2, context).toBeLessThan(1.15);
    expect(result.temperatures.score, "no score data: stays 1").toBe(1);
    const { uncalibrated, calibrated } = result.heldOut;
    expect(calibrated.overall!.ece, context).toBeLessThan(uncalibrated.overall!.ece / 2);
    expect(calibrated.overall!.nll, context).toBeLessThan(uncalibrated.overall!.nll);
  });

  it("refuses a server that answers as more than one model", async () => {
    let n = 0;
    server = await startFakeJudgeServer(() => ({
      status: 200,
      body: { model: `m${n++ % 2}`, answers: { holds: { type: "noul", noul: 0.5 } }, usage: { input_tokens: 1 } },
    }));
    const items = parseDataset(
      [1, 2].map((i) => JSON.stringify({ id: `i${i}`, questions: { holds: { type: "noul", instructions: "x" } }, gold: { holds: true } })).join("\n"),
      "d",
    );
    const client = createJudgmentClient({ url: server.url, key: "k" });
    await expect(
      runCalibration({ items, client, concurrency: 1, holdout: 0, seed: 1, minBucketAnswers: 50, progress: () => ({ advance() {}, finish() {} }) }),
    ).rejects.toThrow(/several models \(m0, m1\)/);
  });
});

describe("splitItems", () => {
  const items = Array.from({ length: 10 }, (_, i) => i);

  it("holds out the given share, disjoint and covering, in file order, the same for the same seed", () => {
    const split = splitItems(items, 0.3, 5);
    expect(split.heldOutItems, show(split)).toHaveLength(3);
    expect([...split.fitItems, ...split.heldOutItems].sort((a, b) => a - b)).toEqual(items);
    expect(split.fitItems).toEqual([...split.fitItems].sort((a, b) => a - b));
    expect(splitItems(items, 0.3, 5)).toEqual(split);
    expect(splitItems(items, 0.3, 6), "another seed, another split").not.toEqual(split);
  });

  it("keeps at least one item on each side, and holds none out for a share of 0", () => {
    expect(splitItems(items, 0.01, 1).heldOutItems).toHaveLength(1);
    expect(splitItems(items, 0.99, 1).fitItems).toHaveLength(1);
    expect(splitItems([1], 0, 1)).toEqual({ fitItems: [1], heldOutItems: [] });
    expect(() => splitItems([1], 0.3, 1)).toThrow(/at least 2 items.*--holdout 0/);
  });
});
