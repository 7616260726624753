import { describe, expect, it } from "vitest";
import { buildAnswer, NEUTRAL_TEMPERATURES } from "../../judgment/answers.js";
import {
  choiceKey,
  decisionsUsage,
  toDecisionAnswers,
  toJudgment,
  UnsupportedDecisionError,
  type DecisionsQuestion,
  type DecisionsRequest,
} from "./mapping.js";
import { mulberry32 } from "../../bench/random.js";
import { buildPrompt } from "../../judgment/prompt.js";
import type { Answer, Question } from "../../judgment/schema.js";

/** The OpenAI Decisions format onto our questions and back: a pure mapping. */

const show = (value: unknown) => JSON.stringify(value, null, 1);

/** The error toJudgment throws, so its message and param can be checked. */
function refusal(request: DecisionsRequest): UnsupportedDecisionError {
  try {
    toJudgment(request);
  } catch (error) {
    if (error instanceof UnsupportedDecisionError) return error;
    throw error;
  }
  throw new Error(`not refused: ${show(request)}`);
}

const predicate: DecisionsQuestion = { type: "predicate", instructions: "It is urgent." };

/** Our answer to `question` from label log-probabilities, as the engine's pipeline builds it. */
function answerFrom(question: Question, random: () => number): Answer {
  const labels = question.type === "noul" ? 2 : question.type === "choice" ? Object.keys(question.criteria).length : question.criteria.length;
  return buildAnswer(
    question,
    Array.from({ length: labels }, () => -10 * random()),
    NEUTRAL_TEMPERATURES,
  );
}

describe("toJudgment: the request as our questions", () => {
  it("maps a string input to the state and the three types to noul, choice and score, with ids q1…qN in order", () => {
    const mapped = toJudgment({
      input: "I was charged twice.",
      questions: [
        { type: "choice", name: "topic", instructions: "What is it about?", choices: [{ value: "billing", description: "money" }, { value: "tech" }] },
        { type: "predicate", instructions: "The customer is angry." },
        {
          type: "score",
          instructions: "How urgent?",
          levels: [{ label: "low" }, { label: "high", description: "answer today" }, { label: "", description: null }],
        },
      ],
    });
    expect(mapped, show(mapped)).toEqual({
      state: "I was charged twice.",
      ids: ["q1", "q2", "q3"],
      questions: [
        { type: "choice", instructions: "What is it about?", criteria: { billing: "money", tech: null } },
        { type: "noul", instructions: "The customer is angry." },
        { type: "score", instructions: "How urgent?", criteria: ["low", "high: answer today", ""] },
      ],
    });
    // What /v1/systemone would be sent for the same thing: the model reads the very same prompt.
    expect(buildPrompt(mapped.state, mapped.questions)).toEqual(buildPrompt("I was charged twice.", mapped.questions));
  });

  it("names boolean values by their text and keeps the order of the choices", () => {
    const mapped = toJudgment({
      input: "x",
      questions: [{ type: "choice", instructions: "Refund?", choices: [{ value: false, description: "no" }, { value: "maybe" }, { value: true }] }],
    });
    const [question] = mapped.questions;
    expect(question.type === "choice" && Object.entries(question.criteria), show(mapped)).toEqual([
      ["false", "no"],
      ["maybe", null],
      ["true", null],
    ]);
  });

  it("joins the text parts of user messages by a blank line, in order", () => {
    const mapped = toJudgment({
      input: [
        { role: "user", content: "First message." },
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Second," },
            { type: "input_text", text: "third.", prompt_cache_breakpoint: { mode: "explicit" } },
          ],
        },
      ],
      questions: [
        {
          type: "predicate",
          instructions: [
            { type: "input_text", text: "Is it" },
            { type: "input_text", text: "urgent?" },
          ],
        },
      ],
    });
    expect(mapped.state).toBe("First message.\n\nSecond,\n\nthird.");
    expect(mapped.questions[0], show(mapped)).toEqual({ type: "noul", instructions: "Is it\n\nurgent?" });
  });

  it("keeps a lone JSON part as the value itself (a JSON state), and renders JSON beside text as a JSON state is rendered", () => {
    const data = { order: 17, items: ["a", "b"] };
    const lone = toJudgment({ input: [{ role: "user", content: [{ type: "input_json", data }] }], questions: [predicate] });
    expect(lone.state).toBe(data);
    const mixed = toJudgment({
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "The order:" },
            { type: "input_json", data },
          ],
        },
      ],
      questions: [predicate],
    });
    expect(mixed.state).toBe(`The order:\n\n${JSON.stringify({ items: ["a", "b"], order: 17 }, null, 2)}`);
  });

  it("an empty list of messages is an empty state", () => {
    expect(toJudgment({ input: [], questions: [predicate] }).state).toBe("");
  });
});

describe("toJudgment refuses what cannot be mapped, saying what and where", () => {
  const image = { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" };
  const CASES: [name: string, request: { input: DecisionsRequest["input"]; questions?: DecisionsQuestion[] }, param: string, message: RegExp][] = [
    [
      "an image in a user message",
      { input: [{ role: "user", content: [{ type: "input_text", text: "see" }, image] }], questions: [predicate] },
      "input[0].content[1]",
      /images \(input_image\) are not supported/,
    ],
    [
      "an image in a question's instructions",
      { input: "x", questions: [predicate, { type: "predicate", instructions: [image] }] },
      "questions[1].instructions[0]",
      /images \(input_image\) are not supported/,
    ],
    [
      "a developer message",
      {
        input: [
          { role: "user", content: "x" },
          { role: "developer", content: "Be strict." },
        ],
      },
      "input[1].role",
      /developer messages are not supported/,
    ],
    ["a system message", { input: [{ role: "system", content: "Be strict." }] }, "input[0].role", /system messages are not supported/],
    [
      "an assistant message",
      { input: [{ role: "assistant", content: [{ type: "output_text", text: "Hi" }] }] },
      "input[0].role",
      /assistant messages are not supported/,
    ],
    [
      "a function call",
      { input: [{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }] },
      "input[0].type",
      /function_call items are not supported/,
    ],
    [
      "a custom tool call's output",
      { input: [{ type: "custom_tool_call_output", call_id: "c", output: "ok" }] },
      "input[0].type",
      /custom_tool_call_output items are not supported/,
    ],
    ["an unknown item type", { input: [{ type: "reasoning", role: "user", content: "x" }] }, "input[0].type", /type "reasoning" are not supported/],
    ["a message without a role", { input: [{ content: "x" }] }, "input[0].role", /needs a role/],
    ["an item that is not an object", { input: ["just text"] }, "input[0]", /must be a message object/],
    ["content that is neither text nor parts", { input: [{ role: "user", content: 42 }] }, "input[0].content", /must be a string or an array/],
    [
      "an unknown part type",
      { input: [{ role: "user", content: [{ type: "input_audio", data: "…" }] }] },
      "input[0].content[0].type",
      /type "input_audio" are not supported/,
    ],
    ["a text part without text", { input: [{ role: "user", content: [{ type: "input_text" }] }] }, "input[0].content[0].text", /must be a string/],
    [
      "a JSON part holding a number",
      { input: [{ role: "user", content: [{ type: "input_json", data: 4 }] }] },
      "input[0].content[0].data",
      /JSON object or array/,
    ],
    [
      "a string and a boolean with the same text",
      { input: "x", questions: [{ type: "choice", instructions: "?", choices: [{ value: "true" }, { value: false }, { value: true }] }] },
      "questions[0].choices[2].value",
      /the string "true" and the boolean true/,
    ],
    [
      "the same value twice",
      { input: "x", questions: [{ type: "choice", instructions: "?", choices: [{ value: "a" }, { value: "b" }, { value: "a" }] }] },
      "questions[0].choices[2].value",
      /listed twice/,
    ],
    [
      "an empty value",
      { input: "x", questions: [{ type: "choice", instructions: "?", choices: [{ value: "" }, { value: "b" }] }] },
      "questions[0].choices[0].value",
      /non-empty/,
    ],
  ];
  for (const [name, request, param, message] of CASES) {
    it(name, () => {
      const error = refusal({ questions: [predicate], ...request });
      expect({ param: error.param, message: error.message }, show(request)).toEqual({ param, message: expect.stringMatching(message) });
      expect(error.message.startsWith(`${param}: `), error.message).toBe(true);
    });
  }
});

describe("toDecisionAnswers: our answers in the format, values and names as sent", () => {
  it("round trips: every value comes back with its type, in request order, named as asked", () => {
    const random = mulberry32(12);
    const questions: DecisionsQuestion[] = [
      { type: "choice", name: "typed", instructions: "?", choices: [{ value: true }, { value: "no" }, { value: false }, { value: "__proto__" }] },
      // Integer-like keys are enumerated first by an object; the answer keeps the request's order.
      { type: "choice", instructions: "?", choices: [{ value: "10" }, { value: "b" }, { value: "2" }, { value: "1" }] },
      { type: "predicate", name: "", instructions: "?" },
      { type: "score", name: "urgency", instructions: "?", levels: [{ label: "low" }, { label: "mid", description: "soon" }, { label: "high" }] },
    ];
    const mapped = toJudgment({ input: "x", questions });
    const ours = mapped.questions.map((q) => answerFrom(q, random));
    const answers = toDecisionAnswers(questions, ours);
    expect(
      answers.map((a) => [a.type, a.name]),
      show(answers),
    ).toEqual([
      ["choice", "typed"],
      ["choice", null],
      ["predicate", ""],
      ["score", "urgency"],
    ]);
    for (const [i, answer] of answers.entries()) {
      const our = ours[i];
      const question = questions[i];
      if (answer.type === "choice" && our.type === "choice" && question.type === "choice") {
        expect(
          answer.probabilities.map((p) => p.value),
          show(answer),
        ).toEqual(question.choices.map((c) => c.value));
        for (const p of answer.probabilities)
          expect(p.probability, show(answer)).toBe(Object.getOwnPropertyDescriptor(our.probabilities, choiceKey(p.value))?.value);
        expect(choiceKey(answer.choice), show(answer)).toBe(our.choice);
        expect(
          question.choices.some((c) => c.value === answer.choice),
          `the choice is one of the values, with its type: ${show(answer)}`,
        ).toBe(true);
        expect(answer.confidence).toBe(our.confidence);
      } else if (answer.type === "score" && our.type === "score") {
        expect(answer.probabilities, show(answer)).toEqual([
          { value: 0, label: "low", probability: our.probabilities["0"] },
          { value: 1, label: "mid", probability: our.probabilities["1"] },
          { value: 2, label: "high", probability: our.probabilities["2"] },
        ]);
        expect([answer.score, answer.confidence]).toEqual([our.score, our.confidence]);
      } else if (answer.type === "predicate" && our.type === "noul") {
        expect(answer.probability).toBe(our.noul);
      } else {
        throw new Error(`answer ${i} of the wrong type: ${show(answer)}`);
      }
    }
  });

  it("a boolean chosen comes back as a boolean, the string of the same question as a string", () => {
    const question: DecisionsQuestion = { type: "choice", instructions: "?", choices: [{ value: "maybe" }, { value: false }] };
    const [asked] = toJudgment({ input: "x", questions: [question] }).questions;
    const sure = (logProbs: number[]) => toDecisionAnswers([question], [buildAnswer(asked, logProbs, NEUTRAL_TEMPERATURES)])[0];
    expect(sure([-5, 0])).toMatchObject({ choice: false });
    expect(sure([0, -5])).toMatchObject({ choice: "maybe" });
  });

  it("refuses answers that do not fit the questions (a bug, never the client's fault)", () => {
    const noul: Answer = { type: "noul", noul: 0.5 };
    expect(() => toDecisionAnswers([predicate, predicate], [noul])).toThrow(/1 answers for 2 questions/);
    expect(() => toDecisionAnswers([{ type: "score", instructions: "?", levels: [{ label: "a" }, { label: "b" }] }], [noul])).toThrow(/noul answer to a score/);
  });
});

describe("decisionsUsage", () => {
  it("bills input tokens, generates none and reports no cache", () => {
    expect(decisionsUsage(281)).toEqual({
      input_tokens: 281,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 281,
    });
  });
});
