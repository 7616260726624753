#!/usr/bin/env bash
# Task heads (issue 34) on the real test models, through the whole service (HTTP, keys, billing,
# engine): for each model a server of its own (one inference thread: the two models run side by
# side, one core each), a key on an account with €1000 at €0.05 per million input tokens
# (scripts/bench-key.sh), then scripts/task-heads-table.ts: per size and seed a task from a subset
# of dev, a fit per head kind, the test file asked with x_task, the plain readout and the
# latency ratio in one interleaved run. Prints the tables on stdout (the page:
# docs/measurements/2026-12-02-task-heads-grid.md); progress on stderr.
#   [SIZES=25,50,100,200,all] [SEEDS=3] [HEADS=level1,level2] [TEST=datasets/test.jsonl]
#   [DEV=datasets/dev.jsonl] [PLAIN_PASS=yes|no] [READ_CACHE_MB=512] [OUT=dir] [JUDGE_THREADS=1] scripts/measure-task-heads.sh [model names…]
# (default: both models, in parallel; the whole grid took about 30 minutes on 2 cores with the
# read cache, the page says how). READ_CACHE_MB (default 512; the server's JUDGE_READ_CACHE_MB) reads each
# example once for the whole grid, so the grid takes the time of one pass over dev and test;
# the figures are the same, the times are not the model's: READ_CACHE_MB=0 for fit times and
# the latency ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(smollm2-135m-instruct gemma3-270m)
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"
pids=(); trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }

measure() {
  local name=$1 model p server
  model=$(scripts/real-models.sh "$name")
  rm -f "$out/$name.db"*
  scripts/bench-key.sh "$out/$name.db" >"$out/$name.key" 2>/dev/null
  p=$(port)
  JUDGE_DB="$out/$name.db" JUDGE_PORT=$p JUDGE_MODEL="$model" JUDGE_THREADS=${JUDGE_THREADS:-1} JUDGE_TASKS_PER_ACCOUNT=1000 JUDGE_READ_CACHE_MB=${READ_CACHE_MB:-512} \
    JUDGE_REQUEST_TIMEOUT_MS=600000 JUDGE_LOG_LEVEL=info node bin/judge.js serve 2>"$out/$name.log" >&2 &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  until curl -fs "http://127.0.0.1:$p/health" >/dev/null; do
    kill -0 $server 2>/dev/null || { echo "$name: the server stopped, see $out/$name.log" >&2; return 1; }
    sleep 1
  done
  echo "$name: $model, CPU library $(grep -o 'libggml-cpu[^/]*\.so' /proc/$server/maps | sort -u | xargs || echo unknown)" >&2
  npx tsx scripts/task-heads-table.ts measure --url "http://127.0.0.1:$p" --key-file "$out/$name.key" --out "$out/$name.json" \
    --sizes "${SIZES:-25,50,100,200,all}" --seeds "${SEEDS:-3}" --heads "${HEADS:-level1,level2}" \
    --dev "${DEV:-datasets/dev.jsonl}" --test "${TEST:-datasets/test.jsonl}" --plain-pass "${PLAIN_PASS:-yes}" --read-cache-mb "${READ_CACHE_MB:-512}" 2> >(sed -u "s/^/$name: /" >&2)
  kill $server; wait $server 2>/dev/null || true
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; outputs in $out" >&2
for name in "${names[@]}"; do
  measure "$name" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
pids=()
npx tsx scripts/task-heads-table.ts table $(for name in "${names[@]}"; do [ -f "$out/$name.json" ] && echo "$out/$name.json"; done)
exit $status
