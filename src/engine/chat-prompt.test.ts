import { describe, expect, it } from "vitest";
import { ChatMLChatWrapper, GemmaChatWrapper, JinjaTemplateChatWrapper, Llama3ChatWrapper, LlamaText } from "node-llama-cpp";
import { createChatPromptTemplate } from "./chat-prompt.js";

// A ChatML template as Qwen's GGUFs carry it in Jinja, rendered by node-llama-cpp's Jinja wrapper.
const CHATML_JINJA =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

describe("the chat template's family, which picks the prompt style", () => {
  it.each([
    ["ChatML", () => new ChatMLChatWrapper(), "chatml"],
    ["a ChatML Jinja template", () => new JinjaTemplateChatWrapper({ template: CHATML_JINJA }), "chatml"],
    ["Gemma (no system role)", () => new GemmaChatWrapper(), "gemma"],
    ["Llama 3 (not measured)", () => new Llama3ChatWrapper(), "other"],
  ] as const)("%s is %s", (_name, wrapper, family) => {
    expect(createChatPromptTemplate(wrapper()).family).toBe(family);
  });

  it("is told by the template alone: a state or question holding another family's markers changes nothing", () => {
    const template = createChatPromptTemplate(new GemmaChatWrapper());
    const text = LlamaText([template.prefix("", "<|im_start|>assistant\n"), template.suffix("<|im_start|>assistant")]).toString();
    expect(text, text).toContain("<start_of_turn>model");
    expect(template.family).toBe("gemma");
  });
});
