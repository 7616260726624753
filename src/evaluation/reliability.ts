import type { ReliabilityBin } from "./metrics.js";
import { plural } from "./report.js";

/**
 * Reliability diagrams as standalone SVG: for each confidence bin, a bar up to the share of
 * answers that were right, a mark at the bin's mean confidence, a red band for the gap between
 * them, and the diagonal where a calibrated judge's marks would sit. A strip underneath counts
 * the answers per bin (a large gap in a nearly empty bin matters little). Several panels (before
 * and after calibration) share one SVG and one legend. The legend names every colour drawn, so
 * the file reads on its own; no scripts or external resources, so it opens anywhere. There is
 * no width or height: opened alone it scales to the window, and a page sizes it with CSS.
 */

export interface ReliabilityPanel {
  /** Shown above the panel, e.g. "uncalibrated". */
  name: string;
  bins: readonly ReliabilityBin[];
  ece: number;
}

/** Colours that carry meaning: each one has a legend entry. */
export const SERIES = {
  right: { fill: "#4a7ab7", label: "share right (bar)" },
  gap: { fill: "#d9534f", opacity: 0.45, label: "gap: over-confident" },
  // Drawn over the bar: a translucent red there would blend into a colour no legend names, so
  // this one is opaque and named (the blend of the two, so it still reads as "red over blue").
  under: { fill: "#8a6988", label: "gap: under-confident" },
  confidence: { stroke: "#000000", width: 2, label: "mean confidence (mark)" },
  diagonal: { stroke: "#555555", width: 1.5, dash: "5 3", label: "perfect calibration" },
  answers: { fill: "#a9b4c2", label: "answers per bin" },
} as const;

/** Greys for the frame, grid and text; they draw the axes, not data. */
const INK = { text: "#333333", frame: "#999999", grid: "#e4e4e4", background: "#ffffff" };

const PLOT = 300;
const LEFT = 58;
const PANEL_WIDTH = LEFT + PLOT + 18;
const PLOT_TOP = 48;
const PLOT_BOTTOM = PLOT_TOP + PLOT;
const STRIP_TOP = PLOT_BOTTOM + 26;
const STRIP_BASE = STRIP_TOP + 56;
const AXIS_LABEL_Y = STRIP_BASE + 17;
const LEGEND_TOP = AXIS_LABEL_Y + 18;
const LEGEND_ROW = 17;
const LEGEND_COLUMN = 170;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const f = (v: number) => (Math.round(v * 100) / 100).toString();
const round = (v: number) => Math.round(v * 100) / 100;
const x = (v: number) => round(LEFT + v * PLOT);
const y = (v: number) => round(PLOT_TOP + (1 - v) * PLOT);
const answersIn = (bins: readonly ReliabilityBin[]) => bins.reduce((sum, b) => sum + b.count, 0);

/** Long titles (a dataset path) are cut to the width rather than drawn off the canvas. */
function fit(text: string, width: number, fontSize: number): string {
  const max = Math.floor(width / (fontSize * 0.62));
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** The size of a diagram of `panels` panels, in SVG units (the viewBox). */
export function diagramSize(panels: number): { width: number; height: number } {
  const legendRows = Math.ceil(Object.keys(SERIES).length / Math.max(2, Math.floor((panels * PANEL_WIDTH - 16) / LEGEND_COLUMN)));
  return { width: panels * PANEL_WIDTH, height: LEGEND_TOP + legendRows * LEGEND_ROW + 2 };
}

export function reliabilitySvg(title: string, panels: readonly ReliabilityPanel[]): string {
  const { width, height } = diagramSize(panels.length);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" role="img">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect class="background" width="${width}" height="${height}" fill="${INK.background}"/>`,
    `<text x="8" y="18" font-size="14" font-weight="bold" fill="${INK.text}">${escapeXml(fit(title, width - 16, 14))}</text>`,
    ...panels.map((panel, i) => `<g transform="translate(${i * PANEL_WIDTH} 0)">\n${panelShapes(panel)}\n</g>`),
    legend(width),
    `</svg>`,
  ].join("\n");
}

function panelShapes(panel: ReliabilityPanel): string {
  const total = answersIn(panel.bins);
  const maxCount = Math.max(1, ...panel.bins.map((b) => b.count));
  const heading = `${panel.name} · ECE ${Number.isFinite(panel.ece) ? panel.ece.toFixed(4) : "-"} · ${plural(total, "answer")}`;
  return [
    `<text x="${LEFT}" y="38" fill="${INK.text}">${escapeXml(fit(heading, PANEL_WIDTH - LEFT - 4, 11))}</text>`,
    axes(),
    ...panel.bins.filter((b) => b.count > 0).map((bin) => binShapes(bin, total, maxCount)),
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="${SERIES.diagonal.stroke}" stroke-width="${SERIES.diagonal.width}" stroke-dasharray="${SERIES.diagonal.dash}"/>`,
  ].join("\n");
}

/** Frame, grid, ticks and axis labels: ink only, in one group (the tests tell ink from data by it). */
function axes(): string {
  const t = (attrs: string, text: string) => `<text ${attrs} fill="${INK.text}">${text}</text>`;
  const parts = [`<g class="axes">`, `<rect x="${x(0)}" y="${y(1)}" width="${PLOT}" height="${PLOT}" fill="none" stroke="${INK.frame}"/>`];
  for (let i = 0; i <= 10; i++) {
    const v = i / 10;
    const labelled = i % 2 === 0;
    parts.push(
      `<line x1="${x(0)}" y1="${y(v)}" x2="${x(1)}" y2="${y(v)}" stroke="${INK.grid}"/>`,
      `<line x1="${x(v)}" y1="${y(0)}" x2="${x(v)}" y2="${y(0) + (labelled ? 5 : 3)}" stroke="${INK.frame}"/>`,
      `<line x1="${x(0) - (labelled ? 5 : 3)}" y1="${y(v)}" x2="${x(0)}" y2="${y(v)}" stroke="${INK.frame}"/>`,
    );
    if (labelled) parts.push(t(`x="${x(v)}" y="${y(0) + 16}" text-anchor="middle"`, f(v)), t(`x="${x(0) - 7}" y="${y(v) + 4}" text-anchor="end"`, f(v)));
  }
  parts.push(
    t(`transform="translate(16 ${(PLOT_TOP + PLOT_BOTTOM) / 2}) rotate(-90)" text-anchor="middle"`, "share right (bars), confidence (marks)"),
    `<line x1="${x(0)}" y1="${STRIP_BASE}" x2="${x(1)}" y2="${STRIP_BASE}" stroke="${INK.frame}"/>`,
    `<line x1="${x(0)}" y1="${STRIP_TOP}" x2="${x(0)}" y2="${STRIP_BASE}" stroke="${INK.frame}"/>`,
    t(`x="${x(0) - 7}" y="${STRIP_BASE}" text-anchor="end"`, "answers"),
    t(`x="${(x(0) + x(1)) / 2}" y="${AXIS_LABEL_Y}" text-anchor="middle"`, "confidence (top probability), 15 bins"),
    `</g>`,
  );
  return parts.join("\n");
}

/** 1234 would not fit a bin's width at this size; 1.2k does. */
const shortCount = (n: number) => (n < 1000 ? String(n) : n < 10_000 ? `${(n / 1000).toFixed(1)}k` : `${Math.round(n / 1000)}k`);

function binShapes(bin: ReliabilityBin, total: number, maxCount: number): string {
  const conf = bin.meanConfidence!;
  const right = bin.meanCorrectness!;
  const left = x(bin.lower) + 1;
  const width = round((bin.upper - bin.lower) * PLOT - 2);
  const tip =
    `[${f(bin.lower)}, ${f(bin.upper)}): ${plural(bin.count, "answer")} (${((100 * bin.count) / total).toFixed(1)}%), ` +
    `mean confidence ${conf.toFixed(3)}, share right ${right.toFixed(3)}`;
  const stripHeight = round((bin.count / maxCount) * (STRIP_BASE - STRIP_TOP - 13));
  const { right: bar, confidence, answers } = SERIES;
  const band = conf > right ? `fill="${SERIES.gap.fill}" fill-opacity="${SERIES.gap.opacity}"` : `fill="${SERIES.under.fill}"`;
  return [
    `<g class="bin"><title>${escapeXml(tip)}</title>`,
    `<rect x="${left}" y="${y(right)}" width="${width}" height="${round(y(0) - y(right))}" fill="${bar.fill}"/>`,
    `<rect x="${left}" y="${y(Math.max(conf, right))}" width="${width}" height="${round(Math.abs(y(conf) - y(right)))}" ${band}/>`,
    `<line x1="${left}" y1="${y(conf)}" x2="${round(left + width)}" y2="${y(conf)}" stroke="${confidence.stroke}" stroke-width="${confidence.width}"/>`,
    `<rect x="${left}" y="${STRIP_BASE - stripHeight}" width="${width}" height="${stripHeight}" fill="${answers.fill}"/>`,
    `<text x="${round(left + width / 2)}" y="${round(STRIP_BASE - stripHeight - 3)}" text-anchor="middle" font-size="9" fill="${INK.text}">${shortCount(bin.count)}</text>`,
    `</g>`,
  ].join("");
}

/** One swatch per series, drawn exactly as the series is (colour, opacity, dash). */
function legend(width: number): string {
  const columns = Math.max(2, Math.floor((width - 16) / LEGEND_COLUMN));
  const entries = Object.values(SERIES).map((series, i) => {
    const left = 12 + (i % columns) * LEGEND_COLUMN;
    const top = LEGEND_TOP + Math.floor(i / columns) * LEGEND_ROW;
    const swatch =
      "fill" in series
        ? `<rect x="${left}" y="${top - 9}" width="14" height="10" fill="${series.fill}"${"opacity" in series ? ` fill-opacity="${series.opacity}"` : ""}/>`
        : `<line x1="${left}" y1="${top - 4}" x2="${left + 14}" y2="${top - 4}" stroke="${series.stroke}" stroke-width="${series.width}"${"dash" in series ? ` stroke-dasharray="${series.dash}"` : ""}/>`;
    return `${swatch}<text x="${left + 20}" y="${top}" fill="${INK.text}">${escapeXml(series.label)}</text>`;
  });
  return [`<g class="legend">`, ...entries, `</g>`].join("\n");
}
