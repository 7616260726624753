import { describe, expect, it } from "vitest";
import { csv, text } from "./csv.js";

describe("csv", () => {
  it("quotes commas, quotes and line breaks (quotes doubled), ends lines with CRLF, leaves numbers exact", () => {
    const out = csv(
      ["a", "b", "c"],
      [
        [text('Acme, "the" best'), 9007199254740993n, null],
        [text("two\nlines"), -1.5, "x"],
      ],
    );
    expect(out).toBe('a,b,c\r\n"Acme, ""the"" best",9007199254740993,\r\n"two\nlines",-1.5,x\r\n');
  });

  it("keeps a typed text from starting a formula, and only typed text", () => {
    expect(
      csv(
        ["note", "amount"],
        [
          [text('=HYPERLINK("http://x")'), "-1.50"],
          [text("-2 refund"), "2.00"],
          [text("@sum"), "0"],
        ],
      ),
    ).toBe('note,amount\r\n"\'=HYPERLINK(""http://x"")",-1.50\r\n\'-2 refund,2.00\r\n\'@sum,0\r\n');
  });

  it("quotes a field holding a separator another locale or tool splits on, so no cell of it starts a formula", () => {
    const notes = ["paid;=cmd|' /C calc'!A0", "a\t=1+1", "x|@SUM(A1)", "b, -2+3", 'q";+1'];
    const out = csv(
      ["note", "amount"],
      notes.map((note) => [text(note), "-1.50"]),
    );
    expect(out.split("\r\n")[1]).toBe(`"paid;=cmd|' /C calc'!A0",-1.50`);
    for (const separator of [",", ";", "\t", "|"]) {
      const cells = splitQuoted(out, separator).filter((cell) => cell !== "-1.50");
      expect(
        cells.filter((cell) => /^[=+\-@]/.test(cell)),
        `split on ${JSON.stringify(separator)}:\n${out}`,
      ).toEqual([]);
    }
  });
});

/** The cells a spreadsheet that splits on `separator` (and honours RFC 4180 quotes) would show. */
function splitQuoted(text: string, separator: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell === "") quoted = true;
    else if (ch === separator || ch === "\r" || ch === "\n") cells.push(cell), (cell = "");
    else cell += ch;
  }
  return [...cells, cell].filter((c) => c !== "");
}
