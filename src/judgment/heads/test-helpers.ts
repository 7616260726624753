import { seededRandom } from "./random.js";
import type { LabelledRow } from "./types.js";

/** A standard normal from a seeded uniform (Box–Muller). */
export function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/**
 * Synthetic hidden states shaped like a model's: K class means `separation` apart along random
 * directions, plus noise with a few strong shared factors (real hidden states are far from
 * isotropic) and a per-feature offset and scale (what standardisation undoes). logProbs are an
 * uninformative readout: a fixed habit plus noise.
 */
export function syntheticRows(options: { n: number; d: number; classes: number; seed: number; separation?: number; factors?: number }): LabelledRow[] {
  const { n, d, classes } = options;
  const random = seededRandom(options.seed);
  const normal = gaussian(random);
  const separation = options.separation ?? 3;
  const direction = () => {
    const v = Array.from({ length: d }, normal);
    const norm = Math.sqrt(v.reduce((a, x) => a + x * x, 0));
    return v.map((x) => x / norm);
  };
  const means = Array.from({ length: classes }, () => direction().map((x) => (x * separation) / Math.SQRT2));
  const factors = Array.from({ length: options.factors ?? 8 }, () => direction().map((x) => x * 6));
  const offset = Array.from({ length: d }, () => normal() * 2);
  const scale = Array.from({ length: d }, () => 0.5 + random() * 3);
  return Array.from({ length: n }, (_, i) => {
    const gold = i % classes;
    const loadings = factors.map(() => normal());
    const features = new Float32Array(d);
    for (let j = 0; j < d; j++) {
      let v = means[gold][j] + normal() * 0.5;
      for (let f = 0; f < factors.length; f++) v += loadings[f] * factors[f][j];
      features[j] = offset[j] + scale[j] * v;
    }
    const habit = Array.from({ length: classes }, (_, c) => -1 - c * 0.3 + normal() * 0.2);
    const max = Math.max(...habit);
    const log = Math.log(habit.reduce((a, h) => a + Math.exp(h - max), 0)) + max;
    return { logProbs: habit.map((h) => h - log), features, gold };
  });
}
