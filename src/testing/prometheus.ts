/**
 * A reader of the Prometheus text exposition (version 0.0.4), for tests and the soak command:
 * every sample by its name and labels. prom-client writes the format but does not read it.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`line ${i + 1} is not a sample: ${line}`);
    samples.push({ name: match[1], labels: parseLabels(match[2] ?? "", line), value: parseValue(match[3], line) });
  }
  return samples;
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let end = 0;
  for (let match = LABEL.exec(text); match; match = LABEL.exec(text)) {
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    end = LABEL.lastIndex;
  }
  if (end !== text.length) throw new Error(`malformed labels in: ${line}`);
  return labels;
}

/** As Prometheus reads them (Go's ParseFloat): NaN and Inf in any case; prom-client writes "Nan". */
function parseValue(text: string, line: string): number {
  const special: Record<string, number> = { "+inf": Infinity, inf: Infinity, "-inf": -Infinity, nan: Number.NaN };
  const lower = text.toLowerCase();
  if (lower in special) return special[lower];
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a number in: ${line}`);
  return value;
}

/** The value of the one sample named `name` whose labels include `labels`; 0 if none (a counter not yet touched). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}; name more labels`);
  return found[0]?.value ?? 0;
}
