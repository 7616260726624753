import { parseDataset, type DatasetItem } from "./dataset.js";
import { replyTo, type ScriptedResponse } from "../testing/fake-judge-server.js";

/**
 * For the report tests: a dataset whose labels and ids need escaping, a fake judge whose
 * answers vary (so confusion tables have errors and diagrams several bins), and a small
 * HTML table reader, so tests check what a reader sees rather than the markup.
 */

export const EVIL_OPTION = `<script>alert("x")</script> & co`;
export const EVIL_QUESTION = `kind&<b>`;
export const EVIL_DATASET = `data <img src=x> & "y".jsonl`;

export function evilDataset(count = 24): DatasetItem[] {
  return parseDataset(evilDatasetText(count), "evil.jsonl");
}

/** The dataset as a JSONL file's text. */
export function evilDatasetText(count = 24): string {
  const options = { billing: null, [EVIL_OPTION]: null, other: null };
  const lines = Array.from({ length: count }, (_, n) =>
    JSON.stringify({
      id: `m${n}<&>`,
      state: `message ${n}`,
      questions: {
        [EVIL_QUESTION]: { type: "choice", instructions: "x", criteria: options },
        // The same options in another order: one confusion table for both questions.
        topic: { type: "choice", instructions: "y", criteria: n % 2 ? { other: null, billing: null, [EVIL_OPTION]: null } : options },
        yesno: { type: "choice", instructions: "z", criteria: { yes: null, no: null } },
        holds: { type: "noul", instructions: "w" },
        level: { type: "score", instructions: "v", criteria: ["a", "b", "c", "d"] },
      },
      gold: {
        [EVIL_QUESTION]: [EVIL_OPTION, "billing", "other"][n % 3],
        topic: n % 4 === 0 ? { billing: 0.6, other: 0.4 } : ["billing", "other", EVIL_OPTION][n % 3],
        yesno: n % 5 < 2 ? "yes" : "no",
        holds: n % 3 === 0,
        level: n % 4,
      },
    }),
  );
  return `${lines.join("\n")}\n`;
}

/** A deterministic hash in [0, 1) of a string: answers that vary with the state, question and label. */
function unit(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32;
}

/** Answers that depend on the state and the labels, never on the ids, and a little on the order (the first option gains). */
export function variedReply(body: any, model = "fake-model"): ScriptedResponse {
  return replyTo(body, model, (_type, labels) => {
    const weights = labels.map((label, i) => Math.exp(4 * unit(`${body.state}|${[...labels].sort().join(",")}|${label}`) + (i === 0 ? 0.5 : 0)));
    const total = weights.reduce((a, b) => a + b, 0);
    return weights.map((w) => w / total);
  });
}

const ALLOWED_TAGS = new Set(
  "html head meta title style body h1 h2 h3 p br code div table caption thead tbody tr th td span details summary figure figcaption svg g rect line text".split(
    " ",
  ),
);

/** Tags outside the reports' vocabulary, and attributes that load or run something: both must be none. */
export function foreignMarkup(html: string): string[] {
  return [...html.matchAll(/<([a-zA-Z][\w-]*)([^>]*)>/g)].flatMap(([tag, name, attrs]) => {
    const names = [...attrs.matchAll(/([\w-]+)=/g)].map((a) => a[1].toLowerCase());
    const loads = names.some((a) => a === "src" || a === "href" || a.startsWith("on"));
    return !ALLOWED_TAGS.has(name.toLowerCase()) || loads ? [tag] : [];
  });
}

/** variedReply with label logits three times too sharp, as a server with include_logits sends. */
export function variedReplyWithLogits(body: any, model = "fake-model"): ScriptedResponse {
  const reply = variedReply(body, model);
  for (const answer of Object.values<any>((reply.body as any).answers)) {
    const probabilities = answer.type === "noul" ? { true: answer.noul, false: 1 - answer.noul } : answer.probabilities;
    answer.logits = Object.fromEntries(Object.entries<number>(probabilities).map(([label, p]) => [label, 3 * Math.log(p)]));
  }
  return reply;
}

export interface HtmlTable {
  caption: string;
  headers: string[];
  rows: string[][];
}

export function unescapeHtml(text: string): string {
  return text.replace(/&(lt|gt|quot|#39|amp);/g, (_, e: string) => ({ lt: "<", gt: ">", quot: '"', "#39": "'", amp: "&" })[e]!);
}

const cellsOf = (row: string) => [...row.matchAll(/<t[hd]\b[^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) => unescapeHtml(m[1].replace(/<[^>]*>/g, "")));

/** Every table of the page by id: caption, header cells and body rows as the text a reader sees. */
export function tablesOf(html: string): Map<string, HtmlTable> {
  const tables = new Map<string, HtmlTable>();
  for (const m of html.matchAll(/<table id="([^"]*)">([\s\S]*?)<\/table>/g)) {
    const inner = m[2];
    const caption = unescapeHtml(/<caption>([\s\S]*?)<\/caption>/.exec(inner)?.[1] ?? "");
    const head = /<thead>([\s\S]*?)<\/thead>/.exec(inner)?.[1] ?? "";
    const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(inner)?.[1] ?? "";
    const rows = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) => cellsOf(r[1]));
    tables.set(unescapeHtml(m[1]), { caption, headers: cellsOf(head), rows });
  }
  return tables;
}

/** The table with this id, or a failure that lists the ids there are. */
export function tableOf(html: string, id: string): HtmlTable {
  const tables = tablesOf(html);
  const table = tables.get(id);
  if (!table) throw new Error(`no table ${id}; tables: ${[...tables.keys()].join(", ")}`);
  return table;
}

/** A cell by row header and column header. */
export function cell(table: HtmlTable, row: string | ((cells: string[]) => boolean), column: string): string {
  const r = table.rows.find(typeof row === "string" ? (cells) => cells[0] === row : row);
  const c = table.headers.indexOf(column);
  if (!r || c < 0) throw new Error(`no cell ${String(row)} / ${column} in ${JSON.stringify(table)}`);
  return r[c];
}
