import { describeExactness } from "../../testing/real-models-exactness.js";
import { availableRealModels } from "../../testing/real-models.js";

/**
 * The real-weight exactness suite (src/testing/real-models-exactness.ts) on Gemma 3 270M;
 * SmolLM2-135M-Instruct has a file of its own, so the two run side by side, one llama.cpp thread each.
 */
describeExactness(availableRealModels().filter((model) => model.name === "gemma3-270m"));
