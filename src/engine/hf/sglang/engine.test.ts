import { describe, expect, it } from "vitest";
import { buildPrompt } from "../../../judgment/prompt.js";
import type { Question } from "../../../judgment/schema.js";
import { describeRemoteEngine } from "../../../testing/standins/remote-engine-suite.js";
import { startSglangStandin } from "../../../testing/standins/sglang-standin.js";
import { createSglangEngine } from "./engine.js";
import { createSglangReader } from "./reader.js";

describeRemoteEngine({ kind: "sglang", idsField: "token_ids_logprob", start: startSglangStandin, create: createSglangEngine }, (context) => {
  describe("sglang: the wire format", () => {
    it("asks /generate for one token's logprobs of exactly the candidates, output only", async () => {
      const { standin } = context;
      const tokens = standin.oracle.tokenize("<|im_start|>user\nHello world<|im_end|>\n", false);
      const candidates = [...standin.oracle.tokenize("Yes", false), ...standin.oracle.tokenize("No", false)];
      standin.calls.length = 0;
      await createSglangReader(context.options().server, 0).read(tokens, candidates, undefined);
      expect(standin.calls.filter((c) => c.path === "/generate")).toEqual([
        {
          path: "/generate",
          body: {
            input_ids: tokens,
            token_ids_logprob: candidates,
            sampling_params: { max_new_tokens: 1, temperature: 0 },
            return_logprob: true,
            logprob_start_len: -1,
          },
        },
      ]);
    });

    it("batches the reads of one trie level of every question into one /generate call", async () => {
      const { standin, engine } = context;
      const noul = (text: string): Question => ({ type: "noul", instructions: text, criteria: null });
      const questions = [noul("It is about billing."), noul("It is urgent."), noul("The customer is angry.")];
      const prepared = await engine.prepare(buildPrompt("I was charged twice.", questions));
      standin.calls.length = 0;
      await engine.evaluate(prepared);
      expect(standin.calls.length, JSON.stringify(standin.calls.map((c) => c.path))).toBe(1);
      const body = standin.calls[0].body as { input_ids: number[][]; token_ids_logprob: number[][] };
      expect(body.input_ids.length).toBe(3);
      expect(body.token_ids_logprob.length).toBe(3);
    });
  });
});
