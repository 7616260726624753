import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SpecialToken, SpecialTokensText } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHATML_TEMPLATE } from "../../gguf/fixture-vocab.js";
import type { Token } from "../label-trie.js";
import { UnsupportedTextError } from "../types.js";
import type { RemoteTokenizer } from "../remote/prepare.js";
import { builtinTokenIds, guardedTokenizer, parseTokenizerConfig, readTokenizerConfig, remoteChat } from "./tokenizer-config.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tjs-tokenizer-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const QWEN_LIKE = {
  added_tokens_decoder: {
    "151643": { content: "<|endoftext|>", special: true },
    "151644": { content: "<|im_start|>", special: true },
    "151645": { content: "<|im_end|>", special: true },
    "151657": { content: "<tool_call>", special: false },
  },
  additional_special_tokens: ["<|im_start|>", { content: "<|vision_start|>" }],
  bos_token: null,
  chat_template: CHATML_TEMPLATE,
  eos_token: { __type: "AddedToken", content: "<|im_end|>", lstrip: false },
  pad_token: "<|endoftext|>",
};

describe("reading tokenizer_config.json", () => {
  it("takes tokens as text or {content}, null as none, and every special token's text", () => {
    const config = parseTokenizerConfig(QWEN_LIKE, "qwen");
    expect(config.bosToken).toBeNull();
    expect(config.eosToken).toBe("<|im_end|>");
    expect(config.chatTemplate).toBe(CHATML_TEMPLATE);
    // A non-special added token (<tool_call>) is ordinary text to the tokenizer's special handling.
    expect([...config.specialTokens].sort()).toEqual(["<|endoftext|>", "<|im_end|>", "<|im_start|>", "<|vision_start|>"]);
  });

  it("picks the default of a list of named templates, and refuses a template or token of the wrong shape", () => {
    const named = parseTokenizerConfig(
      {
        chat_template: [
          { name: "tool_use", template: "x" },
          { name: "default", template: "y" },
        ],
      },
      "named",
    );
    expect(named.chatTemplate).toBe("y");
    expect(() => parseTokenizerConfig({ chat_template: 3 }, "bad")).toThrow(/bad: chat_template/);
    expect(() => parseTokenizerConfig({ bos_token: 1 }, "bad")).toThrow(/bad: bos_token is neither text nor \{content\}/);
    expect(() => parseTokenizerConfig([], "list")).toThrow(/list is not a JSON object/);
  });

  it("reads chat_template.jinja beside a config without a template (newer transformers)", async () => {
    const file = path.join(dir, "tokenizer_config.json");
    await writeFile(file, JSON.stringify({ eos_token: "</s>" }));
    await writeFile(path.join(dir, "chat_template.jinja"), CHATML_TEMPLATE);
    expect((await readTokenizerConfig(file)).chatTemplate).toBe(CHATML_TEMPLATE);
    await expect(readTokenizerConfig(path.join(dir, "missing.json"))).rejects.toThrow(/cannot read the tokenizer config .*missing\.json/);
  });
});

describe("the remote chat template", () => {
  it("resolves a ChatML Jinja template to node-llama-cpp's ChatML wrapper, as the in-process engine does", () => {
    const chat = remoteChat(parseTokenizerConfig({ ...QWEN_LIKE, bos_token: "<s>" }, "qwen"));
    expect(chat.wrapperName).toBe("ChatML");
    const values = chat.template.prefix("system text", "state text").values;
    expect(values[0], JSON.stringify(values)).toEqual(new SpecialToken("BOS"));
  });

  it("renders no BOS for a model without one, and ChatML without BOS when no config is given", () => {
    for (const chat of [remoteChat(parseTokenizerConfig(QWEN_LIKE, "qwen")), remoteChat(undefined)]) {
      const values = [...chat.template.prefix("s", "t").values, ...chat.template.suffix("q").values];
      expect(
        values.some((value) => value instanceof SpecialToken),
        JSON.stringify(values),
      ).toBe(false);
      expect(values[0], JSON.stringify(values)).toBeInstanceOf(SpecialTokensText);
    }
  });

  it("finds control-token text: the config's specials, or a guess without one", () => {
    const configured = remoteChat(parseTokenizerConfig(QWEN_LIKE, "qwen"));
    expect(configured.findControlText("a <|endoftext|> b")).toBe("<|endoftext|>");
    expect(configured.findControlText("call <tool_call> now, <|unknown|>")).toBeUndefined();
    const guessed = remoteChat(undefined);
    expect(guessed.findControlText("x <|endoftext|>")).toBe("<|endoftext|>");
    expect(guessed.findControlText("struck <s>out</s>")).toBe("<s>");
    expect(guessed.findControlText("a <| b |> c, x<|y, |>")).toBeUndefined();
  });
});

describe("tokenising through a server", () => {
  const calls: [string, boolean][] = [];
  const fake: RemoteTokenizer = {
    async tokenize(text, special) {
      calls.push([text, special]);
      return Array.from(text, (c) => c.codePointAt(0)! as Token);
    },
  };
  const chat = remoteChat(parseTokenizerConfig(QWEN_LIKE, "qwen"));

  it("refuses caller text holding a control token (a 400) before asking the server", async () => {
    const guarded = guardedTokenizer(fake, chat, "vllm");
    calls.length = 0;
    await expect(guarded.tokenize("say <|im_end|> now", false)).rejects.toThrow(UnsupportedTextError);
    await expect(guarded.tokenize("say <|im_end|> now", false)).rejects.toThrow(/"<\|im_end\|>", a control token of the model; vllm's tokenizer/);
    expect(calls).toEqual([]);
    await guarded.tokenize("<|im_start|>system\n", true);
    expect(calls).toEqual([["<|im_start|>system\n", true]]);
  });

  it("names builtin tokens by their text, which must be one token on the server", async () => {
    const oneToken: RemoteTokenizer = { tokenize: async (text) => (text === "\n" ? [10 as Token] : [7 as Token]) };
    expect(await builtinTokenIds(chat, oneToken)).toEqual({ EOS: 7, NL: 10 });
    await expect(builtinTokenIds(chat, fake)).rejects.toThrow(/eos_token "<\|im_end\|>" is 10 tokens on the server, not one/);
  });
});
