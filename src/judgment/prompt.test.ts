import { describe, expect, it } from "vitest";
import type { Question } from "./schema.js";
import { choiceLabels, NOUL_LABELS, scoreLabels } from "./labels.js";
import {
  buildPrompt,
  COMPACT_CUES_SYSTEM_TEXT,
  DEFAULT_PROMPT_STYLE,
  promptStyleFor,
  promptStyleSetting,
  questionPrompt,
  SHORT_CUES_SYSTEM_TEXT,
  styledFor,
  SYSTEM_TEXT,
} from "./prompt.js";

const show = (value: unknown) => JSON.stringify(value, null, 1);

const QUESTIONS: Record<string, Question> = {
  colour: { type: "choice", instructions: "Which colour is it?", criteria: { red: "warm", green: null, blue: { hue: 240 } } },
  urgent: { type: "noul", instructions: "It is urgent.", criteria: { true: "needs action today", false: "can wait" } },
  refund: { type: "noul", instructions: null, criteria: { true: "a refund is owed" } },
  bare: { type: "noul", instructions: "Bare statement." },
  severity: { type: "score", instructions: { ask: "How severe?" }, criteria: ["none", null, ["bad", "very"]] },
  many: {
    type: "choice",
    instructions: "Pick a number.",
    criteria: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}`, i % 2 ? null : `number ${i}`])),
  },
};

describe("choice labels", () => {
  it("are the letters A..Z for up to 26 options", () => {
    expect(choiceLabels(2)).toEqual(["A", "B"]);
    expect(choiceLabels(26)).toEqual([..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"]);
  });

  it("are two letters beyond 26 options", () => {
    const labels = choiceLabels(27);
    expect(labels.slice(0, 3), show(labels)).toEqual(["AA", "AB", "AC"]);
    expect(labels[26], show(labels)).toBe("BA");
    expect(choiceLabels(255)[254]).toBe("JU");
  });

  it("for every n from 2 to 255: n labels, all distinct, all of equal length, only capital letters", () => {
    for (let n = 2; n <= 255; n++) {
      const labels = choiceLabels(n);
      expect(labels.length, `n=${n}`).toBe(n);
      expect(new Set(labels).size, `n=${n}: ${show(labels)}`).toBe(n);
      expect(new Set(labels.map((l) => l.length)).size, `n=${n}: ${show(labels)}`).toBe(1);
      for (const label of labels) expect(label, `n=${n}`).toMatch(/^[A-Z]{1,2}$/);
    }
  });
});

describe("score and noul labels", () => {
  it("score levels are numbered from 0, one digit each, for 2 to 10 levels", () => {
    for (let n = 2; n <= 10; n++) expect(scoreLabels(n)).toEqual(Array.from({ length: n }, (_, i) => String(i)));
  });

  it("noul answers Yes (the statement holds) first, then No", () => {
    expect([...NOUL_LABELS]).toEqual(["Yes", "No"]);
  });
});

describe("buildPrompt", () => {
  it("never contains a question id: ids are not even an input, and distinctive ids appear nowhere", () => {
    const ids = ["ID_Zq7_colour", "질문-두번째 🎉", "x.y.z-urgent", "__proto__", "refund_id_0001", "sev%%"];
    const questions = Object.values(QUESTIONS);
    const prompt = buildPrompt("The state", questions);
    const text = JSON.stringify(prompt);
    for (const id of ids) expect(text.includes(id), `${id} in ${text}`).toBe(false);
    expect(buildPrompt.length, "buildPrompt takes (state, questions) only").toBe(2);
  });

  it("gives a question the same text whatever other questions exist and wherever it stands", () => {
    const all = Object.values(QUESTIONS);
    for (const [index, question] of all.entries()) {
      const alone = buildPrompt("s", [question]).questions[0];
      const first = buildPrompt("s", [question, ...all.filter((q) => q !== question)]).questions[0];
      const inPlace = buildPrompt("s", all).questions[index];
      const reversed = buildPrompt("s", [...all].reverse()).questions[all.length - 1 - index];
      const doubled = buildPrompt("s", [...all, ...all]).questions[all.length + index];
      for (const other of [first, inPlace, reversed, doubled]) expect(other, show({ alone, other })).toEqual(alone);
      expect(alone, show(alone)).toEqual(questionPrompt(question));
    }
  });

  it("gives the same system text and state section whatever the questions", () => {
    const state = { ticket: "charged twice", amount: 12 };
    const a = buildPrompt(state, [QUESTIONS.colour]);
    const b = buildPrompt(state, Object.values(QUESTIONS));
    expect(a.system).toBe(SYSTEM_TEXT);
    expect(b.system).toBe(a.system);
    expect(b.state).toBe(a.state);
  });

  it("renders the same state object identically whatever its key order", () => {
    const a = buildPrompt({ b: { y: 1, x: 2 }, a: [1, { d: 1, c: 2 }] }, [QUESTIONS.bare]);
    const b = buildPrompt({ a: [1, { c: 2, d: 1 }], b: { x: 2, y: 1 } }, [QUESTIONS.bare]);
    expect(b.state, `${a.state}\n---\n${b.state}`).toBe(a.state);
  });

  it("puts string, empty and missing states in the state section", () => {
    expect(buildPrompt("hello there", [QUESTIONS.bare]).state).toBe("State:\nhello there\n\n");
    expect(buildPrompt("", [QUESTIONS.bare]).state).toBe("State:\n(empty)\n\n");
    expect(buildPrompt(undefined, [QUESTIONS.bare]).state).toBe("State:\n(empty)\n\n");
    expect(buildPrompt(null, [QUESTIONS.bare]).state).toBe("State:\n(empty)\n\n");
  });
});

describe("question text", () => {
  it("choice: lists each option with its number, name and description; null description shows the name only", () => {
    const p = questionPrompt(QUESTIONS.colour);
    expect(p.labels).toEqual(["1", "2", "3"]);
    expect(p.text, p.text).toContain("Question: Which colour is it?");
    expect(p.text, p.text).toContain("1. red: warm\n");
    expect(p.text, p.text).toContain("2. green\n");
    expect(p.text, p.text).toContain('3. blue: {\n  "hue": 240\n}');
    expect(p.text, p.text).toContain("Answer with the number of the best option.");
  });

  it("choice: digits 1 to 9 for up to 9 options, letters from 10 options on (a digit label must stay one token)", () => {
    const options = (n: number): Question => ({
      type: "choice",
      instructions: "?",
      criteria: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, null])),
    });
    for (let n = 2; n <= 9; n++) expect(questionPrompt(options(n)).labels, `n=${n}`).toEqual(Array.from({ length: n }, (_, i) => String(i + 1)));
    const ten = questionPrompt(options(10));
    expect(ten.labels, show(ten.labels)).toEqual(choiceLabels(10));
    expect(ten.text, ten.text).toContain("A. k0\n");
    expect(ten.text, ten.text).toContain("Answer with the letter of the best option.");
  });

  it("choice with the letters style: letters A.. for up to 26 options", () => {
    const p = questionPrompt(QUESTIONS.colour, { ...DEFAULT_PROMPT_STYLE, choiceLabels: "letters" });
    expect(p.labels).toEqual(["A", "B", "C"]);
    expect(p.text, p.text).toContain("A. red: warm\n");
    expect(p.text, p.text).toContain("B. green\n");
    expect(p.text, p.text).toContain("Answer with the letter of the best option.");
  });

  it("choice beyond 26 options: two-letter codes, and the instruction says so", () => {
    const p = questionPrompt(QUESTIONS.many);
    expect(p.labels, show(p.labels)).toEqual(choiceLabels(30));
    expect(p.text, p.text).toContain("AA. n0: number 0\n");
    expect(p.text, p.text).toContain("AB. n1\n");
    expect(p.text, p.text).toContain("Answer with the two-letter code of the best option.");
  });

  it("choice: option order in the prompt follows the criteria's order", () => {
    const p = questionPrompt({ type: "choice", instructions: "?", criteria: { zebra: null, apple: null } });
    expect(p.text.indexOf("1. zebra"), p.text).toBeLessThan(p.text.indexOf("2. apple"));
  });

  it("noul: two-sided, one-sided and without criteria", () => {
    const two = questionPrompt(QUESTIONS.urgent).text;
    expect(two, two).toBe(
      "Statement: It is urgent.\nIt holds when: needs action today\nIt does not hold when: can wait\nDoes the statement hold? Answer Yes or No.",
    );
    const one = questionPrompt(QUESTIONS.refund).text;
    expect(one, one).toBe("Statement: \nIt holds when: a refund is owed\nDoes the statement hold? Answer Yes or No.");
    const bare = questionPrompt(QUESTIONS.bare).text;
    expect(bare, bare).toBe("Statement: Bare statement.\nDoes the statement hold? Answer Yes or No.");
    const nullCriteria = questionPrompt({ type: "noul", instructions: "Bare statement.", criteria: null }).text;
    expect(nullCriteria).toBe(bare);
    expect(questionPrompt(QUESTIONS.urgent).labels).toEqual(["Yes", "No"]);
  });

  it("score: levels numbered from 0, lowest first; structured instructions rendered as JSON", () => {
    const p = questionPrompt(QUESTIONS.severity);
    expect(p.labels).toEqual(["0", "1", "2"]);
    expect(p.text, p.text).toBe(
      'Question: {\n  "ask": "How severe?"\n}\nLevels (lowest first):\n0: none\n1\n2: [\n  "bad",\n  "very"\n]\n' +
        "Answer with the number of the level that fits best.",
    );
  });
});

describe("short cues", () => {
  const short = { ...DEFAULT_PROMPT_STYLE, cues: "short" as const };

  it("say once in the system text how every type is answered, and end each question with a short cue", () => {
    const prompt = buildPrompt("s", Object.values(QUESTIONS), short);
    expect(prompt.system).toBe(SHORT_CUES_SYSTEM_TEXT);
    expect(prompt.system.startsWith(SYSTEM_TEXT), prompt.system).toBe(true);
    expect(questionPrompt(QUESTIONS.colour, short).text).toBe(
      'Which colour is it?\n1. red: warm\n2. green\n3. blue: {\n  "hue": 240\n}\nAnswer with a number.',
    );
    expect(questionPrompt(QUESTIONS.urgent, short).text).toBe(
      "Statement: It is urgent.\nIt holds when: needs action today\nIt does not hold when: can wait\nYes or No?",
    );
    expect(questionPrompt(QUESTIONS.severity, short).text).toBe('{\n  "ask": "How severe?"\n}\n0: none\n1\n2: [\n  "bad",\n  "very"\n]\nAnswer with a number.');
    expect(questionPrompt(QUESTIONS.many, short).text, "letters beyond 9 options say so").toMatch(/\nAnswer with a two-letter code\.$/);
  });

  it("keep the labels, and a question's text independent of the others", () => {
    for (const question of Object.values(QUESTIONS)) {
      expect(questionPrompt(question, short).labels).toEqual(questionPrompt(question).labels);
      expect(buildPrompt("s", Object.values(QUESTIONS), short).questions).toContainEqual(questionPrompt(question, short));
    }
  });
});

describe("compact cues", () => {
  const compact = { ...DEFAULT_PROMPT_STYLE, cues: "compact" as const };
  const short = { ...DEFAULT_PROMPT_STYLE, cues: "short" as const };
  const full = { ...DEFAULT_PROMPT_STYLE, cues: "full" as const };

  it("are short for choices and scores and full for statements, and the system text says how options and levels are answered", () => {
    const prompt = buildPrompt("s", Object.values(QUESTIONS), compact);
    expect(prompt.system).toBe(COMPACT_CUES_SYSTEM_TEXT);
    expect(prompt.system.startsWith(SYSTEM_TEXT), prompt.system).toBe(true);
    for (const name of ["colour", "severity", "many"] as const) {
      expect(questionPrompt(QUESTIONS[name], compact).text, name).toBe(questionPrompt(QUESTIONS[name], short).text);
    }
    expect(questionPrompt(QUESTIONS.urgent, compact).text).toBe(questionPrompt(QUESTIONS.urgent, full).text);
  });

  it("keep the labels, and a question's text independent of the others", () => {
    for (const question of Object.values(QUESTIONS)) {
      expect(questionPrompt(question, compact).labels).toEqual(questionPrompt(question).labels);
      expect(buildPrompt("s", Object.values(QUESTIONS), compact).questions).toContainEqual(questionPrompt(question, compact));
    }
  });
});

describe("the style per chat template family (JUDGE_PROMPT_CUES)", () => {
  it("auto: short cues for ChatML, compact for Gemma, full where no measurement covers the format or the family is not known", () => {
    const cues = (family?: Parameters<typeof promptStyleFor>[0]) => promptStyleFor(family).cues;
    expect([cues("chatml"), cues("gemma"), cues("other"), cues(undefined)]).toEqual(["short", "compact", "full", "full"]);
  });

  it("a fixed setting applies to every family; only the cues change, never the labels or the system role", () => {
    for (const setting of ["full", "short", "compact"] as const) {
      for (const family of ["chatml", "gemma", "other", undefined] as const) {
        expect(promptStyleFor(family, setting), `${setting} on ${family}`).toEqual({ ...DEFAULT_PROMPT_STYLE, cues: setting });
      }
    }
  });
});

describe("auto cues: styled where the model's template is known", () => {
  const questions = Object.values(QUESTIONS);
  it("a prompt built with auto is marked, and styledFor rebuilds it in the family's style, keeping what else it asks", () => {
    const auto = { ...buildPrompt({ a: 1 }, questions, "auto"), diagnostics: true };
    expect(auto.auto).toBe(true);
    for (const family of ["chatml", "gemma", "other"] as const) {
      const fixed = buildPrompt({ a: 1 }, questions, promptStyleFor(family));
      expect(styledFor(auto, family), family).toEqual({ ...fixed, diagnostics: true, auto: false });
    }
  });

  it("a prompt built in a fixed style is read as it is by every family", () => {
    const fixed = buildPrompt({ a: 1 }, questions, promptStyleFor(undefined, "compact"));
    for (const family of ["chatml", "gemma", "other"] as const) expect(styledFor(fixed, family)).toBe(fixed);
  });

  it("JUDGE_PROMPT_CUES: auto leaves the style to the engine; a fixed setting is one style for every model", () => {
    expect(promptStyleSetting("auto")).toBe("auto");
    expect(promptStyleSetting(undefined)).toBe("auto");
    expect(promptStyleSetting("short")).toEqual({ ...DEFAULT_PROMPT_STYLE, cues: "short" });
  });
});

describe("numbers as the client wrote them", () => {
  it("prints the request's number texts in the state, the options and the prompt styledFor rebuilds", () => {
    const state = { n: 1 };
    const description = { hue: 1e21 };
    const question: Question = { type: "choice", instructions: "Which?", criteria: { a: description, b: null } };
    const texts = new Map<object, ReadonlyMap<string, string>>([
      [state, new Map([["n", "1.0"]])],
      [description, new Map([["hue", "1E21"]])],
    ]);
    const prompt = buildPrompt(state, [question], "auto", texts);
    expect(prompt.state).toContain('"n": 1.0');
    expect(prompt.questions[0].text).toContain('"hue": 1E21');
    expect(styledFor(prompt, "chatml").questions[0].text).toContain('"hue": 1E21');
    // Without them, as JSON.stringify prints the values.
    expect(buildPrompt(state, [question]).state).toContain('"n": 1\n');
  });
});
