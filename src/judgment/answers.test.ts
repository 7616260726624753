import { describe, expect, it } from "vitest";
import type { Question } from "./schema.js";
import { buildAnswer, keyedLogits, logSoftmax, NEUTRAL_TEMPERATURES, normalise, temperatureFor, type Temperatures } from "./answers.js";
import { keyed } from "./keyed.js";
import { choiceConfidence, scoreConfidence } from "./confidence.js";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const show = (value: unknown) => JSON.stringify(value, null, 1);
const entropy = (p: number[]) => -sum(p.map((x) => (x > 0 ? x * Math.log(x) : 0)));

describe("normalise", () => {
  it("at T = 1 is exp(logP) renormalised over the labels", () => {
    const logProbs = [Math.log(0.3), Math.log(0.1), Math.log(0.05)];
    const p = normalise(logProbs, 1);
    const expected = [0.3 / 0.45, 0.1 / 0.45, 0.05 / 0.45];
    p.forEach((x, i) => expect(x, show({ p, expected })).toBeCloseTo(expected[i], 14));
    expect(sum(p), show(p)).toBeCloseTo(1, 14);
  });

  it("does not underflow for very negative log-probabilities", () => {
    const p = normalise([-1000, -1001, -1002], 1);
    const w = [1, Math.exp(-1), Math.exp(-2)];
    p.forEach((x, i) => expect(x, show(p)).toBeCloseTo(w[i] / sum(w), 14));
  });

  it("flattens more as T grows, keeping the order of the labels", () => {
    const logProbs = [-0.2, -2.5, -4, -7];
    let previous = normalise(logProbs, 1);
    for (const t of [1.5, 2, 4, 10, 100]) {
      const p = normalise(logProbs, t);
      expect(entropy(p), `T=${t}: ${show({ p, previous })}`).toBeGreaterThan(entropy(previous));
      expect(Math.max(...p), `T=${t}`).toBeLessThan(Math.max(...previous));
      expect(
        [...p].sort((a, b) => b - a),
        `T=${t}: order kept`,
      ).toEqual(p);
      expect(sum(p)).toBeCloseTo(1, 12);
      previous = p;
    }
    const nearlyUniform = normalise(logProbs, 1e9);
    nearlyUniform.forEach((x) => expect(x, show(nearlyUniform)).toBeCloseTo(0.25, 6));
  });

  it("sharpens for T < 1", () => {
    const logProbs = [Math.log(0.6), Math.log(0.4)];
    const p = normalise(logProbs, 0.5);
    expect(p[0], show(p)).toBeCloseTo(0.36 / 0.52, 12);
  });

  it("gives a uniform answer when every label has log-probability −Infinity", () => {
    for (const n of [2, 3, 10, 255]) {
      const p = normalise(
        Array.from({ length: n }, () => -Infinity),
        1,
      );
      expect(p, show(p)).toEqual(Array.from({ length: n }, () => 1 / n));
    }
  });

  it("gives 0 to a label with log-probability −Infinity when another label is possible", () => {
    const p = normalise([-Infinity, Math.log(0.2), -Infinity], 1);
    expect(p, show(p)).toEqual([0, 1, 0]);
  });
});

const choice = (criteria: Record<string, string | null>): Question => ({ type: "choice", instructions: "Pick one.", criteria });
const score = (criteria: (string | null | object)[]): Question => ({ type: "score", instructions: "How much?", criteria }) as Question;

describe("buildAnswer", () => {
  it("choice: the most likely key, probabilities keyed by option in order, and confidence", () => {
    const answer = buildAnswer(choice({ red: "warm", green: null, blue: "cold" }), [Math.log(0.1), Math.log(0.7), Math.log(0.2)], NEUTRAL_TEMPERATURES);
    expect(answer.type, show(answer)).toBe("choice");
    if (answer.type !== "choice") return;
    expect(answer.choice, show(answer)).toBe("green");
    expect(Object.keys(answer.probabilities), show(answer)).toEqual(["red", "green", "blue"]);
    expect(answer.probabilities.green, show(answer)).toBeCloseTo(0.7, 14);
    expect(answer.confidence, show(answer)).toBeCloseTo(choiceConfidence([0.1, 0.7, 0.2]), 14);
    expect(Object.keys(answer).sort(), show(answer)).toEqual(["choice", "confidence", "probabilities", "type"]);
  });

  it("choice: on a tie the first option wins", () => {
    const answer = buildAnswer(choice({ x: null, y: null }), [-1, -1], NEUTRAL_TEMPERATURES);
    expect(answer, show(answer)).toEqual({ type: "choice", choice: "x", probabilities: { x: 0.5, y: 0.5 }, confidence: 0 });
  });

  it("choice: an option named __proto__ is kept as an own key and the prototype is untouched", () => {
    const question = { type: "choice", instructions: "Pick.", criteria: JSON.parse('{"__proto__": "odd name", "plain": null}') } as Question;
    const answer = buildAnswer(question, [Math.log(0.9), Math.log(0.1)], NEUTRAL_TEMPERATURES);
    if (answer.type !== "choice") throw new Error(show(answer));
    expect(answer.choice).toBe("__proto__");
    expect(Object.hasOwn(answer.probabilities, "__proto__"), show(answer)).toBe(true);
    expect(Object.keys(answer.probabilities)).toEqual(["__proto__", "plain"]);
    expect(Object.getPrototypeOf(answer.probabilities)).toBe(Object.prototype);
    expect(answer.probabilities.__proto__, show(answer)).toBeCloseTo(0.9, 14);
    expect(JSON.stringify(answer.probabilities), show(answer)).toMatch(/^\{"__proto__":[0-9.e-]+,"plain":[0-9.e-]+\}$/);
  });

  it("noul: only type and noul, the probability of the first label (the statement holds)", () => {
    const answer = buildAnswer({ type: "noul", instructions: "It holds.", criteria: null }, [Math.log(0.3), Math.log(0.1)], NEUTRAL_TEMPERATURES);
    expect(Object.keys(answer).sort(), show(answer)).toEqual(["noul", "type"]);
    if (answer.type !== "noul") throw new Error(show(answer));
    expect(answer.noul, show(answer)).toBeCloseTo(0.75, 14);
  });

  it('score: probabilities and legend keyed "0"…"n-1", score = Σ i·pᵢ, and confidence', () => {
    const p = [0.1, 0.2, 0.3, 0.4];
    const answer = buildAnswer(score(["none", "some", { level: "a lot" }, ["all", "of it"]]), p.map(Math.log), NEUTRAL_TEMPERATURES);
    if (answer.type !== "score") throw new Error(show(answer));
    expect(Object.keys(answer.probabilities), show(answer)).toEqual(["0", "1", "2", "3"]);
    Object.values(answer.probabilities).forEach((x, i) => expect(x, show(answer)).toBeCloseTo(p[i], 14));
    expect(answer.score, show(answer)).toBeCloseTo(0 * 0.1 + 1 * 0.2 + 2 * 0.3 + 3 * 0.4, 12);
    expect(answer.legend, show(answer)).toEqual({ "0": "none", "1": "some", "2": { level: "a lot" }, "3": ["all", "of it"] });
    expect(answer.confidence, show(answer)).toBeCloseTo(scoreConfidence(p), 12);
    expect(Object.keys(answer).sort(), show(answer)).toEqual(["confidence", "legend", "probabilities", "score", "type"]);
  });

  it('score: the legend echoes every level as sent, except null, which comes back as "" (never null)', () => {
    const nested = { label: "a lot", weight: 0.5, tags: ["x", null, { deep: true }] };
    const levels = [null, "middle", "", nested, [], {}];
    const answer = buildAnswer(score(levels), [-1, -2, -3, -4, -5, -6], NEUTRAL_TEMPERATURES);
    if (answer.type !== "score") throw new Error(show(answer));
    // Compared as the JSON a client reads: key order and every value as sent.
    expect(JSON.stringify(answer.legend), show(answer)).toBe(JSON.stringify({ "0": "", "1": "middle", "2": "", "3": nested, "4": [], "5": {} }));
    expect(Object.values(answer.legend), show(answer)).not.toContain(null);
  });

  it("score: a level object with a __proto__ key comes back with that key", () => {
    const level = JSON.parse('{"__proto__": "odd", "plain": 1}');
    const answer = buildAnswer(score([level, "other"]), [-1, -2], NEUTRAL_TEMPERATURES);
    if (answer.type !== "score") throw new Error(show(answer));
    expect(JSON.stringify(answer.legend), show(answer)).toBe('{"0":{"__proto__":"odd","plain":1},"1":"other"}');
  });

  it("score: the expected level equals Σ i·pᵢ over the returned probabilities for every scale length", () => {
    for (let n = 2; n <= 10; n++) {
      const logProbs = Array.from({ length: n }, (_, i) => -((i * 7) % 5) / 2);
      const answer = buildAnswer(score(Array.from({ length: n }, (_, i) => `level ${i}`)), logProbs, NEUTRAL_TEMPERATURES);
      if (answer.type !== "score") throw new Error(show(answer));
      const ps = Object.values(answer.probabilities);
      expect(sum(ps), show(answer)).toBeCloseTo(1, 12);
      expect(answer.score, show(answer)).toBeCloseTo(sum(ps.map((x, i) => i * x)), 12);
      expect(answer.score >= 0 && answer.score <= n - 1, show(answer)).toBe(true);
    }
  });

  it("applies the temperature of the question's own type", () => {
    const temperatures: Temperatures = { choice: 2, noul: 3, score: 0.5 };
    const logProbs = [Math.log(0.8), Math.log(0.2)];
    const c = buildAnswer(choice({ a: null, b: null }), logProbs, temperatures);
    const n = buildAnswer({ type: "noul", instructions: "x" }, logProbs, temperatures);
    const s = buildAnswer(score(["lo", "hi"]), logProbs, temperatures);
    if (c.type !== "choice" || n.type !== "noul" || s.type !== "score") throw new Error(show({ c, n, s }));
    expect(c.probabilities.a, show(c)).toBeCloseTo(normalise(logProbs, 2)[0], 14);
    expect(n.noul, show(n)).toBeCloseTo(normalise(logProbs, 3)[0], 14);
    expect(s.probabilities["0"], show(s)).toBeCloseTo(normalise(logProbs, 0.5)[0], 14);
  });
});

describe("temperatureFor", () => {
  const temperatures: Temperatures = {
    choice: 1.5,
    noul: 0.7,
    score: 1.1,
    buckets: {
      choice: [
        { min: 2, max: 2, temperature: 2 },
        { min: 5, max: 10, temperature: 4 },
      ],
      score: [{ min: 3, max: 3, temperature: 0.9 }],
    },
  };

  it("takes the bucket whose inclusive range holds the label count, else the type's temperature", () => {
    const table = [2, 3, 4, 5, 10, 11].map((n) => [n, temperatureFor(temperatures, "choice", n)]);
    expect(table, JSON.stringify(table)).toEqual([
      [2, 2],
      [3, 1.5],
      [4, 1.5],
      [5, 4],
      [10, 4],
      [11, 1.5],
    ]);
    expect(temperatureFor(temperatures, "score", 3)).toBe(0.9);
    expect(temperatureFor(temperatures, "score", 4)).toBe(1.1);
  });

  it("noul always uses its type's temperature, and profiles without buckets behave as before", () => {
    expect(temperatureFor(temperatures, "noul", 2)).toBe(0.7);
    expect(temperatureFor({ choice: 3, noul: 1, score: 1 }, "choice", 2)).toBe(3);
  });
});

describe("keyed", () => {
  it("keeps the given key order and makes every key an own, enumerable property", () => {
    const out = keyed(["z", "a", "__proto__", "constructor", "한국어 🎉"], [1, 2, 3, 4, 5]);
    expect(Object.keys(out)).toEqual(["z", "a", "__proto__", "constructor", "한국어 🎉"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"z":1,"a":2,"__proto__":3,"constructor":4,"한국어 🎉":5}');
  });
});

describe("logSoftmax", () => {
  it("is log(normalise(scores, 1)): finite rows, a far-off label, labels at −∞ among possible ones", () => {
    for (const scores of [
      [Math.log(0.25) + 7, Math.log(0.75) + 7],
      [-1, -2, -3],
      [0, -800],
      [-Infinity, -3, -Infinity, -4],
    ]) {
      const logP = logSoftmax(scores);
      const p = normalise(scores, 1);
      logP.forEach((value, i) => expect(Math.exp(value), show({ scores, logP, p })).toBeCloseTo(p[i], 14));
    }
    expect(logSoftmax([0, -800])[1], "log-domain: finite where exp underflows").toBeCloseTo(-800, 9);
    expect(logSoftmax([-Infinity, 0])).toEqual([-Infinity, 0]);
  });

  it("reads a row with every label at −∞ as uniform, as normalise does, never NaN", () => {
    for (const n of [1, 2, 3, 255]) {
      const logP = logSoftmax(Array.from({ length: n }, () => -Infinity));
      expect(logP, show(logP)).toEqual(Array.from({ length: n }, () => -Math.log(n)));
    }
    expect(logSoftmax([])).toEqual([]);
  });
});

describe("keyedLogits", () => {
  it("gives the log of the answer's uniform probabilities when the model rules out every label", () => {
    const question: Question = { type: "choice", instructions: "Pick", criteria: { a: "A", b: "B", c: "C", d: "D" } } as Question;
    const logits = keyedLogits(question, [-Infinity, -Infinity, -Infinity, -Infinity]);
    const answer = buildAnswer(question, [-Infinity, -Infinity, -Infinity, -Infinity], NEUTRAL_TEMPERATURES);
    expect(logits, JSON.stringify(logits)).toEqual({ a: -Math.log(4), b: -Math.log(4), c: -Math.log(4), d: -Math.log(4) });
    if (answer.type !== "choice") throw new Error("a choice answer");
    for (const key of Object.keys(logits)) expect(Math.exp(logits[key]!)).toBeCloseTo(answer.probabilities[key], 15);
    expect(JSON.parse(JSON.stringify(logits)), "survives JSON unchanged").toEqual(logits);
  });

  it("writes a label the model rules out (log 0) as null, and the others as log P", () => {
    const question: Question = { type: "choice", instructions: "Pick", criteria: { a: "A", b: "B", c: "C" } } as Question;
    const logits = keyedLogits(question, [Math.log(0.25) + 7, -Infinity, Math.log(0.75) + 7]);
    expect(logits.b, JSON.stringify(logits)).toBeNull();
    expect(logits.a!, JSON.stringify(logits)).toBeCloseTo(Math.log(0.25), 12);
    expect(logits.c!, JSON.stringify(logits)).toBeCloseTo(Math.log(0.75), 12);
    expect(JSON.parse(JSON.stringify(logits)), "survives JSON unchanged").toEqual(logits);
  });
});
