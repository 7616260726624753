import type { ReliabilityBin } from "./metrics.js";

/**
 * A reliability diagram as a standalone SVG: for each confidence bin, a bar up to the share of
 * answers that were right, against the diagonal where a calibrated judge's bars would end. A red
 * band marks the gap to the bin's mean confidence; a strip underneath shows how many answers
 * fall in each bin (a large gap in a nearly empty bin matters little). Hovering a bar shows its
 * numbers. No scripts or external resources, so the file opens anywhere.
 */

const SIZE = 300;
const LEFT = 60;
const TOP = 36;
const STRIP = 44;
/** Bottom edge of the answers-per-bin strip, below the tick labels. */
const STRIP_BASE = TOP + SIZE + 28 + STRIP;
const WIDTH = LEFT + SIZE + 16;
const HEIGHT = STRIP_BASE + 28;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const f = (x: number) => (Math.round(x * 100) / 100).toString();
const x = (v: number) => LEFT + v * SIZE;
const y = (v: number) => TOP + (1 - v) * SIZE;

export function reliabilitySvg(title: string, bins: readonly ReliabilityBin[], ece: number): string {
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  const maxCount = Math.max(1, ...bins.map((b) => b.count));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${LEFT}" y="16" font-size="13" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${LEFT}" y="30">ECE ${ece.toFixed(4)} · ${total} answers · 15 bins</text>`,
    ...grid(),
  ];
  for (const bin of bins) if (bin.count > 0) parts.push(binShapes(bin, total, maxCount));
  parts.push(
    `<line x1="${x(0)}" y1="${STRIP_BASE}" x2="${x(1)}" y2="${STRIP_BASE}" stroke="#999"/>`,
    `<text x="${x(0) - 6}" y="${STRIP_BASE - 4}" text-anchor="end">answers</text>`,
    `<text x="${x(0) - 6}" y="${STRIP_BASE - STRIP + 8}" text-anchor="end" fill="#666">${maxCount}</text>`,
  );
  parts.push(
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#555" stroke-dasharray="4 3"/>`,
    `<text x="${LEFT + SIZE / 2}" y="${STRIP_BASE + 18}" text-anchor="middle">confidence (top probability)</text>`,
    `<text transform="translate(20 ${TOP + SIZE / 2}) rotate(-90)" text-anchor="middle">share right</text>`,
    `</svg>`,
  );
  return parts.join("\n");
}

function grid(): string[] {
  const lines: string[] = [`<rect x="${x(0)}" y="${y(1)}" width="${SIZE}" height="${SIZE}" fill="none" stroke="#999"/>`];
  for (let i = 0; i <= 5; i++) {
    const v = i / 5;
    lines.push(
      `<line x1="${x(v)}" y1="${y(0)}" x2="${x(v)}" y2="${y(0) + 4}" stroke="#999"/>`,
      `<text x="${x(v)}" y="${y(0) + 15}" text-anchor="middle">${f(v)}</text>`,
      `<line x1="${x(0) - 4}" y1="${y(v)}" x2="${x(1)}" y2="${y(v)}" stroke="#eee"/>`,
      `<text x="${x(0) - 6}" y="${y(v) + 4}" text-anchor="end">${f(v)}</text>`,
    );
  }
  return lines;
}

function binShapes(bin: ReliabilityBin, total: number, maxCount: number): string {
  const conf = bin.meanConfidence!;
  const right = bin.meanCorrectness!;
  const left = x(bin.lower) + 1;
  const width = (bin.upper - bin.lower) * SIZE - 2;
  const tip =
    `[${f(bin.lower)}, ${f(bin.upper)}): ${bin.count} answers (${((100 * bin.count) / total).toFixed(1)}%), ` +
    `mean confidence ${conf.toFixed(3)}, share right ${right.toFixed(3)}`;
  const stripHeight = (bin.count / maxCount) * (STRIP - 4);
  return [
    `<g><title>${escapeXml(tip)}</title>`,
    `<rect x="${left}" y="${y(right)}" width="${width}" height="${y(0) - y(right)}" fill="#4a7ab7"/>`,
    `<rect x="${left}" y="${y(Math.max(conf, right))}" width="${width}" height="${Math.abs(y(conf) - y(right))}" fill="#d9534f" fill-opacity="0.45"/>`,
    `<rect x="${left}" y="${STRIP_BASE - stripHeight}" width="${width}" height="${stripHeight}" fill="#888"/>`,
    `</g>`,
  ].join("");
}
