import path from "node:path";
import { GeneralChatWrapper, resolveChatWrapper } from "node-llama-cpp";
import { callJson, describe, quote, type RemoteServer } from "../remote/http.js";
import { EngineFailedError } from "../types.js";
import { checkStatus } from "./completion.js";

/** What llama-server says about itself (`/props`, `/v1/models`): the facts the engine is built on. */
export interface ServerFacts {
  modelPath: string;
  /** The model file's name without `.gguf`, as the in-process engine names a model. */
  modelName: string;
  /** `total_slots`: states the server keeps cached at once (`-np`). */
  slots: number;
  /** `default_generation_settings.n_ctx`: the context of one slot. */
  slotContext: number;
  vocabularySize?: number;
  chatTemplate: string;
  bosToken?: string;
  eosToken?: string;
}

/** GET a JSON document; 503 is "loading" (unavailable), any other non-200 is a failure. */
export async function getJson(server: RemoteServer, route: string, signal?: AbortSignal): Promise<unknown> {
  const reply = await callJson(server, route, undefined, signal, "GET");
  checkStatus(reply, `${describe(server)}${route}`);
  return reply.body;
}

/** `"props only"` skips /health and /v1/models: one call, for status(). */
export async function readServerFacts(server: RemoteServer, signal?: AbortSignal, scope: "all" | "props only" = "all"): Promise<ServerFacts> {
  if (scope === "all") await getJson(server, "/health", signal);
  const props = (await getJson(server, "/props", signal)) as Record<string, any> | undefined;
  const where = `${describe(server)}/props`;
  const fail = (why: string): never => {
    throw new EngineFailedError(`${where} ${why} (is this llama.cpp's llama-server?): ${quote(props)}`);
  };
  if (typeof props !== "object" || props === null) return fail("is not a JSON object");
  const slots = props.total_slots;
  const slotContext = props.default_generation_settings?.n_ctx;
  if (!Number.isInteger(slots) || slots < 1) return fail("names no total_slots");
  if (!Number.isInteger(slotContext) || slotContext < 1) return fail("names no default_generation_settings.n_ctx");
  if (typeof props.chat_template !== "string") return fail("names no chat_template");
  // The vocabulary size bounds n_probs; older builds lack /v1/models' meta, which only costs a cap.
  const models = (scope === "all" ? await getJson(server, "/v1/models", signal).catch(() => undefined) : undefined) as
    | { data?: Array<Record<string, any>> }
    | undefined;
  const model = models?.data?.[0];
  const modelPath = typeof props.model_path === "string" ? props.model_path : typeof model?.id === "string" ? model.id : "";
  const vocabularySize = model?.meta?.n_vocab;
  return {
    modelPath,
    modelName: path.basename(modelPath).replace(/\.gguf$/i, "") || "llama-server",
    slots,
    slotContext,
    vocabularySize: Number.isInteger(vocabularySize) && vocabularySize > 0 ? vocabularySize : undefined,
    chatTemplate: props.chat_template,
    bosToken: nonEmpty(props.bos_token),
    eosToken: nonEmpty(props.eos_token),
  };
}

/** The facts that must not change under a running engine (a restart with another model or slot count). */
export function factsChanged(before: ServerFacts, now: ServerFacts): string | undefined {
  const keys = ["modelPath", "slots", "slotContext", "chatTemplate", "bosToken"] as const;
  const changed = keys.filter((key) => before[key] !== now[key]);
  if (changed.length === 0) return undefined;
  return changed.map((key) => `${key} was ${JSON.stringify(before[key])}, now ${JSON.stringify(now[key])}`).join("; ");
}

/**
 * The chat wrapper the in-process engine would pick for this model, from the template the
 * server reports: node-llama-cpp recognises a known template (ChatML for the fixtures) and falls
 * back to rendering it with Jinja.
 */
export function chatWrapperFor(facts: ServerFacts) {
  // A GGUF without a template (the Gemma 3 270M base model): the server reports its built-in
  // ChatML, while node-llama-cpp picks the family's format from the file (Gemma's turns).
  if (facts.chatTemplate === LLAMA_CPP_FALLBACK_TEMPLATE) {
    const byFile = resolveChatWrapper({
      bosString: facts.bosToken ?? null,
      filename: path.basename(facts.modelPath),
      fileInfo: { metadata: { tokenizer: {} } } as any,
      warningLogs: false,
    });
    if (byFile) return byFile;
  }
  const wrapper = resolveChatWrapper({
    bosString: facts.bosToken ?? null,
    filename: path.basename(facts.modelPath),
    fileInfo: { metadata: { tokenizer: { chat_template: facts.chatTemplate } } } as any,
    warningLogs: false,
  });
  return wrapper ?? new GeneralChatWrapper();
}

/** What llama-server reports as its template for a model that carries none (llama.cpp's CHATML_TEMPLATE_SRC). */
const LLAMA_CPP_FALLBACK_TEMPLATE =
  "{%- for message in messages -%}\n" +
  "  {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}\n" +
  "{%- endfor -%}\n" +
  "{%- if add_generation_prompt -%}\n" +
  "  {{- '<|im_start|>assistant\\n' -}}\n" +
  "{%- endif -%}";

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
