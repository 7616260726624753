import { describe, expect, it } from "vitest";
import { reliabilityBins, type Prediction } from "./metrics.js";
import { escapeXml, reliabilitySvg } from "./reliability.js";

const records: Prediction[] = [
  { type: "choice", probabilities: [0.9, 0.1], gold: [1, 0] },
  { type: "choice", probabilities: [0.9, 0.1], gold: [0, 1] },
  { type: "noul", probabilities: [0.55, 0.45], gold: [1, 0] },
];

describe("reliability diagram", () => {
  const svg = reliabilitySvg('model "a" <b> & c', reliabilityBins(records), 0.1234);

  it("is one standalone SVG document with the title escaped and the ECE shown", () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'), svg.slice(0, 200)).toBe(true);
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(svg).toContain("model &quot;a&quot; &lt;b&gt; &amp; c");
    expect(svg).not.toContain("<b>");
    expect(svg).toContain("ECE 0.1234 · 3 answers · 15 bins");
    expect(svg, "no scripts or outside resources").not.toMatch(/<script|href=/);
  });

  it("draws one group per non-empty bin, with its numbers in a tooltip, and nothing for empty bins", () => {
    const groups = svg.match(/<g><title>[^<]*<\/title>/g) ?? [];
    expect(groups, svg).toHaveLength(2);
    expect(groups[0]).toContain("[0.53, 0.6): 1 answers (33.3%), mean confidence 0.550, share right 1.000");
    expect(groups[1]).toContain("2 answers (66.7%), mean confidence 0.900, share right 0.500");
  });

  it("writes only finite coordinates, also when every bin is empty", () => {
    for (const drawn of [svg, reliabilitySvg("empty", reliabilityBins([]), 0)]) {
      const numbers = [...drawn.matchAll(/ (?:x|y|x1|y1|x2|y2|width|height)="([^"]*)"/g)].map((m) => m[1]);
      expect(numbers.length).toBeGreaterThan(20);
      const bad = numbers.filter((n) => !Number.isFinite(Number(n)));
      expect(bad, drawn).toEqual([]);
    }
  });

  it("escapes the five XML special characters", () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});
