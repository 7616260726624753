import { describe, expect, it } from "vitest";
import { confusionTables, MAX_LABELS, MAX_TABLES, type LabelledPrediction } from "./confusion.js";

const show = (value: unknown) => JSON.stringify(value);
const hard = (labels: string[], label: string) => labels.map((l) => (l === label ? 1 : 0));
/** A choice answer putting 0.7 on `answered`. */
function answer(question: string, labels: string[], gold: string | number[], answered: string): LabelledPrediction {
  const probabilities = labels.map((l) => (l === answered ? 0.7 : 0.3 / (labels.length - 1)));
  return { type: "choice", question, labels, probabilities, gold: typeof gold === "string" ? hard(labels, gold) : gold };
}

describe("confusion tables", () => {
  it("counts gold label against answered label, one table per option set whatever the options' order", () => {
    const abc = ["a", "b", "c"];
    const cab = ["c", "a", "b"];
    const { tables, omitted } = confusionTables([
      answer("q1", abc, "a", "a"),
      answer("q1", abc, "a", "b"),
      answer("q2", cab, "b", "c"),
      answer("q3", ["yes", "no"], "no", "no"),
      { type: "noul", question: "n", labels: ["true", "false"], probabilities: [0.9, 0.1], gold: [0, 1] },
    ]);
    expect(tables, show(tables)).toEqual([
      {
        labels: abc,
        questions: ["q1", "q2"],
        answers: 3,
        counts: [
          [1, 1, 0],
          [0, 0, 1],
          [0, 0, 0],
        ],
      },
      {
        labels: ["yes", "no"],
        questions: ["q3"],
        answers: 1,
        counts: [
          [0, 0],
          [0, 1],
        ],
      },
    ]);
    expect(omitted).toEqual({ tables: 0, answers: 0 });
  });

  it("counts a soft gold label as its most likely label, as accuracy does", () => {
    const { tables } = confusionTables([answer("q", ["x", "y"], [0.3, 0.7], "y"), answer("q", ["x", "y"], [0.5, 0.5], "y")]);
    expect(tables[0].counts, show(tables)).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });

  it("leaves out option sets too large to read as a grid, and those beyond the first tables, saying how many answers", () => {
    const big = Array.from({ length: MAX_LABELS + 1 }, (_, i) => `o${i}`);
    const small = (n: number) => [`s${n}`, `t${n}`];
    const records = [
      answer("big", big, "o0", "o1"),
      answer("big", big, "o0", "o0"),
      ...Array.from({ length: MAX_TABLES + 2 }, (_, n) => answer(`q${n}`, small(n), `s${n}`, `s${n}`)),
      answer("q0", small(0), "s0", "t0"),
    ];
    const { tables, omitted } = confusionTables(records);
    expect(tables, "the most used sets first").toHaveLength(MAX_TABLES);
    expect(tables[0].questions).toEqual(["q0"]);
    expect(tables.some((t) => t.questions.includes("big"))).toBe(false);
    expect(omitted, show(omitted)).toEqual({ tables: 3, answers: 2 + 2 });
    expect(tables.reduce((sum, t) => sum + t.answers, 0) + omitted.answers).toBe(records.length);
  });
});
