import { describeExactness } from "../../testing/real-models-exactness.js";
import { availableRealModels } from "../../testing/real-models.js";

/**
 * The real-weight exactness suite (src/testing/real-models-exactness.ts) on SmolLM2-135M-Instruct;
 * Gemma 3 270M has a file of its own, so the two run side by side, one llama.cpp thread each.
 */
describeExactness(availableRealModels().filter((model) => model.name === "smollm2-135m-instruct"));
