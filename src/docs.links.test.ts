import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every page is reachable and every reference resolves: the relative links of README.md and
 * docs/ (their #anchors included), the docs/… paths named in src/, scripts/ and bin/, and the
 * README "…" sections the code still names.
 */

const root = fileURLToPath(new URL("../", import.meta.url));

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

const pages = [join(root, "README.md"), ...filesUnder(join(root, "docs"), (p) => p.endsWith(".md"))];
const show = (path: string) => relative(root, path);

/** Markdown outside fenced code blocks and inline code, where a link is a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "``");
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(path: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = readFileSync(path, "utf8").replace(/^```[\s\S]*?^```/gm, "");
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe("the documentation's links", () => {
  it("finds the pages", () => {
    expect(pages.length).toBeGreaterThan(20);
  });

  it("resolve, each to an existing file and, with #anchor, to a heading of it", () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of prose(readFileSync(page, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [file, anchor] = target!.split("#") as [string, string | undefined];
        const path = file === "" ? page : resolve(dirname(page), file);
        if (!existsSync(path)) broken.push(`${show(page)}: ${target} (no such file)`);
        else if (anchor && path.endsWith(".md") && !anchorsOf(path).has(anchor)) broken.push(`${show(page)}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("reach every page under docs/ from README.md", () => {
    const reached = new Set<string>([join(root, "README.md")]);
    const queue = [join(root, "README.md")];
    while (queue.length > 0) {
      const page = queue.pop()!;
      for (const [, target] of prose(readFileSync(page, "utf8")).matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const path = resolve(dirname(page), target!);
        if (path.endsWith(".md") && existsSync(path) && !reached.has(path)) {
          reached.add(path);
          queue.push(path);
        }
      }
    }
    expect(pages.filter((page) => !reached.has(page)).map(show)).toEqual([]);
  });
});

describe("references to the documentation in the code", () => {
  const code = ["src", "scripts", "bin"].flatMap((dir) =>
    filesUnder(join(root, dir), (p) => /\.(ts|js|mjs|cjs|sh|py)$/.test(p) && !p.endsWith("docs.links.test.ts")),
  );
  code.push(...[".ci/run", "vitest.config.ts"].map((p) => join(root, p)).filter(existsSync));

  it("name docs/ paths that exist", () => {
    const missing: string[] = [];
    for (const file of code) {
      for (const [path] of readFileSync(file, "utf8").matchAll(/\bdocs\/[\w./-]*\w\.md/g)) {
        if (!existsSync(join(root, path))) missing.push(`${show(file)}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('name README "…" sections that README.md has', () => {
    const headings = [...readFileSync(join(root, "README.md"), "utf8").matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim());
    const missing: string[] = [];
    for (const file of code) {
      for (const [ref, section] of readFileSync(file, "utf8").matchAll(/README(?:'s)?,? \(?"([^"]+)"/g)) {
        if (!headings.some((heading) => heading.includes(section!))) missing.push(`${show(file)}: ${ref}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
