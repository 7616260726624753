import { LlamaText, SpecialToken, SpecialTokensText, type ChatWrapper } from "node-llama-cpp";
import type { TemplateFamily } from "../judgment/prompt.js";

/**
 * Splits the model's chat template at the point where the state ends and the question begins:
 * everything before is the shared prefix (evaluated once per request), everything after is the
 * per-question suffix, ending where the assistant's answer starts.
 */
export interface ChatPromptTemplate {
  prefix(system: string, state: string): LlamaText;
  suffix(questionText: string): LlamaText;
  /** Which chat format the template writes: the prompt style is chosen per family (judgment/prompt.ts). */
  readonly family: TemplateFamily;
}

// Marks the question's place while rendering the template; the last occurrence is ours even if
// a state happens to contain the same text.
const QUESTION_MARK = "\u241EQUESTION\u241E";

/**
 * `bosText` is the model's BOS token as text. node-llama-cpp's wrappers start with a BOS token;
 * where that token is the turn opener itself (SmolLM2: BOS is `<|im_start|>`), the prompt would
 * start with the opener twice, which neither the model's own template nor its training has, so
 * the BOS is left out there (docs/development/real-models.md).
 */
export function createChatPromptTemplate(chatWrapper: ChatWrapper, bosText?: string): ChatPromptTemplate {
  const split = (system: string, state: string) => {
    const { contextText } = chatWrapper.generateContextState({
      chatHistory: [
        { type: "system", text: system },
        { type: "user", text: state + QUESTION_MARK },
        { type: "model", response: [] },
      ],
    });
    const values = contextText.values;
    for (let i = values.length - 1; i >= 0; i--) {
      const value = values[i];
      if (typeof value !== "string") continue;
      const at = value.lastIndexOf(QUESTION_MARK);
      if (at < 0) continue;
      return {
        before: withoutDoubledBos(LlamaText([...values.slice(0, i), value.slice(0, at)]), bosText),
        after: LlamaText([value.slice(at + QUESTION_MARK.length), ...values.slice(i + 1)]),
      };
    }
    throw new Error("the chat template dropped the question marker");
  };
  // The part after the question is the same for every state and system text.
  const after = split("", "").after;
  return {
    prefix: (system, state) => split(system, state).before,
    suffix: (questionText) => LlamaText([questionText, after]),
    family: familyOf(after),
  };
}

/**
 * Told by the text that opens the model's turn, which holds no request text, so a Jinja
 * template (Qwen's, say) that writes ChatML is ChatML as much as node-llama-cpp's own wrapper.
 */
function familyOf(after: LlamaText): TemplateFamily {
  const text = after.toString();
  if (text.includes("<|im_start|>assistant")) return "chatml";
  if (text.includes("<start_of_turn>model")) return "gemma";
  return "other";
}

function withoutDoubledBos(text: LlamaText, bosText: string | undefined): LlamaText {
  const [first, second] = text.values;
  const doubled =
    bosText !== undefined &&
    bosText !== "" &&
    first instanceof SpecialToken &&
    first.value === "BOS" &&
    second instanceof SpecialTokensText &&
    second.value.startsWith(bosText);
  return doubled ? LlamaText(text.values.slice(1)) : text;
}
