import { getLlama, resolveChatWrapper, type Token, type LlamaContextSequence, type ControlledEvaluateInputItem } from "node-llama-cpp";
import { createChatPromptTemplate } from "../src/engine/chat-prompt.js";
import { buildPrompt } from "../src/judgment/prompt.js";
import { tinyFixturePath } from "../src/testing/fixture.js";

const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: process.argv[2] ?? (await tinyFixturePath()) });
const template = createChatPromptTemplate(resolveChatWrapper(model));
const n = 27;
const q = { type: "choice", instructions: `Pick one of ${n}.`, criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`option ${i}`, i % 3 === 0 ? null : `description ${i}`])) } as any;
const prompt = buildPrompt("word ".repeat(120), [q]);
const prefix = template.prefix(prompt.system, prompt.state).tokenize(model.tokenizer) as Token[];
const question = template.suffix(prompt.questions[0].text).tokenize(model.tokenizer) as Token[];
const label = model.tokenize(prompt.questions[0].labels[26]) as Token[];
console.log("prefix", prefix.length, "question", question.length, "label", label);
const ctx = await model.createContext({ contextSize: 8192, sequences: 1, threads: Number(process.env.T ?? 1), flashAttention: false });
const seq = ctx.getSequence();

async function run(batches: Token[][]): Promise<Float64Array> {
  await seq.eraseContextTokenRanges([{ start: 0, end: seq.nextTokenIndex }]);
  let out: Map<Token, number> | undefined;
  for (let b = 0; b < batches.length; b++) {
    const tokens = batches[b];
    const input: ControlledEvaluateInputItem[] = tokens.slice(0, -1);
    input.push([tokens[tokens.length - 1], { generateNext: { logits: true } }]);
    const o = await seq.controlledEvaluate(input);
    out = o[tokens.length - 1]?.next.logits;
  }
  const arr = new Float64Array(out!.size);
  for (const [k, v] of out!) arr[k] = v;
  return arr;
}
const all = [...prefix, ...question, label[0]];
const variants: Record<string, Token[][]> = {
  oneBatch: [all],
  oneBatchAgain: [all],
  engine_prefix_question_label1: [prefix, question, [label[0]]],
  prompt_then_label1: [[...prefix, ...question], [label[0]]],
  prefix_then_questionPlusLabel: [prefix, [...question, label[0]]],
  lastTwo: [[...prefix, ...question.slice(0, -1)], [question[question.length - 1], label[0]]],
  split100: [all.slice(0, 100), all.slice(100)],
  tokenByToken_tail8: [all.slice(0, -8), ...all.slice(-8).map((t) => [t])],
};
const base = await run(variants.oneBatch);
for (const [name, b] of Object.entries(variants)) {
  const x = await run(b);
  let worst = 0;
  for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i] - base[i]));
  console.log(name.padEnd(34), "max |Δlogit| vs one batch", worst.toExponential(2));
}
// Root position (end of question): one batch vs prefix|question vs last token alone
const rootAll = await run([[...prefix, ...question]]);
for (const [name, b] of Object.entries({ prefix_question: [prefix, question], lastAlone: [[...prefix, ...question.slice(0, -1)], question.slice(-1)] })) {
  const x = await run(b as Token[][]);
  let worst = 0;
  for (let i = 0; i < x.length; i++) worst = Math.max(worst, Math.abs(x[i] - rootAll[i]));
  console.log(("root " + name).padEnd(34), "max |Δlogit|", worst.toExponential(2));
}
await ctx.dispose(); await model.dispose();
