#!/usr/bin/env bash
# Side by side on the same weights (SmolLM2-135M-Instruct), through the same HTTP client (judge eval,
# judge bench), in one run: vLLM's native /v1/systemone, our service with vLLM as its engine
# (JUDGE_ENGINE=vllm, the same vLLM), and our service with the in-process engine on the GGUF the
# vLLM folder was converted from (docs/measurements/2026-12-02-vllm-side-by-side.md).
#   scripts/vllm-side-by-side.sh [OUT_DIR]     # default /tmp/vllm-side-by-side; prints the tables (~40 min here)
# Quality: judge eval on datasets/test.jsonl (accuracy, NLL, ECE, the prior beside them).
# Latency: judge bench at concurrency 1, 8 and 32, BENCH_REQUESTS per phase (default 32; 16 for the
# in-process engine, INPROCESS_REQUESTS, ~5x slower here), one warm-up request each; then native
# against ours on vLLM request by request (scripts/vllm-paired-latency.ts, PAIRS, default 20),
# which the machine's load cannot move between the two as it can between sequential benches.
# EVAL=0 skips the quality part (the answers are deterministic: the same figures every run).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/vllm-side-by-side}
requests=${BENCH_REQUESTS:-32}
inprocess_requests=${INPROCESS_REQUESTS:-16}
rm -rf "$out"
mkdir -p "$out"
folder=$(scripts/vllm.sh convert)
gguf=$(scripts/real-models.sh smollm2-135m-instruct)
vllm=$(scripts/vllm.sh serve side)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${KEEP_VLLM:-}" ] || scripts/vllm.sh stop side
}
trap cleanup EXIT

export JUDGE_DB="$out/judge.db"
npx judge plans create --name side --rpm 1000000 --allowance 100000000 --price 0.01 --create >/dev/null
acct=$(npx judge accounts create --name side --plan side --json | node -e 'process.stdin.on("data", (d) => console.log(JSON.parse(d).id))')
npx judge balance top-up --account "$acct" --amount 100000 >/dev/null
key=$(npx judge keys create --account "$acct" --json | node -e 'process.stdin.on("data", (d) => console.log(JSON.parse(d).key))')

serve() { # port, then environment assignments
  local port=$1
  shift
  env "$@" JUDGE_PORT="$port" JUDGE_REQUEST_TIMEOUT_MS=600000 npx judge serve >"$out/serve-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && return; sleep 1; done
  echo "vllm-side-by-side.sh: the server on $port did not become healthy ($out/serve-$port.log)" >&2
  exit 1
}
# The engine timeout is per read of vLLM: on a CPU vLLM, reads queue behind each other at
# concurrency 8 and outlast the default 10 s (measured: 59 of 64 requests failed).
serve 18191 JUDGE_ENGINE_TIMEOUT_MS=600000 JUDGE_ENGINE=vllm JUDGE_ENGINE_URL="$vllm" JUDGE_ENGINE_TOKENIZER_CONFIG="$folder/tokenizer_config.json"
serve 18192 JUDGE_MODEL="$gguf"

targets=("native $vllm $requests" "ours-vllm http://127.0.0.1:18191 $requests" "ours-in-process http://127.0.0.1:18192 $inprocess_requests")
for target in "${targets[@]}"; do
  [ "${EVAL:-1}" = 1 ] || break
  set -- $target
  echo "vllm-side-by-side.sh: $1: judge eval" >&2
  npx judge eval datasets/test.jsonl --url "$2" --key "$key" --concurrency 4 --out "$out/eval-$1" >"$out/eval-$1.log" 2>&1
done
for target in "${targets[@]}"; do
  set -- $target
  echo "vllm-side-by-side.sh: $1: judge bench" >&2
  npx judge bench --url "$2" --key "$key" --json --concurrency 1,8,32 --requests "$3" --warmup 1 --no-reuse --allow-rate-limit >"$out/bench-$1.json" 2>"$out/bench-$1.log"
done

[ "${EVAL:-1}" != 1 ] || npx tsx scripts/quality-table.ts "$out/eval-native" "$out/eval-ours-vllm" "$out/eval-ours-in-process" | tee "$out/quality.md"
node - "$out" <<'JS' | tee "$out/latency.md"
const fs = require("node:fs");
const out = process.argv[2];
const names = ["native", "ours-vllm", "ours-in-process"];
const reports = Object.fromEntries(names.map((n) => [n, JSON.parse(fs.readFileSync(`${out}/bench-${n}.json`, "utf8"))]));
console.log("| Target | Concurrency | Requests/s | p50 ms | p95 ms | Input tokens/request | Requests/s ÷ native |");
console.log("|---|---|---|---|---|---|---|");
for (const n of names) {
  for (const phase of reports[n].phases) {
    const native = reports.native.phases.find((p) => p.concurrency === phase.concurrency && p.sameState === phase.sameState);
    console.log(
      `| ${n} | ${phase.concurrency} | ${phase.requestsPerSecond.toFixed(2)} | ${phase.latencyMs?.p50.toFixed(0)} | ${phase.latencyMs?.p95.toFixed(0)} | ${phase.meanInputTokens?.toFixed(0)} | ${(phase.requestsPerSecond / native.requestsPerSecond).toFixed(2)} |`,
    );
  }
}
JS
printf '%s\n' "$key" >"$out/key"
npx tsx scripts/vllm-paired-latency.ts --native "$vllm" --model smollm2-135m-instruct --ours http://127.0.0.1:18191 --key-file "$out/key" --pairs "${PAIRS:-20}" | tee "$out/paired.md"
