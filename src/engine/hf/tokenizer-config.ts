import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ChatMLChatWrapper, LlamaText, resolveChatWrapper, SpecialToken, type ChatWrapper, type GgufFileInfo } from "node-llama-cpp";
import { createChatPromptTemplate, type ChatPromptTemplate } from "../chat-prompt.js";
import type { Token } from "../label-trie.js";
import type { BuiltinToken, RemoteTokenizer } from "../remote/prepare.js";
import { UnsupportedTextError } from "../types.js";
import { messageOf } from "../../error-message.js";

/**
 * What a remote engine needs from a Hugging Face `tokenizer_config.json` (the file vLLM and
 * SGLang read next to the weights): the chat template, the BOS/EOS text, and the text of every
 * special added token, because HF tokenizers find those inside any text they are given.
 */
export interface TokenizerConfig {
  chatTemplate?: string;
  /** null: the model has none (HF renders `bos_token` as ""). */
  bosToken: string | null;
  eosToken: string | null;
  /** Every special token's text (added tokens marked special, and the named special tokens). */
  specialTokens: string[];
}

/**
 * Reads a tokenizer_config.json. Newer transformers versions keep the template in a
 * `chat_template.jinja` beside it; that file is read when the config has no template.
 */
export async function readTokenizerConfig(file: string): Promise<TokenizerConfig> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the tokenizer config ${file}: ${messageOf(error)}`);
  }
  const config = parseTokenizerConfig(json, file);
  const jinja = path.join(path.dirname(file), "chat_template.jinja");
  if (config.chatTemplate === undefined && existsSync(jinja)) config.chatTemplate = await readFile(jinja, "utf8");
  return config;
}

export function parseTokenizerConfig(json: unknown, source: string): TokenizerConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error(`${source} is not a JSON object`);
  const fields = json as Record<string, unknown>;
  const specials = new Set<string>();
  const decoder = fields.added_tokens_decoder;
  if (typeof decoder === "object" && decoder !== null) {
    for (const entry of Object.values(decoder as Record<string, unknown>)) {
      const { content, special } = (entry ?? {}) as { content?: unknown; special?: unknown };
      if (special === true && typeof content === "string" && content !== "") specials.add(content);
    }
  }
  for (const name of ["bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"]) {
    const text = tokenText(fields[name], `${source}: ${name}`);
    if (text) specials.add(text);
  }
  const additional = fields.additional_special_tokens;
  if (Array.isArray(additional)) {
    additional.forEach((token, i) => {
      const text = tokenText(token, `${source}: additional_special_tokens[${i}]`);
      if (text) specials.add(text);
    });
  }
  return {
    chatTemplate: chatTemplateOf(fields.chat_template, source),
    bosToken: tokenText(fields.bos_token, `${source}: bos_token`),
    eosToken: tokenText(fields.eos_token, `${source}: eos_token`),
    specialTokens: [...specials],
  };
}

/** A token field is a string, an AddedToken object `{content, ...}`, or null. */
function tokenText(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value === "" ? null : value;
  if (typeof value === "object" && typeof (value as { content?: unknown }).content === "string") {
    return (value as { content: string }).content || null;
  }
  throw new Error(`${where} is neither text nor {content}`);
}

/** A template is a string, or a list of named templates of which "default" is the chat one. */
function chatTemplateOf(value: unknown, source: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const named = value.find((entry) => (entry as { name?: unknown })?.name === "default") as { template?: unknown } | undefined;
    if (typeof named?.template === "string") return named.template;
  }
  throw new Error(`${source}: chat_template is neither a template nor a list with a "default" one`);
}

/**
 * ChatML stands in when no tokenizer config is given, and the model's special tokens are then
 * guessed: ChatML's markers, SentencePiece's classics, and anything shaped like `<|...|>` (the
 * ChatML family's other specials, such as Qwen's <|endoftext|>).
 */
const GUESSED_SPECIALS = ["<|im_start|>", "<|im_end|>", "<s>", "</s>", "<unk>", "<pad>"];
const CHATML_LIKE = /<\|[^\s<>|]{1,64}\|>/;

export interface RemoteChat {
  template: ChatPromptTemplate;
  /** The chat wrapper node-llama-cpp resolved (the in-process engine resolves the same one from the GGUF). */
  wrapperName: string;
  /** The control-token text found in `text`, if any (see `guardedTokenizer`). */
  findControlText(text: string): string | undefined;
  bosToken: string | null;
  eosToken: string | null;
}

/**
 * The chat template a remote engine renders, resolved by node-llama-cpp from the config's Jinja
 * template exactly as the in-process engine resolves it from GGUF metadata. Without a config
 * (or a template in it): ChatML and no BOS, the convention of the Qwen/ChatML models these
 * servers usually run; anything else needs JUDGE_ENGINE_TOKENIZER_CONFIG.
 */
export function remoteChat(config: TokenizerConfig | undefined): RemoteChat {
  const wrapper = config?.chatTemplate ? resolvedWrapper(config.chatTemplate, config.bosToken) : new ChatMLChatWrapper();
  const specials = config ? config.specialTokens : GUESSED_SPECIALS;
  const findControlText = (text: string) => specials.find((special) => text.includes(special)) ?? (config ? undefined : CHATML_LIKE.exec(text)?.[0]);
  const missing = new Set<string>();
  if (!config?.bosToken) missing.add("BOS");
  if (!config?.eosToken) missing.add("EOS");
  missing.add("SEP");
  return {
    template: withoutMissingTokens(createChatPromptTemplate(wrapper, config?.bosToken ?? undefined), missing),
    wrapperName: wrapper.wrapperName,
    findControlText,
    bosToken: config?.bosToken ?? null,
    eosToken: config?.eosToken ?? null,
  };
}

/**
 * Resolving compares the template with every specialised wrapper by rendering sample chats
 * (seconds on a small machine); a wrapper only renders, so one per template serves every engine.
 */
const resolved = new Map<string, ChatWrapper>();

function resolvedWrapper(chatTemplate: string, bosToken: string | null): ChatWrapper {
  const key = JSON.stringify([chatTemplate, bosToken]);
  let wrapper = resolved.get(key);
  if (!wrapper) {
    const fileInfo = { metadata: { tokenizer: { chat_template: chatTemplate } } } as unknown as GgufFileInfo;
    wrapper = resolveChatWrapper({ fileInfo, bosString: bosToken, warningLogs: false }) ?? new ChatMLChatWrapper();
    resolved.set(key, wrapper);
  }
  return wrapper;
}

/**
 * A builtin token the model does not have renders as nothing, as node-llama-cpp does for a GGUF
 * without one (and as HF renders a null `bos_token`); the remote preparer would refuse it.
 */
function withoutMissingTokens(template: ChatPromptTemplate, missing: Set<string>): ChatPromptTemplate {
  const strip = (text: LlamaText) => LlamaText(text.values.filter((value) => !(value instanceof SpecialToken && missing.has(value.value))));
  return {
    prefix: (system, state) => strip(template.prefix(system, state)),
    suffix: (question) => strip(template.suffix(question)),
    family: template.family,
  };
}

/**
 * Ids of the template's builtin tokens, from their text tokenised by the server: each must be
 * exactly one token, or the config does not belong to the served model.
 */
export async function builtinTokenIds(chat: RemoteChat, tokenizer: RemoteTokenizer): Promise<Partial<Record<BuiltinToken, Token>>> {
  const ids: Partial<Record<BuiltinToken, Token>> = {};
  const single = async (name: string, text: string, special: boolean) => {
    const tokens = await tokenizer.tokenize(text, special);
    if (tokens.length !== 1) {
      throw new Error(
        `${name} ${JSON.stringify(text)} is ${tokens.length} tokens on the server, not one: the tokenizer config does not match the served model`,
      );
    }
    return tokens[0];
  };
  if (chat.bosToken) ids.BOS = await single("bos_token", chat.bosToken, true);
  if (chat.eosToken) ids.EOS = await single("eos_token", chat.eosToken, true);
  const newline = await tokenizer.tokenize("\n", false);
  if (newline.length === 1) ids.NL = newline[0];
  return ids;
}

/**
 * HF tokenizers (vLLM's and SGLang's /tokenize) read a special token's text as that control
 * token wherever it appears, and have no switch to treat it as plain text. The in-process engine
 * reads a state containing "<|im_end|>" as text; a remote one cannot, so it refuses the request
 * (a 400) rather than let the caller's text close the chat turn or answer differently.
 */
export function guardedTokenizer(tokenizer: RemoteTokenizer, chat: RemoteChat, serverName: string): RemoteTokenizer {
  return {
    tokenize(text, special, signal) {
      if (!special) {
        const found = chat.findControlText(text);
        if (found !== undefined) {
          return Promise.reject(
            new UnsupportedTextError(
              `the request's text contains ${JSON.stringify(found)}, a control token of the model; ${serverName}'s tokenizer ` +
                "reads it as that control token, not as text, so it cannot be judged exactly: remove or escape it",
            ),
          );
        }
      }
      return tokenizer.tokenize(text, special, signal);
    },
  };
}
