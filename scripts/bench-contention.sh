#!/usr/bin/env bash
# What llama.cpp's threads cost when another process takes part of the CPU. Serves one GGUF
# through `judge serve` in process (JUDGE_THREADS 1 and the machine's cores) and through the
# llama-server of scripts/build-llama-server.sh (--threads 1 and the cores, --poll 50, its
# default, and --poll 0), and runs the same sequential `judge bench` requests against each, first
# on a quiet machine, then beside a load of about 1.3 cores (one busy loop, one at 30%).
# Prints one line per configuration: p50 and p95 quiet and loaded, and loaded/quiet.
#   scripts/bench-contention.sh <model.gguf> [requests=20]
set -euo pipefail
cd "$(dirname "$0")/.."
model=$(realpath "$1"); requests=${2:-20}
bin=${LLAMA_SERVER_BIN:-$(scripts/build-llama-server.sh)}
cores=$(node -e 'console.log(Math.max(1, require("os").availableParallelism()))')
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }
db="$work/bench.db"
scripts/bench-key.sh "$db" >"$work/key"

# A load of ~1.3 cores: one loop always busy, one busy 30 ms in every 100.
load_start() {
  node -e 'for (;;) {}' & echo $! >"$work/load1"
  node -e 'const f = () => { const t = Date.now(); while (Date.now() - t < 30) {} setTimeout(f, 70); }; f()' & echo $! >"$work/load2"
}
load_stop() { kill "$(cat "$work/load1")" "$(cat "$work/load2")" 2>/dev/null || true; wait "$(cat "$work/load1")" "$(cat "$work/load2")" 2>/dev/null || true; }

# p50 and p95 (ms) of one sequential phase against the judge server on port $1.
measure() {
  node bin/judge.js bench --url "http://127.0.0.1:$1" --key-file "$work/key" --concurrency 1 --requests "$requests" \
    --no-reuse --json 2>/dev/null | node -e '
      const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
      const phase = (r.phases ?? r.results ?? [r])[0];
      const l = phase.latencyMs ?? phase.latency;
      console.log(`${Math.round(l.p50)} ${Math.round(l.p95)}`);'
}

# Starts `judge serve` with the given environment, runs both phases, prints the row, stops it.
run() { # label, then VAR=value… for judge serve
  local label=$1; shift
  local p; p=$(port)
  env JUDGE_DB="$db" JUDGE_PORT="$p" JUDGE_MODEL="$model" JUDGE_SLOTS=1 JUDGE_LOG_LEVEL=warn \
    JUDGE_REQUEST_TIMEOUT_MS=600000 JUDGE_ENGINE_TIMEOUT_MS=600000 "$@" node bin/judge.js serve 2>"$work/serve.log" &
  local server=$!
  until curl -fs "http://127.0.0.1:$p/health" >/dev/null; do sleep 0.5; done
  read -r q50 q95 < <(measure "$p")
  load_start; read -r l50 l95 < <(measure "$p"); load_stop
  kill "$server"; wait "$server" 2>/dev/null || true
  printf '| %s | %s | %s | %s | %s | %s× |\n' "$label" "$q50" "$q95" "$l50" "$l95" "$(node -e "console.log(($l50 / $q50).toFixed(2))")"
}

remote() { # threads, poll
  local lp; lp=$(port)
  "$bin" -m "$model" --host 127.0.0.1 --port "$lp" -np 1 -c 8192 -fa off --cache-ram 0 --no-warmup \
    --threads "$1" --threads-batch "$1" --poll "$2" >"$work/llama-server.log" 2>&1 &
  local ls=$!
  until curl -fs "http://127.0.0.1:$lp/health" >/dev/null; do sleep 0.5; done
  run "llama-server, --threads $1 --poll $2" JUDGE_ENGINE=llama-server JUDGE_ENGINE_URL="http://127.0.0.1:$lp"
  kill "$ls"; wait "$ls" 2>/dev/null || true
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $cores cores; $(basename "$model"); $requests sequential requests a phase (judge bench defaults: 300-token state, 3 questions)"
echo "| engine, threads | quiet p50 ms | quiet p95 ms | loaded p50 ms | loaded p95 ms | loaded/quiet p50 |"
echo "|---|---|---|---|---|---|"
for t in 1 "$cores"; do run "in process, JUDGE_THREADS=$t" JUDGE_THREADS="$t"; done
for t in 1 "$cores"; do for poll in 50 0; do remote "$t" "$poll"; done; done
