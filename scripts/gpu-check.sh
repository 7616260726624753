#!/usr/bin/env bash
# One check of the llama-server path on whatever this machine has, printing one summary:
#  - with nvcc and an NVIDIA GPU: builds a CUDA llama-server and llama-bench from the llama.cpp
#    source bundled in node-llama-cpp (-DGGML_CUDA=ON, CUDA_ARCH default 90, FlashAttention
#    kernels off: ~4 minutes on 16 cores; cuBLAS from the toolkit or an installed nvidia-cublas
#    wheel), and serves with -ngl 99; without them: the CPU llama-server of build-llama-server.sh;
#  - writes the 0.5B and 1.5B fixtures (models/, kept), or the tiny one with --tiny;
#  - llama-bench's raw prompt reading (-p 512, -fa 0), where llama-bench is built;
#  - for each model and each JUDGE_EXACTNESS mode: starts llama-server (-np 8, -fa off,
#    --cache-ram 0) and the service on it, reads the probe's figure from /health (or why it
#    refused), runs `judge bench` at each concurrency, and compares the answers with the
#    in-process CPU engine's on a fixed request set (max/mean |Δp|, argmax flips with their gaps).
#   scripts/gpu-check.sh            # full run (GPU if present): concurrency 1, 8, 32
#   scripts/gpu-check.sh --tiny     # the tiny fixture on CPU, a few requests (the test suite runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
tiny=0; [ "${1:-}" = "--tiny" ] && tiny=1
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }
json() { node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{const v=JSON.parse(t);console.log(eval(process.argv[1]))})' "$1"; }

gpu=0
if [ $tiny = 0 ] && command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
cpu_bin=$(scripts/build-llama-server.sh)
if [ $gpu = 1 ]; then
  src=$(cd "$(dirname "$cpu_bin")/../.." && pwd)
  build="$src/build-cuda"
  cublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null || true)
  if [ -n "$cublas" ]; then
    export LIBRARY_PATH="$cublas/lib:${LIBRARY_PATH:-}" LD_LIBRARY_PATH="$cublas/lib:${LD_LIBRARY_PATH:-}" CPATH="$cublas/include:${CPATH:-}"
  fi
  if [ ! -x "$build/bin/llama-server" ] || [ ! -x "$build/bin/llama-bench" ]; then
    cmake -S "$src" -B "$build" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DGGML_CUDA_FA=OFF \
      -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
      -DLLAMA_BUILD_TOOLS=ON -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { tail -30 "$work/cmake.log"; exit 1; }
    cmake --build "$build" --target llama-server llama-bench -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
  fi
  bin="$build/bin/llama-server"; bench_bin="$build/bin/llama-bench"; offload=(-ngl 99)
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
else
  bin=$cpu_bin; bench_bin="$(dirname "$cpu_bin")/llama-bench"; offload=()
  card="CPU ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
fi
threads=$(node -e 'console.log(Math.max(1, require("os").availableParallelism()))')

if [ $tiny = 1 ]; then
  npx judge fixture --preset tiny --out "$work/tiny.gguf" >/dev/null
  models=("tiny=$work/tiny.gguf"); concurrency=(1 2); requests=3; compare=3; slots=2; state=60
else
  mkdir -p models
  for preset in qwen2.5-0.5b qwen2.5-1.5b; do
    npx judge fixture --preset "$preset" --weights Q4_0 --out "models/fixture-$preset-q4_0.gguf" --if-missing >/dev/null
  done
  models=("0.5B=models/fixture-qwen2.5-0.5b-q4_0.gguf" "1.5B=models/fixture-qwen2.5-1.5b-q4_0.gguf")
  concurrency=(1 8 32); requests=64; compare=31; slots=8; state=300
fi

# A service (judge serve) with its own SQLite database, a funded account and a key file; sets
# served_port and served_pid (not a subshell: the process must stay this shell's child).
serve() { # name, extra env…
  local name=$1; shift
  local db="$work/$name.db"
  served_port=$(port)
  node bin/judge.js plans create --name bench --rpm 1000000 --allowance 0 --price 0.05 --create --db "$db" >/dev/null
  local acct
  acct=$(node bin/judge.js accounts create --name bench --plan bench --json --db "$db" | json 'v.id')
  node bin/judge.js balance top-up --account "$acct" --amount 100000 --db "$db" >/dev/null
  node bin/judge.js keys create --account "$acct" --json --db "$db" 2>/dev/null | json 'v.key' >"$work/$name.key"
  env JUDGE_DB="$db" JUDGE_PORT="$served_port" JUDGE_LOG_LEVEL=warn JUDGE_REQUEST_TIMEOUT_MS=600000 "$@" node bin/judge.js serve >"$work/$name.log" 2>&1 &
  served_pid=$!
  pids+=($served_pid)
}
# Waits until /health answers 200 (echo ok) or the engine failed (echo its detail).
await_health() {
  local p=$1
  for _ in $(seq 600); do
    local body; body=$(curl -s "http://127.0.0.1:$p/health" || true)
    if echo "$body" | grep -q '"status":"ok"'; then echo ok; return; fi
    if echo "$body" | grep -q '"status":"failed"'; then echo "$body" | json 'v.error'; return; fi
    sleep 1
  done
  echo "no answer from /health in 600 s"
}

summary=("gpu-check on $card, $(date -u +%F)")
for entry in "${models[@]}"; do
  label=${entry%%=*}; model=$(realpath "${entry#*=}")
  if [ -x "$bench_bin" ] && [ $tiny = 0 ]; then
    raw=$("$bench_bin" -m "$model" -p 512 -n 0 -fa 0 "${offload[@]}" -r 3 -o json 2>/dev/null | json 'v[0].avg_ts.toFixed(0)')
    summary+=("$label: llama-bench -p 512 -fa 0: $raw tokens/s")
  fi
  serve "ref-$label" JUDGE_MODEL="$model" JUDGE_GPU=off JUDGE_SLOTS=1 JUDGE_THREADS="$threads"
  ref_port=$served_port
  ref_state=$(await_health "$ref_port")
  for mode in strict tolerant; do
    ls_port=$(port)
    "$bin" -m "$model" --host 127.0.0.1 --port "$ls_port" -np "$slots" -c $((slots * 4096)) -fa off --cache-ram 0 \
      --threads "$threads" --no-warmup "${offload[@]}" >"$work/llama-server-$label-$mode.log" 2>&1 &
    ls_pid=$!; pids+=($ls_pid)
    serve "$label-$mode" JUDGE_ENGINE=llama-server JUDGE_ENGINE_URL="http://127.0.0.1:$ls_port" \
      JUDGE_ENGINE_TIMEOUT_MS=120000 JUDGE_EXACTNESS="$mode"
    svc_port=$served_port; svc_pid=$served_pid
    state_now=$(await_health "$svc_port")
    if [ "$state_now" != ok ]; then
      summary+=("$label $mode: refused at start-up: $state_now")
    else
      measured=$(curl -s "http://127.0.0.1:$svc_port/health" | json 'v.engine.exactness ? v.engine.exactness.measured : "n/a"')
      line="$label $mode: probe max |Δp| $measured"
      for c in "${concurrency[@]}"; do
        report=$(node bin/judge.js bench --url "http://127.0.0.1:$svc_port" --key-file "$work/$label-$mode.key" --json \
          --state-tokens "$state" --questions 3 --concurrency "$c" --requests "$requests" --no-reuse 2>/dev/null)
        line+="; c=$c: $(echo "$report" | json 'const p=v.phases[0]; `${p.requestsPerSecond.toFixed(2)} req/s, p50 ${p.latencyMs ? p.latencyMs.p50.toFixed(0) : "-"} ms, ${p.inputTokensPerSecond.toFixed(0)} input tok/s, ${p.failed} failed`')"
      done
      if [ "$ref_state" = ok ]; then
        line+="; vs in-process CPU: $(npx tsx scripts/gpu-check-compare.ts "http://127.0.0.1:$ref_port" "$work/ref-$label.key" \
          "http://127.0.0.1:$svc_port" "$work/$label-$mode.key" "$compare" "$state")"
      fi
      summary+=("$line")
    fi
    kill "$svc_pid" "$ls_pid" 2>/dev/null || true
    wait "$svc_pid" "$ls_pid" 2>/dev/null || true
  done
done
printf '%s\n' "${summary[@]}"
