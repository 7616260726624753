import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeFixtureModel, type FixtureWeightType } from "../gguf/fixture-model.js";
import { llamaVocabCommit } from "../gguf/llama-vocab-files.js";

/**
 * The tiny fixture model, written once per machine into the temp dir: llama.cpp runs it like
 * any GGUF model, in about a millisecond per evaluation, so tests exercise the real engine.
 * F32 by default; quantized weights run through llama.cpp's other (repacked) kernels.
 */
export async function tinyFixturePath(seed = 1, weightType: FixtureWeightType = "F32"): Promise<string> {
  const dir = path.join(os.tmpdir(), "tjs-fixtures");
  const file = path.join(dir, weightType === "F32" ? `tiny-seed${seed}.gguf` : `tiny-${weightType.toLowerCase()}-seed${seed}.gguf`);
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true });
    await writeFixtureModel(file, { preset: "tiny", seed, weightType });
  }
  return file;
}

/**
 * The tiny shape with Qwen2's real tokenizer (preset tiny-qwen2, 84 MB), written once per machine
 * and llama.cpp version (the vocabulary comes from node-llama-cpp's copy of llama.cpp).
 */
export async function tinyQwen2FixturePath(seed = 1): Promise<string> {
  const dir = path.join(os.tmpdir(), "tjs-fixtures");
  const file = path.join(dir, `tiny-qwen2-${(await llamaVocabCommit()).slice(0, 12)}-seed${seed}.gguf`);
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true });
    await writeFixtureModel(file, { preset: "tiny-qwen2", seed });
  }
  return file;
}
