import { describe, expect, it } from "vitest";
import { Mulberry32 } from "../gguf/prng.js";
import { parseDataset } from "./dataset.js";
import { compareDistributions, reorderedKeys, summariseChanges, withOptionsReordered, withRenamedIds } from "./robustness.js";

const show = (value: unknown) => JSON.stringify(value);

const [item] = parseDataset(
  JSON.stringify({
    state: "s",
    questions: {
      topic: { type: "choice", instructions: "t", criteria: { a: "first", b: null, c: "third" } },
      q1: { type: "noul", instructions: "n" },
      level: { type: "score", instructions: "l", criteria: ["lo", "hi"] },
    },
    gold: { topic: "a", q1: true, level: 1 },
  }),
  "d.jsonl",
);

describe("option order", () => {
  it("shift moves the first option to the end", () => {
    expect(reorderedKeys(["a", "b", "c"], "shift", new Mulberry32(1))).toEqual(["b", "c", "a"]);
  });

  it("shuffle is a permutation, repeatable by seed, and never the original order", () => {
    for (let seed = 0; seed < 50; seed++) {
      for (const keys of [
        ["x", "y"],
        ["a", "b", "c", "d", "e"],
      ]) {
        const out = reorderedKeys(keys, "shuffle", new Mulberry32(seed));
        expect([...out].sort(), show({ seed, out })).toEqual([...keys].sort());
        expect(out, show({ seed, out })).not.toEqual(keys);
        expect(reorderedKeys(keys, "shuffle", new Mulberry32(seed))).toEqual(out);
      }
    }
  });

  it("reorders only choice options, each keeping its own description", () => {
    const questions = withOptionsReordered(item, "shift", new Mulberry32(1)) as Record<string, any>;
    expect(Object.keys(questions)).toEqual(["topic", "q1", "level"]);
    expect(Object.entries(questions.topic.criteria), show(questions)).toEqual([
      ["b", null],
      ["c", "third"],
      ["a", "first"],
    ]);
    expect(questions.q1).toBe(item.questions.q1);
    expect(questions.level).toBe(item.questions.level);
    expect(Object.keys(item.questions.topic.criteria as object), "the item itself is untouched").toEqual(["a", "b", "c"]);
  });
});

describe("question ids", () => {
  it("renames every question to a neutral id that differs from its original", () => {
    const { questions, renamed } = withRenamedIds(item);
    expect([...renamed], show([...renamed])).toEqual([
      ["topic", "q1"],
      ["q1", "q2"],
      ["level", "q3"],
    ]);
    expect(questions.q1).toBe(item.questions.topic);
    const [already] = parseDataset(JSON.stringify({ questions: { q1: { type: "noul", instructions: "x" } }, gold: { q1: true } }), "d");
    expect([...withRenamedIds(already).renamed]).toEqual([["q1", "q1_"]]);
  });
});

describe("comparing answers", () => {
  it("reports whether the top label changed and the mean and largest absolute change", () => {
    const change = compareDistributions("choice", [0.5, 0.3, 0.2], [0.3, 0.5, 0.2]);
    expect(change.changed).toBe(true);
    expect(change.meanAbsChange, show(change)).toBeCloseTo(0.4 / 3, 14);
    expect(change.maxAbsChange, show(change)).toBeCloseTo(0.2, 14);
    expect(compareDistributions("noul", [0.6, 0.4], [0.55, 0.45])).toMatchObject({ changed: false });
    expect(compareDistributions("noul", [0.6, 0.4], [0.55, 0.45]).meanAbsChange).toBeCloseTo(0.05, 14);
  });

  it("counts a tie moving to the first label as a change only when the first label differs", () => {
    expect(compareDistributions("choice", [0.5, 0.5], [0.5, 0.5]).changed).toBe(false);
    expect(compareDistributions("choice", [0.4, 0.6], [0.5, 0.5]).changed).toBe(true);
  });

  it("summarises overall and per type", () => {
    const summary = summariseChanges([
      compareDistributions("choice", [1, 0], [0, 1]),
      compareDistributions("choice", [1, 0], [1, 0]),
      compareDistributions("noul", [0.7, 0.3], [0.6, 0.4]),
    ]);
    expect(Object.keys(summary)).toEqual(["overall", "choice", "noul"]);
    expect(summary.overall, show(summary)).toMatchObject({ compared: 3, changedRate: 1 / 3, maxAbsChange: 1 });
    expect(summary.overall!.meanAbsChange).toBeCloseTo((1 + 0 + 0.1) / 3, 14);
    expect(summary.choice).toMatchObject({ compared: 2, changedRate: 0.5, meanAbsChange: 0.5 });
    expect(summariseChanges([])).toEqual({ overall: undefined });
  });
});
