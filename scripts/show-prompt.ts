/**
 * Prints the exact text a model reads for a request (shared prefix, then each question's
 * suffix), with the chat template node-llama-cpp resolves for that model file. Loads only the
 * vocabulary, so it is quick: `npx tsx scripts/show-prompt.ts model.gguf request.json`. The
 * prompt is styled as the service styles it for that template family (JUDGE_PROMPT_CUES=auto).
 */
import { readFile } from "node:fs/promises";
import { getLlama, resolveChatWrapper } from "node-llama-cpp";
import { createChatPromptTemplate } from "../src/engine/chat-prompt.js";
import { buildPrompt, promptStyleFor } from "../src/judgment/prompt.js";

const [modelPath, requestPath] = process.argv.slice(2);
const request = JSON.parse(await readFile(requestPath, "utf8"));
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath, vocabOnly: true });
const wrapper = resolveChatWrapper(model);
const template = createChatPromptTemplate(wrapper);
const style = promptStyleFor(template.family);
const prompt = buildPrompt(request.state, Object.values(request.questions), style);
console.log(`chat wrapper: ${wrapper.wrapperName}; template family ${template.family}, ${style.cues} cues`);
console.log("=== prefix ===");
console.log(JSON.stringify(template.prefix(prompt.system, prompt.state).toString()));
for (const q of prompt.questions) {
  console.log(`=== question suffix (labels ${q.labels.join(", ")}) ===`);
  console.log(JSON.stringify(template.suffix(q.text).toString()));
}
await model.dispose();
await llama.dispose();
