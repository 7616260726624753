import { describe, expect, it } from "vitest";
import { reliabilityBins, type Prediction } from "./metrics.js";
import { diagramSize, escapeXml, reliabilitySvg, SERIES } from "./reliability.js";

const records: Prediction[] = [
  { type: "choice", probabilities: [0.9, 0.1], gold: [1, 0] },
  { type: "choice", probabilities: [0.9, 0.1], gold: [0, 1] },
  { type: "noul", probabilities: [0.55, 0.45], gold: [1, 0] },
];
const panel = (name: string, rs: Prediction[] = records) => ({ name, bins: reliabilityBins(rs), ece: 0.1234 });

/** The paint of every shape (not text) in a piece of SVG: fill with its opacity, stroke with its dash. */
function paints(svg: string): string[] {
  return [...svg.matchAll(/<(rect|line)\b([^>]*)>/g)].flatMap(([, , attrs]) => {
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attrs)?.[1];
    const out: string[] = [];
    const fill = attr("fill");
    if (fill && fill !== "none") out.push(`fill ${fill} ${attr("fill-opacity") ?? 1}`);
    if (attr("stroke")) out.push(`stroke ${attr("stroke")} ${attr("stroke-dasharray") ?? "solid"}`);
    return out;
  });
}

const group = (svg: string, name: string) => new RegExp(`<g class="${name}">([\\s\\S]*?)</g>`).exec(svg)?.[1] ?? "";
const isGrey = (colour: string) => /^#([0-9a-f]{2})\1\1$/.test(colour);

describe("reliability diagram", () => {
  const svg = reliabilitySvg('model "a" <b> & c', [panel("only")]);

  it("is one standalone SVG document, sized by its viewBox alone, with the title escaped and the ECE shown", () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 '), svg.slice(0, 200)).toBe(true);
    expect(svg.slice(0, svg.indexOf(">")), "no fixed size: it scales to its window or its page").not.toMatch(/ (width|height)=/);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(svg).toContain("model &quot;a&quot; &lt;b&gt; &amp; c");
    expect(svg).not.toContain("<b>");
    expect(svg).toContain("only · ECE 0.1234 · 3 answers");
    expect(svg, "no scripts or outside resources").not.toMatch(/<script|href=/);
  });

  it("draws one group per non-empty bin, with its count written and its numbers in a tooltip, and nothing for empty bins", () => {
    const bins = [...svg.matchAll(/<g class="bin"><title>([^<]*)<\/title>([\s\S]*?)<\/g>/g)];
    expect(bins, svg).toHaveLength(2);
    expect(bins[0][1]).toContain("[0.53, 0.6): 1 answer (33.3%), mean confidence 0.550, share right 1.000");
    expect(bins[1][1]).toContain("2 answers (66.7%), mean confidence 0.900, share right 0.500");
    expect(bins.map((b) => /<text[^>]*>(\d+)<\/text>/.exec(b[2])?.[1])).toEqual(["1", "2"]);
  });

  it("labels both axes and ticks them from 0 to 1", () => {
    const axes = group(svg, "axes");
    const texts = [...axes.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    for (const tick of ["0", "0.2", "0.4", "0.6", "0.8", "1"])
      expect(
        texts.filter((t) => t === tick),
        texts.join("|"),
      ).toHaveLength(2);
    expect(texts).toContain("confidence (top probability), 15 bins");
    expect(texts).toContain("share right (bars), confidence (marks)");
    expect(texts).toContain("answers");
  });

  it("paints an under-confident bin's gap, drawn over its bar, in an opaque colour the legend names (no unnamed blend)", () => {
    const [under] = [...svg.matchAll(/<g class="bin"><title>[^<]*share right 1\.000<\/title>([\s\S]*?)<\/g>/g)];
    const band = paints(under[1])[1];
    expect(band, under[1]).toBe(`fill ${SERIES.under.fill} 1`);
    expect(paints(group(svg, "legend")), "named in the legend").toContain(band);
    expect(SERIES.under.label).toMatch(/under-confident/);
  });

  it("has a legend entry, drawn the same way, for every colour that is not the greys of axes and text", () => {
    const legend = paints(group(svg, "legend"));
    const outside = svg.replace(/<g class="(legend|axes)">[\s\S]*?<\/g>/g, "").replace(/<rect class="background"[^>]*>/, "");
    const used = new Set(paints(outside));
    expect(used.size, svg).toBeGreaterThanOrEqual(Object.keys(SERIES).length);
    expect(
      [...used].filter((p) => !legend.includes(p)),
      `legend: ${legend.join(", ")}`,
    ).toEqual([]);
    const legendTexts = [...group(svg, "legend").matchAll(/<text[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(legendTexts).toEqual(Object.values(SERIES).map((s) => escapeXml(s.label)));
    const ink = [...group(svg, "axes").matchAll(/(?:fill|stroke)="(#[0-9a-f]{6})"/g)].map((m) => m[1]);
    expect(
      ink.filter((c) => !isGrey(c)),
      "the axes use greys only, so no data colour hides there",
    ).toEqual([]);
    const textColours = [...svg.matchAll(/<text[^>]*fill="([^"]*)"/g)].map((m) => m[1]);
    expect(
      textColours.filter((c) => !isGrey(c)),
      "text is grey ink too",
    ).toEqual([]);
  });

  it("puts several panels side by side under one legend, each in its own slot of the viewBox", () => {
    const two = reliabilitySvg("before and after", [panel("uncalibrated"), panel("calibrated", records.slice(0, 1))]);
    const { width, height } = diagramSize(2);
    expect(two).toContain(`viewBox="0 0 ${width} ${height}"`);
    expect(width).toBe(2 * diagramSize(1).width);
    expect(two.match(/<g class="legend">/g)).toHaveLength(1);
    expect(two.match(/<g transform="translate\(\d+ 0\)">/g)).toEqual(['<g transform="translate(0 0)">', `<g transform="translate(${width / 2} 0)">`]);
    expect(two).toContain("calibrated · ECE 0.1234 · 1 answer");
  });

  it("writes only finite coordinates, inside the viewBox, also when every bin is empty", () => {
    for (const drawn of [svg, reliabilitySvg("empty", [{ name: "none", bins: reliabilityBins([]), ece: NaN }])]) {
      const { width, height } = diagramSize(1);
      const xs = [...drawn.matchAll(/ (?:x|x1|x2)="([^"]*)"/g)].map((m) => Number(m[1]));
      const ys = [...drawn.matchAll(/ (?:y|y1|y2)="([^"]*)"/g)].map((m) => Number(m[1]));
      expect(xs.length + ys.length).toBeGreaterThan(40);
      expect(
        xs.filter((v) => !(v >= 0 && v <= width)),
        drawn,
      ).toEqual([]);
      expect(
        ys.filter((v) => !(v >= 0 && v <= height)),
        drawn,
      ).toEqual([]);
    }
  });

  it("cuts a title too long for the canvas, keeping it whole in the tooltip", () => {
    const long = `${"very/long/path/".repeat(10)}data.jsonl`;
    const drawn = reliabilitySvg(long, [panel("p")]);
    expect(drawn).toContain(`<title>${long}</title>`);
    const shown = /font-weight="bold"[^>]*>([^<]*)</.exec(drawn)![1];
    expect(shown.endsWith("…") && shown.length < long.length, shown).toBe(true);
  });

  it("escapes the five XML special characters", () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});
