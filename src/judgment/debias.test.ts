import { describe, expect, it } from "vitest";
import { buildAnswer, keyedLogits, logSoftmax, NEUTRAL_TEMPERATURES } from "./answers.js";
import {
  answerInClientOrder,
  canonicalOrder,
  compareCodePoints,
  MAX_SHIFTS,
  PresentationAverage,
  presentationOrders,
  presentations,
  shiftOffsets,
  SHIFT_TOLERANCE,
  withOptionOrder,
} from "./debias.js";
import { keyed } from "./keyed.js";
import type { ChoiceQuestion, Question } from "./schema.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);
const rotate = <T>(xs: readonly T[], by: number) => xs.map((_, i) => xs[(i + by) % xs.length]);
const choice = (keys: string[]): ChoiceQuestion => ({
  type: "choice",
  instructions: "which?",
  criteria: keyed(
    keys,
    keys.map((k) => `about ${k}`),
  ),
});

describe("canonical order", () => {
  it("sorts keys by code point, not by UTF-16 unit: U+FF01 comes before an emoji", () => {
    const keys = ["🎉", "！", "b", "B", "a", "", "ab", "한"];
    expect(canonicalOrder(keys)).toEqual(["", "B", "a", "ab", "b", "한", "！", "🎉"]);
    // JavaScript's own `<` puts the emoji (a surrogate pair, 0xD83C…) before U+FF01.
    expect("🎉" < "！").toBe(true);
    expect(compareCodePoints("🎉", "！")).toBeGreaterThan(0);
    expect(compareCodePoints("ab", "ab")).toBe(0);
    expect(compareCodePoints("a", "ab")).toBeLessThan(0);
  });

  it("is one order for every order the client sends", () => {
    const keys = ["red", "green", "blue", "__proto__", "toString"];
    for (let by = 0; by < keys.length; by++) {
      expect(presentationOrders(rotate(keys, by), "canonical")).toEqual([["__proto__", "blue", "green", "red", "toString"]]);
      expect(presentationOrders([...rotate(keys, by)].reverse(), "canonical")).toEqual([["__proto__", "blue", "green", "red", "toString"]]);
    }
  });
});

describe("shift offsets", () => {
  it("follow the van der Corput order scaled to K, without repeats, every offset once for K ≤ 8", () => {
    expect(shiftOffsets(2)).toEqual([0, 1]);
    expect(shiftOffsets(3)).toEqual([0, 1, 2]); // 0, 1.5, 0.75→0 (repeat), 2.25
    expect(shiftOffsets(4)).toEqual([0, 2, 1, 3]);
    expect(shiftOffsets(8)).toEqual([0, 4, 2, 6, 1, 5, 3, 7]);
    for (let k = 2; k <= MAX_SHIFTS; k++)
      expect(
        [...shiftOffsets(k)].sort((a, b) => a - b),
        `K=${k}`,
      ).toEqual([...Array(k).keys()]);
  });

  it("are capped at MAX_SHIFTS for K > 8, spread evenly around the cycle", () => {
    expect(shiftOffsets(16)).toEqual([0, 8, 4, 12, 2, 10, 6, 14]);
    expect(shiftOffsets(20)).toEqual([0, 10, 5, 15, 2, 12, 7, 17]);
    for (const k of [9, 26, 100, 255]) {
      const offsets = shiftOffsets(k);
      expect(offsets, `K=${k}`).toHaveLength(MAX_SHIFTS);
      const sorted = [...offsets].sort((a, b) => a - b);
      sorted.forEach((o, i) => expect(o, `K=${k}: ${show(offsets)}`).toBe(Math.floor((i * k) / MAX_SHIFTS)));
    }
  });
});

describe("shift presentations", () => {
  it("start at the rotation that lists the smallest key first", () => {
    const orders = presentationOrders(["c", "d", "a", "b"], "shift");
    expect(orders).toEqual([
      ["a", "b", "c", "d"],
      ["c", "d", "a", "b"],
      ["b", "c", "d", "a"],
      ["d", "a", "b", "c"],
    ]);
  });

  it("are the same sequence for every cyclic shift of the client's order, and differ for another cycle", () => {
    const keys = ["m", "x", "b", "q", "a", "k", "z", "c", "e", "r"];
    const reference = presentationOrders(keys, "shift");
    expect(reference).toHaveLength(MAX_SHIFTS);
    for (let by = 1; by < keys.length; by++) expect(presentationOrders(rotate(keys, by), "shift"), `shifted by ${by}`).toEqual(reference);
    expect(presentationOrders([...keys].reverse(), "shift")).not.toEqual(reference);
  });

  it("reorder only choice questions; score levels and noul are shown once, as sent", () => {
    const score: Question = { type: "score", instructions: "how much?", criteria: ["low", "mid", "high"] };
    const noul: Question = { type: "noul", instructions: "it holds" };
    for (const mode of ["canonical", "shift"] as const) {
      expect(presentations(score, mode)).toEqual([score]);
      expect(presentations(noul, mode)).toEqual([noul]);
    }
    const shown = presentations(choice(["b", "a", "c"]), "shift") as ChoiceQuestion[];
    expect(shown.map((q) => Object.keys(q.criteria))).toEqual([
      ["a", "c", "b"],
      ["c", "b", "a"],
      ["b", "a", "c"],
    ]);
    expect(shown[1].criteria, "descriptions travel with their keys").toEqual({ c: "about c", b: "about b", a: "about a" });
  });

  it("keep an option named __proto__ as an own key with its description", () => {
    const q = withOptionOrder(choice(["x", "__proto__"]), ["__proto__", "x"]);
    expect(Object.keys(q.criteria)).toEqual(["__proto__", "x"]);
    expect(Object.getOwnPropertyDescriptor(q.criteria, "__proto__")?.value).toBe("about __proto__");
  });
});

describe("PresentationAverage", () => {
  it("maps each presentation back to its keys and averages the renormalised log-probabilities", () => {
    const average = new PresentationAverage(["b", "c", "a"]);
    expect(average.canonical).toEqual(["a", "b", "c"]);
    // Unnormalised scores: each presentation is renormalised first, so a constant shift is irrelevant.
    average.add(["b", "c", "a"], [Math.log(0.5) - 3, Math.log(0.3) - 3, Math.log(0.2) - 3]);
    average.add(["a", "b", "c"], [Math.log(0.6), Math.log(0.2), Math.log(0.2)]);
    const expected = [(Math.log(0.2) + Math.log(0.6)) / 2, (Math.log(0.5) + Math.log(0.2)) / 2, (Math.log(0.3) + Math.log(0.2)) / 2];
    average.mean().forEach((m, i) => expect(m, show(average.mean())).toBeCloseTo(expected[i], 14));
    expect(average.count).toBe(2);
  });

  it("is settled once a presentation moves no probability by more than the tolerance and keeps the argmax", () => {
    const average = new PresentationAverage(["a", "b"]);
    const p = (x: number) => [Math.log(x), Math.log(1 - x)];
    average.add(["a", "b"], p(0.6));
    expect(average.settled(), "never after one").toBe(false);
    average.add(["a", "b"], p(0.6));
    expect(average.settled(), "the same twice").toBe(true);
    // A reading that moves the mean by more than the tolerance unsettles it.
    average.add(["a", "b"], p(0.3));
    expect(average.settled()).toBe(false);
  });

  it("is not settled when the argmax changes, however small the move", () => {
    const average = new PresentationAverage(["a", "b"]);
    const tiny = SHIFT_TOLERANCE / 10;
    average.add(["a", "b"], [Math.log(0.5 + tiny), Math.log(0.5 - tiny)]);
    average.add(["a", "b"], [Math.log(0.5 - 3 * tiny), Math.log(0.5 + 3 * tiny)]);
    expect(average.mean()[0] < average.mean()[1], show(average.mean())).toBe(true);
    expect(average.settled()).toBe(false);
    average.add(["b", "a"], [Math.log(0.5), Math.log(0.5)]);
    expect(average.settled(), "moved less than the tolerance, argmax kept").toBe(true);
  });

  it("handles a label the model rules out (−∞) and a row it rules out entirely", () => {
    expect(logSoftmax([-Infinity, -Infinity])).toEqual([-Math.log(2), -Math.log(2)]);
    const average = new PresentationAverage(["a", "b"]);
    average.add(["a", "b"], [0, -Infinity]);
    average.add(["b", "a"], [-Infinity, 0]);
    expect(average.mean()).toEqual([0, -Infinity]);
    expect(average.settled()).toBe(true);
  });

  it("gives bit-identical means for the same presentations in the same order, whatever the client's order", () => {
    const readings = [
      { shown: ["a", "b", "c"], lp: [-0.1, -2.7, -3.3] },
      { shown: ["c", "a", "b"], lp: [-1.1, -0.7, -1.9] },
    ];
    const one = new PresentationAverage(["a", "b", "c"]);
    const other = new PresentationAverage(["c", "b", "a"]);
    for (const { shown, lp } of readings) {
      one.add(shown, lp);
      other.add(shown, lp);
    }
    expect(Object.is(one.mean()[0], other.mean()[0]) && one.mean().every((m, i) => m === other.mean()[i]), show([one.mean(), other.mean()])).toBe(true);
  });
});

describe("answerInClientOrder", () => {
  it("computes in the canonical order and keys probabilities and logits in the client's", () => {
    const client = choice(["zeta", "alpha", "mid"]);
    const shown = withOptionOrder(client, ["alpha", "mid", "zeta"]);
    const lp = [Math.log(0.2), Math.log(0.5), Math.log(0.3)];
    const answer = answerInClientOrder(client, shown, lp, NEUTRAL_TEMPERATURES, true);
    expect(answer.type).toBe("choice");
    if (answer.type !== "choice") return;
    expect(Object.keys(answer.probabilities)).toEqual(["zeta", "alpha", "mid"]);
    expect(Object.keys(answer.logits!)).toEqual(["zeta", "alpha", "mid"]);
    expect(answer.choice).toBe("mid");
    expect(answer.probabilities.alpha).toBeCloseTo(0.2, 14);
    expect(answer.probabilities.zeta).toBeCloseTo(0.3, 14);
    expect(answer.logits!.mid).toBeCloseTo(Math.log(0.5), 14);
  });

  it("breaks a tie by the canonical order, so the choice does not depend on the client's", () => {
    for (const keys of [
      ["b", "a"],
      ["a", "b"],
    ]) {
      const client = choice(keys);
      const answer = answerInClientOrder(client, withOptionOrder(client, ["a", "b"]), [-1, -1], NEUTRAL_TEMPERATURES, false);
      expect(answer, show(answer)).toMatchObject({ choice: "a" });
      expect(answer).not.toHaveProperty("logits");
    }
  });

  it("leaves score and noul answers as buildAnswer makes them", () => {
    const score: Question = { type: "score", instructions: "?", criteria: ["lo", "hi"] };
    const noul: Question = { type: "noul", instructions: "it holds" };
    const lp = [Math.log(0.25), Math.log(0.75)];
    for (const q of [score, noul]) {
      expect(answerInClientOrder(q, q, lp, NEUTRAL_TEMPERATURES, false)).toEqual(buildAnswer(q, lp, NEUTRAL_TEMPERATURES));
      expect(answerInClientOrder(q, q, lp, NEUTRAL_TEMPERATURES, true)).toEqual({ ...buildAnswer(q, lp, NEUTRAL_TEMPERATURES), logits: keyedLogits(q, lp) });
    }
  });
});
