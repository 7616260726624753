import { escapeXml } from "./reliability.js";

/**
 * The few pieces the eval and calibrate reports are built from: a page with inline CSS (no
 * scripts, no outside resources: the file opens anywhere, offline), tables, and legends. Every
 * text goes through `esc`; callers pass plain text, never markup, except to `page` and `section`.
 */

export const esc = escapeXml;

/** Cell backgrounds that mean something; each appears in a legend wherever it is used. */
export const CELL_COLOURS = {
  right: { background: "#d6ecd2", label: "the gold label answered (right)" },
  wrong: { background: "#f5d0cd", label: "another label answered (wrong)" },
} as const;
export type CellColour = keyof typeof CELL_COLOURS;

export type Cell = string | { text: string; colour?: CellColour };

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;line-height:1.45;margin:1.5em auto;max-width:72em;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
h3{font-size:1em;margin-bottom:.3em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0 1.2em}
caption{text-align:left;font-weight:bold;padding:.2em 0}
th,td{border:1px solid #ccc;padding:.2em .6em;white-space:nowrap}
th{text-align:left}
thead th{vertical-align:bottom;white-space:normal}
.num{text-align:right;font-variant-numeric:tabular-nums}
${Object.entries(CELL_COLOURS)
  .map(([name, c]) => `.${name}{background:${c.background}}`)
  .join("\n")}
.legend{margin:.2em 0 1em}
.legend span.key{margin-right:1.5em;white-space:nowrap}
.swatch{display:inline-block;width:1em;height:1em;vertical-align:-.15em;margin-right:.35em;border:1px solid #999}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,26em),1fr));gap:0 2.5em}
figure{margin:.5em 0 1em}
.figures table{font-size:.85em}
figure svg{display:block;width:100%;height:auto}
figcaption{font-size:.9em;color:#555}
code{font-size:.95em}
.note{color:#555}
`;

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head><body>
${body}
</body></html>
`;
}

const NUMERIC = /^[−-]?(\d[\d.,]*%?|-)$/;

/** A table whose first column heads its rows; cells that hold a number are aligned right. */
export function table(id: string, caption: string, headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const cls = (text: string, colour?: CellColour) => {
    const names = [NUMERIC.test(text) ? "num" : "", colour ?? ""].filter(Boolean);
    return names.length > 0 ? ` class="${names.join(" ")}"` : "";
  };
  const textOf = (cell: Cell | undefined) => (typeof cell === "string" ? cell : (cell?.text ?? ""));
  const numericColumn = (i: number) => rows.length > 0 && rows.every((row) => NUMERIC.test(textOf(row[i])));
  const head = headers.map((h, i) => `<th scope="col"${i > 0 && numericColumn(i) ? ' class="num"' : ""}>${esc(h)}</th>`).join("");
  const body = rows.map((row) => {
    const cells = row.map((cell, i) => {
      const { text, colour } = typeof cell === "string" ? { text: cell, colour: undefined } : cell;
      return i === 0 ? `<th scope="row">${esc(text)}</th>` : `<td${cls(text, colour)}>${esc(text)}</td>`;
    });
    return `<tr>${cells.join("")}</tr>`;
  });
  return `<div class="scroll"><table id="${esc(id)}">
<caption>${esc(caption)}</caption>
<thead><tr>${head}</tr></thead>
<tbody>
${body.join("\n")}
</tbody></table></div>`;
}

/** A legend naming the given cell colours. */
export function legend(colours: readonly CellColour[]): string {
  const keys = colours.map((c) => `<span class="key"><span class="swatch ${c}"></span>${esc(CELL_COLOURS[c].label)}</span>`);
  return `<p class="legend">${keys.join(" ")}</p>`;
}

/** An SVG diagram with a caption; the SVG is markup already escaped by its writer. */
export function figure(svg: string, caption: string, maxWidth: number): string {
  return `<figure style="max-width:${maxWidth}px">\n${svg}\n<figcaption>${esc(caption)}</figcaption></figure>`;
}
