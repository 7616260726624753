import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/**
 * The house's layers, as data, and the checker src/layering.test.ts runs on the tree (and
 * src/layering.injected.test.ts on copies with violations put in). Every import is read from
 * the syntax tree: relative ones, packages (node: modules included), re-exports, dynamic
 * import() and require(). Tests (`*.test.ts`, `*test-helpers.ts`) and testing/ may import
 * anything; nothing else may import testing/.
 */

/** The layer of every top-level file and folder of src/; one not listed is itself a violation. */
export const LAYER_OF: Record<string, Layer> = {
  "main.ts": "root",
  "composition.ts": "root",
  cli: "cli",
  evaluation: "tools",
  bench: "tools",
  clients: "tools",
  "app.ts": "edge",
  "errors.ts": "edge",
  routes: "edge",
  http: "edge",
  views: "views",
  services: "services",
  judgment: "judgment",
  engine: "engine",
  store: "store",
  limits: "limits",
  money: "money",
  gguf: "gguf",
  config: "base",
  "logger.ts": "base",
  "urls.ts": "base",
  "error-message.ts": "base",
  "random-bytes.ts": "base",
  "record-limits.ts": "base",
  "record-errors.ts": "base",
  console: "browser",
  compat: "tests",
  testing: "testing",
};

export type Layer =
  | "root"
  | "cli"
  | "tools"
  | "edge"
  | "views"
  | "services"
  | "judgment"
  | "engine"
  | "store"
  | "limits"
  | "money"
  | "gguf"
  | "base"
  | "browser"
  | "tests"
  | "testing";

/**
 * What each layer's production files may import of src/, besides themselves. Downward only:
 * the composition root (composition.ts, and main.ts, the process around it) wires everything;
 * the CLI and the edge call services and share views; tools (evaluation, bench, clients) are
 * clients of the HTTP API and never reach the store or the services; judgment/ and money/ are pure.
 */
export const MAY_IMPORT: Record<Exclude<Layer, "tests" | "testing">, readonly Layer[]> = {
  root: ["cli", "edge", "views", "services", "judgment", "engine", "store", "limits", "money", "gguf", "base"],
  cli: ["root", "tools", "views", "services", "judgment", "money", "gguf", "base"],
  tools: ["views", "judgment", "money", "gguf", "base"],
  edge: ["views", "services", "judgment", "engine", "limits", "money", "base"],
  views: ["services", "judgment", "money"],
  services: ["judgment", "engine", "store", "limits", "money", "base"],
  engine: ["judgment", "base"],
  store: ["money", "base"],
  limits: ["store", "base"],
  gguf: ["engine", "judgment"],
  judgment: [],
  money: [],
  base: ["judgment"],
  browser: [],
};

/** The one production file that reads the environment; every other file receives a Config. */
export const ENVIRONMENT_READER = "config/environment.ts";

/** Packages and the layers that may import them; a package not listed is for tests only. Node's own modules are open to all but the pure layers. */
export const PACKAGE_LAYERS: Record<string, readonly Layer[]> = {
  zod: ["judgment", "edge", "views", "services", "engine", "store", "base", "tools", "cli"],
  hono: ["edge", "root"],
  "@hono/zod-openapi": ["edge", "views"],
  "@hono/node-server": ["edge", "root"],
  commander: ["cli"],
  "better-sqlite3": ["store"],
  pg: ["store"],
  kysely: ["store"],
  ioredis: ["limits"],
  "node-llama-cpp": ["engine", "gguf", "tools"],
  "prom-client": ["services"],
  pino: ["base"],
  typescript: [],
};

/** Layers whose files may import nothing outside themselves but these packages (no node: modules). */
const PURE: Partial<Record<Layer, readonly string[]>> = { judgment: ["zod"], money: [], browser: [] };

export const isTest = (path: string) => /(\.test|test-helpers)\.[cm]?[jt]s$/.test(path);
const SOURCE = /\.(ts|js|mjs)$/;
const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

export interface Import {
  specifier: string;
  line: number;
  /** Erased at compile time (`import type`, `export type … from`, every name `type`, `import("…").T`): no load, but still a dependency. */
  typeOnly?: boolean;
  /** `import("…")` at run time: loaded when called, not when this module is. */
  dynamic?: boolean;
}

/** Every module a file names: import/export from, import(), require(), import x = require(). */
export function importsOf(path: string, text: string): Import[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined, kind: { typeOnly?: boolean; dynamic?: boolean } = {}) => {
    if (specifier && ts.isStringLiteralLike(specifier)) {
      found.push({ specifier: specifier.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, ...kind });
    } else if (specifier) {
      // import(variable): whatever it loads is unknowable, so it is not allowed outside tests.
      found.push({ specifier: `<computed: ${specifier.getText(source)}>`, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, { typeOnly: isTypeOnly(node) });
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(callee) && callee.text === "require";
      if (isImport || isRequire) add(node, node.arguments[0], { dynamic: isImport });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal, { typeOnly: true });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
  }
  const clause = node.importClause;
  if (!clause) return false; // `import "./x.js"`: loaded for its effects
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return !clause.name && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

const PROCESS_MODULES = new Set(["process", "node:process"]);

/**
 * Reads of the environment: `process.env`, `process["env"]`, `globalThis.process.env`, `env`
 * imported from node:process, `const { env } = process`, and `.env` of a name bound to
 * node:process however it was imported. Hono's `c.env` (the server's bindings) is not one.
 */
export function environmentReads(path: string, text: string): number[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const processNames = new Set(["process"]);
  const lines: number[] = [];
  const at = (node: ts.Node) => lines.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
  const strip = (node: ts.Expression): ts.Expression =>
    ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node) || ts.isSatisfiesExpression(node)
      ? strip(node.expression)
      : node;
  const isProcess = (node: ts.Expression): boolean => {
    const e = strip(node);
    if (ts.isIdentifier(e)) return processNames.has(e.text);
    if (ts.isPropertyAccessExpression(e)) return e.name.text === "process";
    if (ts.isElementAccessExpression(e)) return ts.isStringLiteralLike(e.argumentExpression) && e.argumentExpression.text === "process";
    return false;
  };
  const nameOf = (node: ts.PropertyAccessExpression | ts.ElementAccessExpression) =>
    ts.isPropertyAccessExpression(node) ? node.name.text : ts.isStringLiteralLike(node.argumentExpression) ? node.argumentExpression.text : undefined;
  // First the names node:process is bound to in this file.
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteralLike(statement.moduleSpecifier)) continue;
    if (!PROCESS_MODULES.has(statement.moduleSpecifier.text)) continue;
    const clause = statement.importClause;
    if (clause?.name) processNames.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) processNames.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) if ((element.propertyName ?? element.name).text === "env") at(element);
    }
  }
  const visit = (node: ts.Node) => {
    if ((ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) && isProcess(node.expression)) {
      const name = nameOf(node);
      // A computed key on process could be "env": as suspect as the read itself.
      if (name === "env" || (ts.isElementAccessExpression(node) && name === undefined)) at(node);
    }
    if (ts.isVariableDeclaration(node) && node.initializer && ts.isObjectBindingPattern(node.name) && isProcess(node.initializer)) {
      for (const element of node.name.elements) {
        const key = element.propertyName ?? element.name;
        if (ts.isIdentifier(key) && key.text === "env") at(element);
        if (ts.isComputedPropertyName(key)) at(element);
      }
    }
    // `const p = process` makes p a name of process too.
    if (ts.isVariableDeclaration(node) && node.initializer && ts.isIdentifier(node.name) && isProcess(node.initializer)) {
      processNames.add(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

/** The top-level entry of src/ a path lies in: "engine", "errors.ts". */
const topOf = (src: string, path: string) => relative(src, path).split(sep)[0];

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Every violation in the tree under `src` (or in `files` of it), one line each; none is a pass. */
export function checkLayers(src: string, files: readonly string[] = sourceFiles(src)): string[] {
  const violations: string[] = [];
  for (const file of files) {
    const where = relative(src, file);
    const top = topOf(src, file);
    const layer = LAYER_OF[top] ?? LAYER_OF[top.replace(/\.js$/, ".ts")];
    const text = readFileSync(file, "utf8");
    if (layer === undefined) {
      if (!isTest(file)) violations.push(`${where}: ${top} has no layer (add it to LAYER_OF in src/testing/layers.ts)`);
      continue;
    }
    if (isTest(file) || layer === "testing" || layer === "tests") continue;
    for (const line of environmentReads(file, text)) {
      if (where.split(sep).join("/") !== ENVIRONMENT_READER) violations.push(`${where}:${line} reads the environment (only ${ENVIRONMENT_READER} may)`);
    }
    const allowed = new Set<Layer>([layer, ...MAY_IMPORT[layer]]);
    for (const { specifier, line } of importsOf(file, text)) {
      const at = `${where}:${line} (${layer}) imports ${specifier}`;
      if (specifier.startsWith("<computed")) {
        violations.push(`${at}: a computed specifier, which no rule can check`);
      } else if (specifier.startsWith(".")) {
        const target = resolve(dirname(file), specifier);
        const targetTop = topOf(src, target);
        if (targetTop.startsWith("..")) {
          violations.push(`${at}: outside src/`);
          continue;
        }
        const targetLayer = LAYER_OF[targetTop] ?? LAYER_OF[targetTop.replace(/\.js$/, ".ts")];
        if (targetLayer === "testing" || isTest(target)) violations.push(`${at}: only tests import testing/ and test helpers`);
        else if (targetLayer === undefined) violations.push(`${at}: ${targetTop} has no layer`);
        else if (!allowed.has(targetLayer)) violations.push(`${at}: ${layer} may not import ${targetLayer}`);
      } else if (BUILTINS.has(specifier) || specifier.startsWith("node:")) {
        if (PURE[layer]) violations.push(`${at}: ${layer} imports nothing but ${PURE[layer]!.join(", ") || "itself"}`);
      } else {
        const name = packageName(specifier);
        const pure: readonly string[] | undefined = PURE[layer];
        if (pure && !pure.includes(name)) violations.push(`${at}: ${layer} imports nothing but ${pure.join(", ") || "itself"}`);
        else if (!pure && !(PACKAGE_LAYERS[name] ?? []).includes(layer)) {
          violations.push(`${at}: ${name} is for ${(PACKAGE_LAYERS[name] ?? ["tests"]).join(", ")} only`);
        }
      }
    }
  }
  return violations;
}
