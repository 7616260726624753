import { expect, it } from "vitest";
import { explainRefusal } from "../services/billing.js";
import { plural } from "./plural.js";

it("counts in the number they need: 1 question, 0 and 2 questions", () => {
  expect([plural(0, "question"), plural(1, "question"), plural(2, "question")]).toEqual(["0 questions", "1 question", "2 questions"]);
});

it('the 402\'s message says "1 question", never "1 questions"', () => {
  const message = explainRefusal(1, 5, { planUsed: 9, allowance: 10, balanceMicro: 0, heldMicro: 0 });
  expect(message).toContain("needs 1 question of plan allowance (1 left this period)");
});
