#!/usr/bin/env bash
# `judge bench` on the real test models through the whole service (HTTP, keys, billing, engine),
# with the raw ceiling, and the economy of asking 6 questions in one request against asking them
# in 6 requests of one question (a new state every request, concurrency 1).
#   [JUDGE_THREADS=n] scripts/bench-real-models.sh [requests=12] [model names…]   (default: both models;
#   threads: all cores, for the server and the ceiling alike)
# Prints each bench table and a summary line per model on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-12}; shift || true
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(smollm2-135m-instruct gemma3-270m)
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }
threads=${JUDGE_THREADS:-$(node -e 'console.log(Math.max(1, require("os").availableParallelism()))')}
db="$work/bench.db"
scripts/bench-key.sh "$db" >"$work/key"
for name in "${names[@]}"; do
  model=$(scripts/real-models.sh "$name")
  p=$(port)
  JUDGE_DB="$db" JUDGE_PORT=$p JUDGE_MODEL="$model" JUDGE_THREADS=$threads JUDGE_REQUEST_TIMEOUT_MS=600000 JUDGE_LOG_LEVEL=warn node bin/judge.js serve 2>"$work/$name.log" &
  server=$!
  until curl -fs "http://127.0.0.1:$p/health" >/dev/null; do sleep 1; done
  for q in 1 6; do
    echo "=== $name: --questions $q" >&2
    node bin/judge.js bench --url "http://127.0.0.1:$p" --key-file "$work/key" --model "$model" --threads "$threads" \
      --state-tokens 300 --questions $q --options 4 --concurrency 1 --requests "$requests" --no-reuse --json >"$work/$name-$q.json"
  done
  node -e '
    const fs = require("fs");
    const [one, six] = [1, 6].map((q) => JSON.parse(fs.readFileSync(`${process.argv[1]}-${q}.json`)));
    const phase = (r) => r.phases[0];
    const row = (q, r) => {
      const f = phase(r);
      return `${q} question(s)/request: ${f.meanInputTokens.toFixed(1)} input tokens/request, p50 ${f.latencyMs.p50.toFixed(0)} ms, ` +
        `${f.questionsPerSecond.toFixed(2)} questions/s, ${f.inputTokensPerSecond.toFixed(0)} input tokens/s = ${f.ratioToCeiling?.toFixed(2)} × ceiling (${f.ceilingTokensPerSecond?.toFixed(0)} tokens/s)`;
    };
    const [a, b] = [phase(one), phase(six)];
    console.log(`${process.argv[2]}:\n  ${row(1, one)}\n  ${row(6, six)}\n  economy of 6 in one request: ${(b.questionsPerSecond / a.questionsPerSecond).toFixed(2)}× questions/s, ` +
      `${((6 * a.meanInputTokens) / b.meanInputTokens).toFixed(2)}× fewer input tokens per question`);
  ' "$work/$name" "$name"
  kill $server; wait $server 2>/dev/null || true
done
