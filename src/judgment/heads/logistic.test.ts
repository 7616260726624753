import { describe, expect, it } from "vitest";
import { biasOf, fitParameters, problem, weightsOf } from "./logistic.js";
import { prepareRows } from "./rows.js";
import { syntheticRows } from "./test-helpers.js";

describe("the logistic fit", () => {
  it("gives the same head in the rows' own basis as on the features", () => {
    const rows = prepareRows(syntheticRows({ n: 40, d: 64, classes: 3, seed: 3, separation: 3 })).rows;
    for (const l2 of [100, 3]) {
      const heads = [false, true].map((kernel) => {
        const p = problem(rows, 3, kernel);
        const params = fitParameters(p, l2);
        return { weights: weightsOf(p, params), bias: biasOf(p, params) };
      });
      const [primal, kernel] = heads;
      const scale = Math.max(...primal.weights.flat().map(Math.abs));
      primal.weights.forEach((row, c) => row.forEach((w, j) => expect(Math.abs(w - kernel.weights[c][j]) / scale, `λ ${l2} w[${c}][${j}]`).toBeLessThan(2e-3)));
      primal.bias.forEach((b, c) => expect(b).toBeCloseTo(kernel.bias[c], 3));
    }
  });
});
