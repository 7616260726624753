/**
 * What a prompt costs llama-server when nothing is read from it: the same four prompts (a
 * rollback of one token and a read of two, twice, after a 300-token prefix) in one `/completion`
 * call with `n_predict` 0 (evaluate and stop) and with `n_predict` 1 (then every prompt also
 * computes the vocabulary's logits and samples, as every prompt of a reading call does), and a
 * single two-token read in the raw and in the post-sampling form the engine uses.
 *
 *   npx tsx scripts/bench-fill-cost.ts <model.gguf> [--rounds 7] [--threads 2]
 *
 * Prints the median wall time of each call over the rounds, the variants alternating.
 */
import { parseArgs } from "node:util";
import { startLlamaServer } from "../src/testing/llama-server.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "7" }, threads: { type: "string", default: "2" } },
});
const model = positionals[0];
if (!model) throw new Error("usage: bench-fill-cost.ts <model.gguf> [--rounds 7] [--threads 2]");

const server = await startLlamaServer({ model, slots: 1, contextSize: 8192, threads: Number(values.threads) });
try {
  const base = Array.from({ length: 300 }, (_, i) => 1000 + ((i * 7919) % 50000));
  const [spare, other] = [15, 16];
  const post = async (body: Record<string, unknown>) => {
    const started = performance.now();
    const response = await fetch(`${server.url}/completion`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cache_prompt: true, id_slot: 0, ...body }),
    });
    if (!response.ok) throw new Error(`llama-server answered ${response.status}: ${await response.text()}`);
    await response.json();
    return performance.now() - started;
  };
  await post({ prompt: [...base, spare], n_predict: 0 });
  const four = [
    [...base, other],
    [...base, 5, 6],
    [...base, other],
    [...base, 7, 8],
  ];
  const variants: Record<string, () => Promise<number>> = {
    "4 prompts, n_predict 0": () => post({ prompt: four, n_predict: 0 }),
    "4 prompts, n_predict 1 (raw list)": () => post({ prompt: four, n_predict: 1, n_probs: 64, temperature: 0, logit_bias: [[spare, 100]] }),
    "1 read, raw list": async () => (
      await post({ prompt: [...base, other], n_predict: 0 }), post({ prompt: base, n_predict: 1, n_probs: 64, temperature: 0, logit_bias: [[spare, 100]] })
    ),
    "1 read, post-sampling list": async () => (
      await post({ prompt: [...base, other], n_predict: 0 }),
      post({
        prompt: base,
        n_predict: 1,
        n_probs: 64,
        post_sampling_probs: true,
        temperature: 1,
        samplers: ["temperature"],
        top_k: 0,
        top_p: 1,
        min_p: 0,
        seed: 0,
        logit_bias: [[362, 16]],
      })
    ),
  };
  const times: Record<string, number[]> = {};
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, run] of Object.entries(variants)) (times[name] ??= []).push(await run());
  }
  for (const [name, list] of Object.entries(times)) {
    const sorted = [...list].sort((a, b) => a - b);
    console.log(`${name.padEnd(36)} median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms  (${list.map((t) => t.toFixed(0)).join(" ")})`);
  }
} finally {
  await server.stop();
}
