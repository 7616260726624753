import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeFixtureModel } from "../fixtures/fixture-model.js";

/**
 * The tiny fixture model, written once per machine into the temp dir: llama.cpp runs it like
 * any GGUF model, in about a millisecond per evaluation, so tests exercise the real engine.
 */
export async function tinyFixturePath(seed = 1): Promise<string> {
  const dir = path.join(os.tmpdir(), "tjs-fixtures");
  const file = path.join(dir, `tiny-seed${seed}.gguf`);
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true });
    await writeFixtureModel(file, { preset: "tiny", seed });
  }
  return file;
}
