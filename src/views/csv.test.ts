import { describe, expect, it } from "vitest";
import { csv, text } from "./csv.js";

describe("csv", () => {
  it("quotes commas, quotes and line breaks (quotes doubled), ends lines with CRLF, leaves numbers exact", () => {
    const out = csv(["a", "b", "c"], [[text('Acme, "the" best'), 9007199254740993n, null], [text("two\nlines"), -1.5, "x"]]);
    expect(out).toBe('a,b,c\r\n"Acme, ""the"" best",9007199254740993,\r\n"two\nlines",-1.5,x\r\n');
  });

  it("keeps a typed text from starting a formula, and only typed text", () => {
    expect(csv(["note", "amount"], [[text("=HYPERLINK(\"http://x\")"), "-1.50"], [text("-2 refund"), "2.00"], [text("@sum"), "0"]])).toBe(
      "note,amount\r\n\"'=HYPERLINK(\"\"http://x\"\")\",-1.50\r\n'-2 refund,2.00\r\n'@sum,0\r\n",
    );
  });
});
