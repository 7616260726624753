#!/usr/bin/env bash
# How long `judge --help` takes to start, by the road a user takes to it, in one or more
# checkouts (each with its own `npm ci`), interleaved so that a busy moment falls on all alike.
# Prints the median of N runs (default 9) of each, in milliseconds, beside two floors: node doing
# nothing and npx running another package's bin (semver's, from the same node_modules/.bin).
#   scripts/cli-startup.sh [checkout ...]        (default: this one)
set -euo pipefail
runs=${RUNS:-9}
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$(cd "$(dirname "$0")/.." && pwd)")
roads=("node -e 0" "node bin/judge.js --help" "npx --offline semver --help" "npx --offline judge --help")
results=$(mktemp)
trap 'rm -f "$results"' EXIT

for dir in "${dirs[@]}"; do (cd "$dir" && node bin/judge.js --help >/dev/null); done # the bundle, made once
for ((i = 0; i < runs; i++)); do
  for dir in "${dirs[@]}"; do
    for road in "${roads[@]}"; do
      start=$(date +%s%N)
      (cd "$dir" && $road >/dev/null 2>&1)
      echo "$dir|$road|$((($(date +%s%N) - start) / 1000000))" >>"$results"
    done
  done
done

node - "$results" "${dirs[@]}" <<'JS'
const [file, ...dirs] = process.argv.slice(2);
const rows = require("node:fs").readFileSync(file, "utf8").trim().split("\n").map((line) => line.split("|"));
const roads = [...new Set(rows.map(([, road]) => road))];
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log(`| Command | ${dirs.join(" | ")} |`);
console.log(`|---|${dirs.map(() => "---:").join("|")}|`);
for (const road of roads) {
  const cells = dirs.map((dir) => `${median(rows.filter(([d, r]) => d === dir && r === road).map(([, , ms]) => Number(ms)))} ms`);
  console.log(`| \`${road}\` | ${cells.join(" | ")} |`);
}
console.log(`\nmedian of ${rows.length / roads.length / dirs.length} runs each; ${require("node:os").cpus()[0].model.trim()}, ${require("node:os").cpus().length} cores, node ${process.version}`);
JS
