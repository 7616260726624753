/**
 * Realistic `POST /v1/systemone` bodies: a support-ticket-like state of a target length in
 * tokens and a mix of choice / noul / score questions. Every state is new random text, so the
 * server cannot answer from its prefix cache unless a phase asks for the same state on purpose.
 */
import { deriveSeed, mulberry32, pick } from "./random.js";

export interface RequestShape {
  /** Target length of the state, in the model's tokens. */
  stateTokens: number;
  questions: number;
  /** Options per `choice` question; `score` questions get as many levels, capped at 10. */
  options: number;
}

export interface BenchRequest {
  body: string;
  questions: number;
}

/**
 * English text in a BPE vocabulary such as Qwen's takes about 1.3 tokens per word. Only a first
 * guess: the bench then measures the real figure (the model's tokenizer with --model, otherwise
 * the server's own usage.input_tokens), since fixture vocabularies take several times more.
 */
export const HEURISTIC_TOKENS_PER_WORD = 1.3;

const WORDS = (
  "I we you they it the a an my our your this that these those and or but so because when after " +
  "before since while if then again still already never always only just also very too much more " +
  "order account invoice payment card bank refund charge subscription plan price fee discount " +
  "delivery package parcel address courier tracking number week day month year hour minute " +
  "support agent team manager email phone chat message reply ticket case issue problem error " +
  "bug crash update version app website page login password screen button setting profile " +
  "was is are were have has had will would could should can cannot did does not no yes " +
  "charged paid sent received asked told said waited tried called wrote opened closed changed " +
  "cancelled returned ordered shipped broken missing late wrong twice duplicate expired blocked " +
  "please thanks sorry today yesterday tomorrow now soon later again first second last next " +
  "new old same other every any some all none customer service product item box color size " +
  "happy angry confused disappointed urgent simple quick slow fast clear unclear correct " +
  "to of in on at for with from by about into over under between through without within"
).split(" ");

/** `words` space-separated words in sentences, with order numbers and amounts as real tickets have. */
export function generateText(random: () => number, words: number): string {
  const out: string[] = [];
  let sentenceLeft = 0;
  for (let i = 0; i < words; i++) {
    const starting = sentenceLeft === 0;
    if (starting) sentenceLeft = 6 + Math.floor(random() * 14);
    let word = randomWord(random);
    if (starting) word = word[0].toUpperCase() + word.slice(1);
    sentenceLeft--;
    if (sentenceLeft === 0 || i === words - 1) word += random() < 0.15 ? "?" : ".";
    else if (random() < 0.06) word += ",";
    out.push(word);
  }
  return out.join(" ");
}

function randomWord(random: () => number): string {
  const roll = random();
  if (roll < 0.03) return String(10_000 + Math.floor(random() * 90_000));
  if (roll < 0.05) return `€${(random() * 200).toFixed(2)}`;
  return pick(random, WORDS);
}

/** How many words make a state of `stateTokens` tokens at `tokensPerWord`. */
export function wordsFor(stateTokens: number, tokensPerWord: number): number {
  return Math.max(1, Math.round(stateTokens / tokensPerWord));
}

/** Tokens per word of generated text under a tokenizer, over several samples. */
export function measureTokensPerWord(countTokens: (text: string) => number, seed: number): number {
  const random = mulberry32(deriveSeed(seed, 0xca11));
  const words = 2000;
  let tokens = 0;
  for (let sample = 0; sample < 4; sample++) tokens += countTokens(generateText(random, words / 4));
  return tokens / words;
}

/**
 * A stream of requests. With `sameState` every request carries one state (new questions about
 * the same text), which the server's prefix cache should answer faster. With `states` K the
 * requests take K states in turn, as tenants interleaving their states do: a server that keeps
 * K states cached (K slots) answers them as fast as one repeated state, one that keeps a single
 * state re-reads every one of them.
 */
export function createRequestGenerator(
  shape: RequestShape,
  options: { seed: number; tokensPerWord: number; sameState?: boolean; states?: number },
): () => BenchRequest {
  const random = mulberry32(options.seed);
  const words = wordsFor(shape.stateTokens, options.tokensPerWord);
  const count = options.states ?? (options.sameState ? 1 : 0);
  const fixedStates = Array.from({ length: count }, () => generateText(random, words));
  let sent = 0;
  return () => {
    const state = count > 0 ? fixedStates[sent++ % count] : generateText(random, words);
    const questions: Record<string, unknown> = {};
    for (let i = 0; i < shape.questions; i++) questions[`q${i + 1}`] = question(random, i, shape.options);
    return { body: JSON.stringify({ state, questions }), questions: shape.questions };
  };
}

const CHOICE_INSTRUCTIONS = ["What is the message mainly about?", "Which team should handle it?", "What does the customer want?"];
const NOUL_STATEMENTS = ["The customer is angry.", "The customer asks for money back.", "The problem is already solved."];
const SCORE_INSTRUCTIONS = ["How urgent is it?", "How satisfied is the customer?", "How clear is the report?"];
const OPTION_KEYS = ["billing", "technical", "account", "shipping", "refund", "cancellation", "security", "feedback", "sales", "other"];
const LEVELS = ["none", "very low", "low", "rather low", "moderate", "noticeable", "rather high", "high", "very high", "extreme"];

/** Cycles choice, noul, score so any question count gives a realistic mix. */
function question(random: () => number, index: number, options: number): unknown {
  switch (index % 3) {
    case 0: {
      const criteria: Record<string, string> = {};
      for (let i = 0; i < options; i++) {
        const key = i < OPTION_KEYS.length ? OPTION_KEYS[i] : `option_${i + 1}`;
        criteria[key] = generateText(random, 3).replace(/[.?]$/, "").toLowerCase();
      }
      return { type: "choice", instructions: pick(random, CHOICE_INSTRUCTIONS), criteria };
    }
    case 1:
      return { type: "noul", instructions: pick(random, NOUL_STATEMENTS), criteria: { true: "the text says so plainly" } };
    default: {
      const levels = Math.min(10, Math.max(2, options));
      const criteria = Array.from({ length: levels }, (_, i) => LEVELS[Math.round((i * (LEVELS.length - 1)) / (levels - 1))]);
      return { type: "score", instructions: pick(random, SCORE_INSTRUCTIONS), criteria };
    }
  }
}
