import type { NumberTexts } from "../judgment/render.js";

/**
 * JSON.parse turns every number into a double: `1e999` becomes Infinity (rendered `null`),
 * `9007199254740993` becomes …992 and a 30-digit id loses its last digits, so the model would
 * read numbers the client never sent. For a body whose numbers all survive that (almost every
 * body) JSON.parse's value is used as is; otherwise the body is parsed again here, into the
 * same value, with each number's own text recorded beside it (see NumberTexts) so the
 * prompt shows it as written.
 *
 * `text` must already have parsed with JSON.parse and passed the nesting limit: this parser
 * trusts its syntax and recurses once per level.
 */
export function withNumberTexts(text: string, parsed: unknown): { value: unknown; numberTexts?: NumberTexts } {
  if (!hasNumberJsonChanges(text)) return { value: parsed };
  const parser = new Parser(text);
  return { value: parser.value(), numberTexts: parser.numberTexts };
}

/** A number whose text JSON.stringify would not give back: "1.0", "1E5", "-0", "1e999", "9007199254740993". */
function changedByParsing(token: string): boolean {
  return JSON.stringify(Number(token)) !== token;
}

/** Whether any number token (outside strings) of valid JSON `text` is changed by parsing. */
export function hasNumberJsonChanges(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = endOfString(text, i);
    } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
      const end = endOfNumber(text, i);
      if (changedByParsing(text.slice(i, end))) return true;
      i = end - 1;
    }
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** Index of the quote closing the string that opens at `start`. */
function endOfString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** Index just past the number token starting at `start`. */
function endOfNumber(text: string, start: number): number {
  let end = start + 1;
  while (end < text.length && /[0-9eE.+-]/.test(text[end])) end++;
  return end;
}

/** Builds what JSON.parse builds, recording the text of each number parsing changes. */
class Parser {
  private i = 0;
  readonly numberTexts = new Map<object, ReadonlyMap<string, string>>();
  constructor(private readonly text: string) {}

  value(): unknown {
    this.skipSpace();
    const c = this.text[this.i];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return this.string();
    if (c === "t" || c === "f" || c === "n") return this.literal();
    return Number(this.numberToken());
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const texts = new Map<string, string>();
    this.i++;
    for (this.skipSpace(); this.text[this.i] !== "}"; this.skipSpace()) {
      if (this.text[this.i] === ",") {
        this.i++;
        this.skipSpace();
      }
      const key = this.string();
      this.skipSpace();
      this.i++; // ':'
      // Defined, not assigned: a "__proto__" key is data, as JSON.parse makes it.
      Object.defineProperty(out, key, { value: this.member(texts, key), enumerable: true, writable: true, configurable: true });
    }
    this.i++;
    if (texts.size > 0) this.numberTexts.set(out, texts);
    return out;
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    const texts = new Map<string, string>();
    this.i++;
    for (this.skipSpace(); this.text[this.i] !== "]"; this.skipSpace()) {
      if (this.text[this.i] === ",") this.i++;
      out.push(this.member(texts, String(out.length)));
    }
    this.i++;
    if (texts.size > 0) this.numberTexts.set(out, texts);
    return out;
  }

  /** One member's value; a later duplicate key replaces an earlier one's text, as it does the value. */
  private member(texts: Map<string, string>, key: string): unknown {
    this.skipSpace();
    const c = this.text.charCodeAt(this.i);
    if (c !== MINUS && (c < DIGIT_0 || c > DIGIT_9)) {
      texts.delete(key);
      return this.value();
    }
    const token = this.numberToken();
    if (changedByParsing(token)) texts.set(key, token);
    else texts.delete(key);
    return Number(token);
  }

  private string(): string {
    const end = endOfString(this.text, this.i);
    const value = JSON.parse(this.text.slice(this.i, end + 1)) as string;
    this.i = end + 1;
    return value;
  }

  private literal(): boolean | null {
    const c = this.text[this.i];
    this.i += c === "f" ? 5 : 4;
    return c === "t" ? true : c === "f" ? false : null;
  }

  private numberToken(): string {
    const end = endOfNumber(this.text, this.i);
    const token = this.text.slice(this.i, end);
    this.i = end;
    return token;
  }

  private skipSpace(): void {
    while (/[ \t\n\r]/.test(this.text[this.i] ?? "")) this.i++;
  }
}
