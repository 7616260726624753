import { mkdir, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buildVocab, CHATML_TEMPLATE, TokenType } from "../../gguf/fixture-vocab.js";

/**
 * The tiny fixture's tokenizer_config.json, as a Hugging Face checkpoint of it would ship:
 * the GGUF's chat template, BOS/EOS (one as a plain string, one as an AddedToken object) and
 * every control token in `added_tokens_decoder`. Returns its path.
 */
export async function writeFixtureTokenizerConfig(): Promise<string> {
  const vocab = buildVocab();
  const addedTokensDecoder = Object.fromEntries(
    vocab.tokens.flatMap((content, id) =>
      vocab.types[id] === TokenType.Control || vocab.types[id] === TokenType.Unknown
        ? [[String(id), { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true }]]
        : [],
    ),
  );
  const config = {
    add_bos_token: false,
    add_eos_token: false,
    added_tokens_decoder: addedTokensDecoder,
    bos_token: "<s>",
    chat_template: CHATML_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: { __type: "AddedToken", content: vocab.tokens[vocab.ids.eos], lstrip: false, normalized: false, rstrip: false, single_word: false },
    model_max_length: 8192,
    pad_token: vocab.tokens[vocab.ids.pad],
    tokenizer_class: "LlamaTokenizer",
    unk_token: "<unk>",
  };
  // One file per machine, like the fixture GGUF; renamed into place so no reader sees half of it.
  const dir = path.join(os.tmpdir(), "tjs-fixtures", "tiny-hf");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, "tokenizer_config.json");
  const partial = `${file}.${process.pid}`;
  await writeFile(partial, JSON.stringify(config, null, 2));
  await rename(partial, file);
  return file;
}
