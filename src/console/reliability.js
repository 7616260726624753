import { el, plural, svg } from "./dom.js";

/**
 * A reliability diagram as inline SVG, built by DOM calls (the CSP allows no other kind), after
 * the eval report's (src/evaluation/reliability.ts): per confidence bin, a bar up to the share
 * right, a mark at the bin's mean confidence, a band for the gap between them (red: over-confident),
 * the diagonal where a calibrated head's marks would sit, and a strip counting the answers per
 * bin. Colours come from console.css, and the legend under it names each one.
 */

const PLOT = 200;
const LEFT = 40;
const TOP = 10;
const BOTTOM = TOP + PLOT;
const STRIP_TOP = BOTTOM + 24;
const STRIP_BASE = STRIP_TOP + 36;
const WIDTH = LEFT + PLOT + 12;
const HEIGHT = STRIP_BASE + 18;

const round = (v) => Math.round(v * 100) / 100;
const x = (v) => round(LEFT + v * PLOT);
const y = (v) => round(TOP + (1 - v) * PLOT);
const f3 = (v) => v.toFixed(3);

const LEGEND = [
  ["rel-right", "share right (bar)"],
  ["rel-over", "gap: over-confident"],
  ["rel-under", "gap: under-confident"],
  ["rel-confidence", "mean confidence (mark)"],
  ["rel-diagonal", "perfect calibration"],
  ["rel-count", "answers per bin"],
];

/** `bins` as the report has them ({lower, upper, count, confidence, accuracy}); `title` names the diagram for screen readers. */
export function reliabilityDiagram({ bins, title, ece, testId }) {
  const answers = bins.reduce((sum, bin) => sum + bin.count, 0);
  const most = Math.max(1, ...bins.map((bin) => bin.count));
  const label = `${title}: ${plural(answers, "answer")} in ${bins.length} bins${ece === null || ece === undefined ? "" : `, ECE ${f3(ece)}`}`;
  const chart = svg(
    "svg",
    { className: "reliability-plot", attrs: { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": label, "data-testid": testId } },
    svg("title", {}, label),
    ...axes(),
    ...bins.filter((bin) => bin.count > 0).map((bin) => binShapes(bin, answers, most)),
    svg("line", { className: "rel-diagonal", attrs: { x1: x(0), y1: y(0), x2: x(1), y2: y(1) } }),
  );
  const legend = el(
    "ul",
    { className: "reliability-legend" },
    ...LEGEND.map(([kind, text]) => el("li", {}, el("span", { className: `swatch ${kind}`, attrs: { "aria-hidden": "true" } }), text)),
  );
  return el("figure", { className: "reliability" }, el("figcaption", {}, title, ece === null || ece === undefined ? "" : ` · ECE ${f3(ece)}`), chart, legend);
}

function axes() {
  const parts = [svg("rect", { className: "rel-frame", attrs: { x: x(0), y: y(1), width: PLOT, height: PLOT } })];
  for (let i = 0; i <= 10; i += 2) {
    const v = i / 10;
    parts.push(
      svg("line", { className: "rel-grid", attrs: { x1: x(0), y1: y(v), x2: x(1), y2: y(v) } }),
      svg("text", { className: "rel-tick", attrs: { x: x(v), y: BOTTOM + 12, "text-anchor": "middle" } }, String(v)),
      svg("text", { className: "rel-tick", attrs: { x: x(0) - 4, y: y(v) + 3, "text-anchor": "end" } }, String(v)),
    );
  }
  parts.push(
    svg("text", { className: "rel-tick", attrs: { x: (x(0) + x(1)) / 2, y: HEIGHT - 2, "text-anchor": "middle" } }, "confidence (top probability)"),
    svg("text", { className: "rel-tick", attrs: { transform: `translate(10 ${(TOP + BOTTOM) / 2}) rotate(-90)`, "text-anchor": "middle" } }, "share right"),
    svg("line", { className: "rel-frame", attrs: { x1: x(0), y1: STRIP_BASE, x2: x(1), y2: STRIP_BASE } }),
  );
  return parts;
}

function binShapes(bin, answers, most) {
  const left = x(bin.lower) + 1;
  const width = round((bin.upper - bin.lower) * PLOT - 2);
  const strip = round((bin.count / most) * (STRIP_BASE - STRIP_TOP - 10));
  const over = bin.confidence > bin.accuracy;
  const tip =
    `[${bin.lower}, ${bin.upper}): ${plural(bin.count, "answer")} (${((100 * bin.count) / answers).toFixed(1)}%), ` +
    `mean confidence ${f3(bin.confidence)}, share right ${f3(bin.accuracy)}`;
  return svg(
    "g",
    { className: "rel-bin", attrs: { "data-count": bin.count } },
    svg("title", {}, tip),
    svg("rect", { className: "rel-right", attrs: { x: left, y: y(bin.accuracy), width, height: round(y(0) - y(bin.accuracy)) } }),
    svg("rect", {
      className: over ? "rel-over" : "rel-under",
      attrs: { x: left, y: y(Math.max(bin.confidence, bin.accuracy)), width, height: round(Math.abs(y(bin.confidence) - y(bin.accuracy))) },
    }),
    svg("line", { className: "rel-confidence", attrs: { x1: left, y1: y(bin.confidence), x2: round(left + width), y2: y(bin.confidence) } }),
    svg("rect", { className: "rel-count", attrs: { x: left, y: STRIP_BASE - strip, width, height: strip } }),
    svg("text", { className: "rel-tick", attrs: { x: round(left + width / 2), y: STRIP_BASE - strip - 2, "text-anchor": "middle" } }, String(bin.count)),
  );
}
