/** A small deterministic PRNG for test data (mulberry32): the same seed gives the same sequence. */
export { mulberry32 } from "../bench/random.js";
