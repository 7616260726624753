import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DatasetError, parseDataset } from "./dataset.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);
const lines = (...items: unknown[]) => items.map((i) => (typeof i === "string" ? i : JSON.stringify(i))).join("\n");

const topic = { type: "choice", instructions: "Topic?", criteria: { billing: "money", tech: null, other: null } };
const angry = { type: "noul", instructions: "The customer is angry." };
const urgency = { type: "score", instructions: "How urgent?", criteria: ["low", "medium", "high"] };

function problemsOf(text: string): string[] {
  try {
    parseDataset(text, "data.jsonl");
  } catch (error) {
    if (error instanceof DatasetError) return error.problems;
    throw error;
  }
  throw new Error(`expected a DatasetError for:\n${text}`);
}

describe("parseDataset", () => {
  it("reads hard gold labels of every type into one-hot distributions over the labels", () => {
    const [item] = parseDataset(
      lines({ id: "a", state: "I was charged twice.", questions: { topic, angry, urgency }, gold: { topic: "tech", angry: false, urgency: 2 } }),
      "data.jsonl",
    );
    expect(item.id).toBe("a");
    expect(item.state).toBe("I was charged twice.");
    expect(item.labelled, show(item)).toEqual([
      { id: "topic", type: "choice", labels: ["billing", "tech", "other"], gold: [0, 1, 0], soft: false },
      { id: "angry", type: "noul", labels: ["true", "false"], gold: [0, 1], soft: false },
      { id: "urgency", type: "score", labels: ["0", "1", "2"], gold: [0, 0, 1], soft: false },
    ]);
    expect(item.questions.topic, "questions are kept exactly as written").toEqual(topic);
  });

  it("reads soft gold distributions; omitted labels get 0 and a rounded sum is renormalised", () => {
    const [item] = parseDataset(
      lines({
        questions: { topic, angry, urgency, u2: urgency },
        gold: { topic: { billing: 0.333, tech: 0.333, other: 0.333 }, angry: 0.7, urgency: [0.2, 0.8, 0], u2: { "1": 1 } },
      }),
      "data.jsonl",
    );
    const gold = Object.fromEntries(item.labelled.map((q) => [q.id, q.gold]));
    gold.topic.forEach((g) => expect(g, show(gold)).toBeCloseTo(1 / 3, 14));
    expect(gold.angry[0]).toBeCloseTo(0.7, 14);
    expect(gold.angry[1]).toBeCloseTo(0.3, 14);
    expect(gold.urgency).toEqual([0.2, 0.8, 0]);
    expect(gold.u2).toEqual([0, 1, 0]);
    expect(
      item.labelled.every((q) => q.soft),
      show(item.labelled),
    ).toBe(true);
  });

  it("skips blank lines, names items without id by their line, and keeps a __proto__ option", () => {
    const weird = { type: "choice", instructions: "x", criteria: JSON.parse('{"__proto__": null, "b": null}') };
    const text = `\n${lines({ questions: { q: weird }, gold: JSON.parse('{"q": "__proto__"}') })}\n\n`;
    const [item] = parseDataset(text, "data.jsonl");
    expect(item.id).toBe("line 2");
    expect(item.labelled[0].labels).toEqual(["__proto__", "b"]);
    expect(item.labelled[0].gold).toEqual([1, 0]);
  });

  it("reports every problem at once, each with file name and line number", () => {
    const problems = problemsOf(
      lines(
        "{not json",
        { questions: { topic }, gold: { topic: "bilYing" } },
        { questions: { topic, angry }, gold: { topic: "tech" } },
        { questions: { topic }, gold: { topic: "tech", tpoic: "tech" } },
        { questions: { urgency }, gold: { urgency: 3 } },
        { questions: { urgency }, gold: { urgency: [1] } },
        { questions: { angry }, gold: { angry: 1.5 } },
        { questions: { topic }, gold: { topic: { billing: 0.5, tech: 0.2 } } },
        { questions: { topic }, gold: { topic: { billing: -0.5, tech: 1.5 } } },
        { questions: { q: { type: "yesno", instructions: "x" } }, gold: { q: true } },
        { questions: { q: { type: "choice", instructions: "x", criteria: { only: null } } }, gold: { q: "only" } },
        { questions: {}, gold: {} },
        { questions: { angry } },
        [1, 2],
      ),
    );
    expect(problems, show(problems)).toEqual([
      expect.stringMatching(/^data\.jsonl:1: not valid JSON/),
      'data.jsonl:2: gold.topic: "bilYing" is not an option (options: billing, tech, other)',
      'data.jsonl:3: gold has no answer for question "angry"',
      'data.jsonl:4: gold.tpoic: there is no question "tpoic"',
      "data.jsonl:5: gold.urgency: a score gold answer is a level index from 0 to 2, or a distribution over the levels",
      "data.jsonl:6: gold.urgency: 1 probability for 3 levels",
      "data.jsonl:7: gold.angry: a noul gold answer is true, false, or the probability (0 to 1) that the statement holds",
      "data.jsonl:8: gold.topic: probabilities sum to 0.7, not 1",
      "data.jsonl:9: gold.topic.billing: a probability must be a number ≥ 0 (got -0.5)",
      'data.jsonl:10: questions.q.type must be one of "choice", "noul", "score" (got "yesno")',
      "data.jsonl:11: questions.q.criteria must be an object with at least 2 options",
      "data.jsonl:12: questions must be a non-empty object of question id to question",
      'data.jsonl:13: gold must be an object of question id to gold answer, e.g. {"topic": "billing"}',
      "data.jsonl:14: each line must be a JSON object with questions and gold",
    ]);
  });

  it("refuses a repeated item id, naming the first line that used it", () => {
    const item = { id: "dup", questions: { angry }, gold: { angry: true } };
    expect(problemsOf(lines(item, item))).toEqual(['data.jsonl:2: id "dup" is already used on line 1']);
  });

  it("puts the first problems in the error message and counts the rest", () => {
    const bad = Array.from({ length: 25 }, () => "[]").join("\n");
    expect(() => parseDataset(bad, "d.jsonl")).toThrow(/d\.jsonl:20: .*\n… and 5 more$/s);
    expect(() => parseDataset("\n\n", "d.jsonl")).toThrow(/has no items/);
  });

  it("accepts the example dataset shipped in examples/", () => {
    const text = readFileSync(new URL("../../examples/eval-sample.jsonl", import.meta.url), "utf8");
    const items = parseDataset(text, "eval-sample.jsonl");
    const types = new Set(items.flatMap((i) => i.labelled.map((q) => q.type)));
    expect(items.length, show(items.map((i) => i.id))).toBeGreaterThanOrEqual(10);
    expect([...types].sort()).toEqual(["choice", "noul", "score"]);
  });
});
