import { readFileSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { importsOf, isTest, LAYER_OF, MAY_IMPORT, type Layer } from "./layers.js";

/**
 * The import graph of src/, for what src/layering.test.ts checks besides the layers: no import
 * cycles, and no layer handing another layer's values on through `export … from`. Every edge
 * counts for cycles, `import type` and `import()` included: a type-only cycle still ties the
 * files' meaning together (neither can be read, moved or split alone), and a dynamic one still
 * makes each module need the other.
 */

export interface Edge {
  to: string;
  line: number;
  typeOnly: boolean;
  dynamic: boolean;
}

/** Cycles kept on purpose, each as the sorted files of its strongly connected part, relative to src/, with why. */
export const ALLOWED_CYCLES: readonly { files: readonly string[]; why: string }[] = [];

/**
 * Values a layer hands on from another on purpose, by file (relative to src/) and name, with why;
 * any other value re-exported there is still reported.
 */
export const ALLOWED_REEXPORTS: readonly { file: string; names: readonly string[]; why: string }[] = [];

/** The file a relative specifier names: `./x.js` is x.ts (or x.js), a folder its index. */
function resolveFile(from: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  const target = resolve(dirname(from), specifier);
  const candidates = [target, target.replace(/\.js$/, ".ts"), target.replace(/\.mjs$/, ".mts"), `${target}.ts`, `${target}/index.ts`];
  return candidates.find((candidate) => known.has(candidate));
}

export function importGraph(files: readonly string[]): Map<string, Edge[]> {
  const known = new Set(files);
  const graph = new Map<string, Edge[]>();
  for (const file of files) {
    const edges: Edge[] = [];
    for (const { specifier, line, typeOnly, dynamic } of importsOf(file, readFileSync(file, "utf8"))) {
      if (!specifier.startsWith(".")) continue;
      const to = resolveFile(file, specifier, known);
      if (to !== undefined && to !== file) edges.push({ to, line, typeOnly: typeOnly ?? false, dynamic: dynamic ?? false });
    }
    graph.set(file, edges);
  }
  return graph;
}

/** The strongly connected parts of more than one file (Tarjan's algorithm; recursive, as src/'s import chains are short). */
function tangles(graph: ReadonlyMap<string, Edge[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const { to } of graph.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== file);
    if (part.length > 1) found.push(part.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return found;
}

/** A shortest cycle through the part's first file, as the edges walked. */
function shortestCycle(graph: ReadonlyMap<string, Edge[]>, part: readonly string[]): { from: string; edge: Edge }[] {
  const inside = new Set(part);
  const start = part[0];
  const via = new Map<string, { from: string; edge: Edge }>();
  const queue = [start];
  search: while (queue.length > 0) {
    const file = queue.shift()!;
    for (const edge of graph.get(file) ?? []) {
      if (!inside.has(edge.to) || via.has(edge.to)) continue;
      via.set(edge.to, { from: file, edge });
      if (edge.to === start) break search;
      queue.push(edge.to);
    }
  }
  const path: { from: string; edge: Edge }[] = [];
  for (let at = start; ; ) {
    const step = via.get(at)!;
    path.unshift(step);
    at = step.from;
    if (at === start) return path;
  }
}

/** Every import cycle among `files` not in ALLOWED_CYCLES, one line each, as a path: `a.ts:3 → b.ts:7 (type) → a.ts`. */
export function checkCycles(src: string, files: readonly string[], allowed = ALLOWED_CYCLES): string[] {
  const graph = importGraph(files);
  const name = (file: string) => relative(src, file).split(sep).join("/");
  const kept = new Set(allowed.map((cycle) => [...cycle.files].sort().join(" ")));
  return tangles(graph)
    .filter((part) => !kept.has(part.map(name).join(" ")))
    .map((part) => {
      const path = shortestCycle(graph, part);
      const steps = path.map(({ from, edge }) => `${name(from)}:${edge.line}${edge.typeOnly ? " (type)" : edge.dynamic ? " (dynamic)" : ""}`);
      const rest = part.length > path.length ? ` (${part.length} files tangled: ${part.map(name).join(", ")})` : "";
      return `import cycle: ${steps.join(" → ")} → ${name(path[0].from)}${rest}`;
    });
}

const layerOf = (src: string, file: string): Layer | undefined => {
  const top = relative(src, file).split(sep)[0];
  return LAYER_OF[top] ?? LAYER_OF[top.replace(/\.js$/, ".ts")];
};

/** The layers that may import `layer` but not `target`: those a re-export from `target` in `layer` would let through. */
function reachedAround(layer: Layer, target: Layer): Layer[] {
  return (Object.entries(MAY_IMPORT) as [Layer, readonly Layer[]][])
    .filter(([above, may]) => above !== target && may.includes(layer) && !may.includes(target))
    .map(([above]) => above);
}

/**
 * `export { value } from` / `export * from` another layer's module when a layer that may import
 * this one may not import that one: a barrel that lets it reach values it may not import. Types may be handed on (records are the
 * contract between layers); values are imported where they are, or defined by a module of the
 * layer's own.
 */
export function checkReexports(src: string, files: readonly string[], allowed = ALLOWED_REEXPORTS): string[] {
  const known = new Set(files);
  const violations: string[] = [];
  for (const file of files) {
    if (isTest(file) || layerOf(src, file) === "testing") continue;
    const text = readFileSync(file, "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier || !ts.isStringLiteralLike(statement.moduleSpecifier)) continue;
      if (statement.isTypeOnly || !statement.moduleSpecifier.text.startsWith(".")) continue;
      const target = resolveFile(file, statement.moduleSpecifier.text, known);
      const [layer, targetLayer] = [layerOf(src, file), target && layerOf(src, target)];
      if (!layer || !targetLayer || layer === targetLayer) continue;
      const around = reachedAround(layer, targetLayer);
      if (around.length === 0) continue;
      const clause = statement.exportClause;
      const kept = new Set(allowed.filter((entry) => entry.file === relative(src, file).split(sep).join("/")).flatMap((entry) => entry.names));
      const values =
        clause && ts.isNamedExports(clause) ? clause.elements.filter((e) => !e.isTypeOnly && !kept.has(e.name.text)).map((e) => e.name.text) : ["*"];
      if (values.length === 0) continue;
      const line = source.getLineAndCharacterOfPosition(statement.getStart()).line + 1;
      violations.push(
        `${relative(src, file)}:${line} re-exports values of ${targetLayer} (${values.join(", ")}) to ${around.join(", ")}, which may not import it: define them where both may import them`,
      );
    }
  }
  return violations;
}
