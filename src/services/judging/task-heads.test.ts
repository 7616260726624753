import { describe, expect, it } from "vitest";
import { buildAnswer, NEUTRAL_TEMPERATURES } from "../../judgment/answers.js";
import type { Head } from "../../judgment/heads/index.js";
import type { Question } from "../../judgment/schema.js";
import { planTask, promptQuestions, taskAnswer, type ModelBinding, type TaskSelection } from "./task-heads.js";

/** How one answer is made from a task's head: which head, which option order, which floor. */
const binding: ModelBinding = { model: "m", weights: "sha256:x", promptStyle: '"chat"', template: "chatml" };
const topic: Question = { type: "choice", instructions: "What is it about?", criteria: { billing: "money", tech: null, other: null } };
const asked: Question = { type: "choice", instructions: "What is it about?", criteria: { other: null, tech: null, billing: "money" } };

function selection(head: Head, floor?: number): TaskSelection {
  return {
    id: "task_1",
    name: "support",
    questions: { topic },
    abstainBelow: floor === undefined ? {} : { topic: floor },
    versions: [{ version: 2, binding, heads: { topic: head } }],
  };
}

// The readout's log-probabilities in the task's option order: billing, tech, other.
const logProbs = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];

describe("taskAnswer", () => {
  it("keeps the answer given without the task, calibration included, under a plain head; keyed in the request's order", () => {
    const plan = planTask(selection({ kind: "plain" }), binding, ["topic"], [asked]);
    const [shown] = promptQuestions(plan, [asked]);
    expect(Object.keys((shown as typeof topic).criteria), "the prompt shows the task's order").toEqual(["billing", "tech", "other"]);
    const calibrated = buildAnswer(shown, logProbs, { ...NEUTRAL_TEMPERATURES, choice: 2 });
    const answer = taskAnswer(plan, 0, asked, calibrated, logProbs, undefined, false);
    expect(answer).toMatchObject({ type: "choice", choice: "billing", x_task: { id: "task_1", version: 2, head: "plain" } });
    expect(Object.keys((answer as { probabilities: object }).probabilities)).toEqual(["other", "tech", "billing"]);
    expect((answer as { probabilities: Record<string, number> }).probabilities.billing).toBeCloseTo(
      (calibrated as { probabilities: Record<string, number> }).probabilities.billing,
      15,
    );
    expect((answer as { probabilities: Record<string, number> }).probabilities.billing).not.toBeCloseTo(0.5, 3);
  });

  it("answers through a level 1 head, abstaining below the floor on the top probability and not at or above it", () => {
    const head: Head = { kind: "level1", scale: [1, 1, 1], bias: [0, Math.log(2), 0] };
    const plain = buildAnswer(topic, logProbs, NEUTRAL_TEMPERATURES);
    const kept = taskAnswer(planTask(selection(head, 0.45), binding, ["topic"], [asked]), 0, asked, plain, logProbs, undefined, false);
    // softmax(log 0.5, log 0.6, log 0.2) = 0.385, 0.462, 0.154: tech, its top probability 0.462.
    expect(kept).toMatchObject({ choice: "tech", x_task: { version: 2, head: "level1" } });
    expect((kept as { probabilities: Record<string, number> }).probabilities.tech).toBeCloseTo(0.6 / 1.3, 12);
    expect(kept).not.toHaveProperty("x_abstain");
    const abstained = taskAnswer(planTask(selection(head, 0.5), binding, ["topic"], [asked]), 0, asked, plain, logProbs, undefined, false);
    expect(abstained).toMatchObject({ x_abstain: true });
  });

  it("says why no version answered: another model, another question", () => {
    const moved = planTask(selection({ kind: "plain" }), { ...binding, weights: "sha256:y" }, ["topic"], [asked]);
    expect(taskAnswer(moved, 0, asked, buildAnswer(asked, logProbs, NEUTRAL_TEMPERATURES), logProbs, undefined, false)).toMatchObject({
      x_task: { id: "task_1", version: null, reason: expect.stringMatching(/fit it again/) },
    });
    const other = planTask(selection({ kind: "plain" }), binding, ["topic"], [{ ...asked, instructions: "Another?" }]);
    expect(other.perQuestion[0]).toEqual({ reason: expect.stringMatching(/not one of the task's questions/) });
  });

  it("answers plainly, saying why, where a level 2 head meets an engine that reads no hidden states now", () => {
    const head: Head = { kind: "level2", mean: [0], std: [1], weights: [[1], [0], [-1]], bias: [0, 0, 0], l2: 1 };
    expect(planTask(selection(head), binding, ["topic"], [asked]).perQuestion[0]).toMatchObject({ head });
    const blind = planTask(selection(head), binding, ["topic"], [asked], false);
    expect(blind.perQuestion[0]).toEqual({ reason: expect.stringMatching(/reads no hidden states now/) });
    const level1: Head = { kind: "level1", scale: [1, 1, 1], bias: [0, 0, 0] };
    expect(planTask(selection(level1), binding, ["topic"], [asked], false).perQuestion[0]).toMatchObject({ head: level1 });
  });
});
