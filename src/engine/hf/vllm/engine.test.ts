import { describe, expect, it } from "vitest";
import { logSoftmax } from "../../../testing/standins/fixture-oracle.js";
import { describeRemoteEngine } from "../../../testing/standins/remote-engine-suite.js";
import { startVllmStandin } from "../../../testing/standins/vllm-standin.js";
import type { Token } from "../../label-trie.js";
import { createVllmEngine } from "./engine.js";
import { createVllmReader, MAX_LOGPROB_TOKEN_IDS } from "./reader.js";

// realServer: what a real vLLM shows for itself is asked of it (real-vllm.test.ts), not of the stand-in.
describeRemoteEngine({ kind: "vllm", idsField: "logprob_token_ids", start: startVllmStandin, create: createVllmEngine, realServer: true }, (context) => {
  describe("vllm: the wire format", () => {
    it("asks /v1/completions for one token's logprobs of exactly the candidates, by token id", async () => {
      const { standin } = context;
      const tokens = standin.oracle.tokenize("<|im_start|>user\nHello world<|im_end|>\n", false);
      const candidates = [...standin.oracle.tokenize("Yes", false), ...standin.oracle.tokenize("No", false)];
      const reader = createVllmReader(context.options().server, "tiny-fixture", 0);
      standin.calls.length = 0;
      await reader.read(tokens, candidates, undefined);
      expect(standin.calls.filter((c) => c.path === "/v1/completions")).toEqual([
        {
          path: "/v1/completions",
          body: {
            model: "tiny-fixture",
            prompt: tokens,
            max_tokens: 1,
            temperature: 0,
            logprobs: 1,
            logprob_token_ids: candidates,
            return_tokens_as_token_ids: true,
          },
        },
      ]);
    });

    it(`splits more than ${MAX_LOGPROB_TOKEN_IDS} candidates over several requests, and the values are the full-vocabulary log-softmax`, async () => {
      const { standin } = context;
      const tokens = standin.oracle.tokenize("<|im_start|>user\nThe cat and the dog<|im_end|>\n", false);
      const candidates = Array.from({ length: 300 }, (_, i) => (i + 3) as Token);
      const reader = createVllmReader(context.options().server, "tiny-fixture", 0);
      standin.calls.length = 0;
      const read = await reader.read(tokens, candidates, undefined);
      const sizes = standin.calls.filter((c) => c.path === "/v1/completions").map((c) => (c.body as { logprob_token_ids: Token[] }).logprob_token_ids.length);
      expect(sizes, JSON.stringify(sizes)).toEqual([128, 128, 44]);
      const expected = logSoftmax(await standin.oracle.logits(tokens));
      const worst = Math.max(...candidates.map((id) => Math.abs(read.get(id)! - expected[id])));
      expect(worst, `max |read − log-softmax| over ${candidates.length} ids`).toBeLessThan(1e-5);
      expect([...read.keys()].sort((a, b) => a - b)).toEqual(candidates);
    });
  });
});
