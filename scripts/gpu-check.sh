#!/usr/bin/env bash
# One check of the llama-server path on whatever this machine has, printing one summary:
#  - with an NVIDIA GPU: a CUDA llama-server and llama-bench, prebuilt in $LLAMA_CUDA_DIR (see
#    scripts/gpu-pack.sh) or built here with nvcc from the llama.cpp source bundled in
#    node-llama-cpp (or $LLAMA_SRC): -DGGML_CUDA=ON, CUDA_ARCH default 90, FlashAttention kernels
#    off (~4 minutes on 16 cores), cuBLAS from the toolkit or an installed nvidia-cublas wheel;
#    served with -ngl 99. Without one: the CPU llama-server of build-llama-server.sh;
#  - writes the 0.5B and 1.5B fixtures (models/, kept), or the tiny one with --tiny;
#  - llama-bench's raw prompt reading (-p 512, -fa 0), where llama-bench is built;
#  - for each model and each JUDGE_EXACTNESS mode: starts llama-server (-np 8, -fa off,
#    --cache-ram 0) and the service on it, reads the probe's figure from /health (or why it
#    refused), runs `judge bench` at each concurrency, and compares the answers with the
#    in-process CPU engine's on a fixed request set (max/mean |Δp|, argmax flips with their gaps).
#    On a GPU both modes run with JUDGE_EXACTNESS_BOUND=1, so that throughput is measured even
#    where the default bound would refuse; each line says what the default would decide.
#   scripts/gpu-check.sh            # full run (GPU if present): concurrency 1, 8, 32
#   scripts/gpu-check.sh --tiny     # the tiny fixture on CPU, a few requests (the test suite runs this)
# Options: --out DIR (summary.txt written line by line, and each bench and comparison as JSON),
# --deadline S (skip what would start after S seconds: a device lease is short).
set -euo pipefail
cd "$(dirname "$0")/.."
tiny=0; out=""; deadline=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tiny) tiny=1 ;;
    --out) out=$2; shift ;;
    --deadline) deadline=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
started=$SECONDS
work=$(mktemp -d)
[ -n "$out" ] && mkdir -p "$out" && : >"$out/summary.txt"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }
json() { node -e 'let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{const v=JSON.parse(t);console.log(eval(process.argv[1]))})' "$1"; }
summary=()
# Each line is written as soon as it is known, and the raw files packed beside it (a device
# machine returns a few files, and whatever was written when its time ran out).
mkdir -p "$work/keep"
say() {
  summary+=("$1"); echo "$1" >&2
  [ -z "$out" ] || { echo "$1" >>"$out/summary.txt"; tar -C "$work/keep" -czf "$out/raw.tar.gz" .; }
}
keep() { cp "$1" "$work/keep/$2" 2>/dev/null || true; }
late() { [ "$deadline" -gt 0 ] && [ $((SECONDS - started)) -ge "$deadline" ]; }

# The fixtures are written while llama.cpp builds (one core each).
fixtures=()
if [ $tiny = 0 ]; then
  mkdir -p models
  # Where no llama.cpp bundle is at hand (a device machine): the Qwen2 vocabulary file itself.
  vocab=(); [ -n "${GPU_CHECK_VOCAB:-}" ] && vocab=(--vocab "$GPU_CHECK_VOCAB")
  for preset in qwen2.5-0.5b qwen2.5-1.5b; do
    node bin/judge.js fixture --preset "$preset" --weights Q4_0 "${vocab[@]}" --out "models/fixture-$preset-q4_0.gguf" --if-missing >/dev/null &
    fixtures+=($!)
  done
fi

gpu=0
if [ $tiny = 0 ] && nvidia-smi -L >/dev/null 2>&1; then
  if [ -n "${LLAMA_CUDA_DIR:-}" ] && "$LLAMA_CUDA_DIR/llama-server" --version >/dev/null 2>&1; then gpu=1
  elif command -v nvcc >/dev/null; then gpu=1
  else echo "an NVIDIA GPU but neither nvcc nor a working \$LLAMA_CUDA_DIR: measuring on CPU" >&2; fi
fi
if [ $gpu = 1 ]; then
  # cuBLAS from the toolkit, or else from the nvidia-cublas wheel (nvidia/cublas for CUDA 12,
  # nvidia/cu13 for 13); the runtime libraries from the same place as the headers.
  toolkit=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
  if [ -f "$toolkit/include/cublas_v2.h" ]; then
    export LD_LIBRARY_PATH="$toolkit/lib64:${LD_LIBRARY_PATH:-}"
  else
    wheels=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
    for dir in "$wheels/cublas" "$wheels/cu13"; do
      [ -d "$dir/lib" ] || continue
      export LD_LIBRARY_PATH="$dir/lib:${LD_LIBRARY_PATH:-}" LIBRARY_PATH="$dir/lib:${LIBRARY_PATH:-}" CPATH="$dir/include:${CPATH:-}"
    done
  fi
  if [ -n "${LLAMA_CUDA_DIR:-}" ] && "$LLAMA_CUDA_DIR/llama-server" --version >/dev/null 2>&1; then
    bin="$LLAMA_CUDA_DIR/llama-server"; bench_bin="$LLAMA_CUDA_DIR/llama-bench"
  else
    src=${LLAMA_SRC:-$(cd "$(dirname "$(scripts/build-llama-server.sh)")/../src" && pwd)}
    build="$src/build-cuda"
    if [ ! -x "$build/bin/llama-server" ] || [ ! -x "$build/bin/llama-bench" ]; then
      t0=$SECONDS
      generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
      cmake -S "$src" -B "$build" "${generator[@]}" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DGGML_CUDA_FA=OFF \
        -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { say "cmake failed: $(tail -30 "$work/cmake.log")"; exit 1; }
      cmake --build "$build" --target llama-server llama-bench -j"$(nproc)" >"$work/build.log" 2>&1 || { say "the CUDA build failed: $(tail -30 "$work/build.log")"; exit 1; }
      say "built the CUDA llama-server in $((SECONDS - t0)) s"
    fi
    bin="$build/bin/llama-server"; bench_bin="$build/bin/llama-bench"
  fi
  offload=(-ngl 99)
  card=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
  nvidia-smi >"$work/keep/nvidia-smi.txt" 2>&1 || true
else
  # LLAMA_BIN_DIR: a CPU llama-server built elsewhere (a dry run of the device script).
  cpu_bin=${LLAMA_BIN_DIR:+$LLAMA_BIN_DIR/llama-server}
  [ -n "$cpu_bin" ] || cpu_bin=$(scripts/build-llama-server.sh)
  bin=$cpu_bin; bench_bin="$(dirname "$cpu_bin")/llama-bench"; offload=()
  card="CPU ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
fi
# GPU_CHECK_THREADS: fewer CPU threads (the test suite, beside other tests: llama.cpp's threads spin waiting for each other on a busy machine).
threads=${GPU_CHECK_THREADS:-$(node -e 'console.log(Math.max(1, require("os").availableParallelism()))')}
say "gpu-check on $card, $(date -u +%F), $threads threads, llama.cpp $("$bin" --version 2>&1 | grep -m1 -o 'version: [^ ]*' || echo '?')"

if [ $tiny = 1 ]; then
  node bin/judge.js fixture --preset tiny --out "$work/tiny.gguf" >/dev/null
  models=("tiny=$work/tiny.gguf"); concurrency=(1 2); requests=3; compare=3; slots=2; state=60
else
  wait "${fixtures[@]}"
  say "fixtures ready $((SECONDS - started)) s after the start"
  models=("0.5B=models/fixture-qwen2.5-0.5b-q4_0.gguf" "1.5B=models/fixture-qwen2.5-1.5b-q4_0.gguf")
  # Smaller runs (a dry run of a device script on CPU) through the environment.
  read -r -a concurrency <<<"${GPU_CHECK_CONCURRENCY:-1 8 32}"
  requests=${GPU_CHECK_REQUESTS:-64}; compare=${GPU_CHECK_COMPARE:-31}; slots=8; state=300
fi
# On a GPU: measure past the probe, and say what the default bound would decide.
forced=(); [ $gpu = 1 ] && forced=(JUDGE_EXACTNESS_BOUND=1)
default_bound() { [ "$1" = strict ] && echo 1e-9 || echo 1e-3; }

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
  for _ in $(seq "${2:-600}"); do
    local body; body=$(curl -s "http://127.0.0.1:$p/health" || true)
    if echo "$body" | grep -q '"status":"ok"'; then echo ok; return; fi
    if echo "$body" | grep -q '"status":"failed"'; then echo "$body" | json 'v.error'; return; fi
    sleep 1
  done
  echo "no answer from /health in ${2:-600} s"
}

for entry in "${models[@]}"; do
  label=${entry%%=*}; model=$(realpath "${entry#*=}")
  if late; then say "$label: skipped (past the ${deadline} s deadline)"; continue; fi
  # The in-process CPU reference loads while llama-bench runs.
  serve "ref-$label" JUDGE_MODEL="$model" JUDGE_GPU=off JUDGE_SLOTS=1 JUDGE_THREADS="$threads"
  ref_port=$served_port; ref_pid=$served_pid
  raw=""
  if [ -x "$bench_bin" ] && [ $tiny = 0 ]; then
    "$bench_bin" -m "$model" -p 512 -n 0 -fa 0 "${offload[@]}" -r 3 -o json >"$work/llama-bench-$label.json" 2>"$work/llama-bench-$label.log" || true
    keep "$work/llama-bench-$label.json" "llama-bench-$label.json"
    raw=$(json 'v[0].avg_ts.toFixed(0)' <"$work/llama-bench-$label.json" 2>/dev/null || true)
    say "$label: llama-bench -p 512 -fa 0: ${raw:-failed} tokens/s"
  fi
  ref_state=$(await_health "$ref_port")
  [ "$ref_state" = ok ] || say "$label: the in-process CPU reference did not start: $ref_state"
  for mode in strict tolerant; do
    if late; then say "$label $mode: skipped (past the ${deadline} s deadline)"; continue; fi
    ls_port=$(port)
    "$bin" -m "$model" --host 127.0.0.1 --port "$ls_port" -np "$slots" -c $((slots * 4096)) -fa off --cache-ram 0 \
      --threads "$threads" --no-warmup "${offload[@]}" >"$work/llama-server-$label-$mode.log" 2>&1 &
    ls_pid=$!; pids+=($ls_pid)
    serve "$label-$mode" JUDGE_ENGINE=llama-server JUDGE_ENGINE_URL="http://127.0.0.1:$ls_port" \
      JUDGE_ENGINE_TIMEOUT_MS=120000 JUDGE_EXACTNESS="$mode" "${forced[@]}"
    svc_port=$served_port; svc_pid=$served_pid
    state_now=$(await_health "$svc_port" 180)
    tail -40 "$work/llama-server-$label-$mode.log" >"$work/keep/llama-server-$label-$mode.log" 2>/dev/null || true
    if [ "$state_now" != ok ]; then
      say "$label $mode: refused at start-up: $state_now"
      tail -5 "$work/llama-server-$label-$mode.log" >&2 || true
    else
      measured=$(curl -s "http://127.0.0.1:$svc_port/health" | json 'v.engine.exactness ? v.engine.exactness.measured : "n/a"')
      line="$label $mode: probe max |Δp| $measured"
      if [ $gpu = 1 ]; then
        line+=" ($(node -e 'console.log(Number(process.argv[1]) <= Number(process.argv[2]) ? "the default bound " + process.argv[2] + " accepts it" : "the default bound " + process.argv[2] + " would refuse it")' "$measured" "$(default_bound "$mode")"))"
      fi
      line+=";"
      for c in "${concurrency[@]}"; do
        # Strict runs one request at a time: beyond 8 concurrent requests there is nothing new to see.
        [ "$mode" = strict ] && [ "$c" -gt 8 ] && continue
        n=$(( requests > 4 * c ? requests : 4 * c ))
        timeout 120 node bin/judge.js bench --url "http://127.0.0.1:$svc_port" --key-file "$work/$label-$mode.key" --json \
          --state-tokens "$state" --questions 3 --concurrency "$c" --requests "$n" --no-reuse >"$work/bench.json" 2>/dev/null || true
        keep "$work/bench.json" "bench-$label-$mode-c$c.json"
        line+=" c=$c: $(json 'const p=v.phases[0]; `${p.requestsPerSecond.toFixed(2)} req/s, p50 ${p.latencyMs ? p.latencyMs.p50.toFixed(0) : "-"} ms, ${p.inputTokensPerSecond.toFixed(0)} input tok/s` + (process.argv[2] ? ` (${(p.inputTokensPerSecond / Number(process.argv[2])).toFixed(2)}× raw)` : "") + `, ${p.failed} failed`' "$raw" <"$work/bench.json" 2>/dev/null || echo "bench failed");"
      done
      if [ "$ref_state" = ok ]; then
        timeout 300 node --import tsx scripts/gpu-check-compare.ts "http://127.0.0.1:$ref_port" "$work/ref-$label.key" \
          "http://127.0.0.1:$svc_port" "$work/$label-$mode.key" "$compare" "$state" "$work/ref-$label.answers.json" >"$work/compare.json" 2>"$work/compare.log" || true
        keep "$work/compare.json" "compare-$label-$mode.json"
        line+=" vs in-process CPU: $(cat "$work/compare.json" 2>/dev/null || tail -3 "$work/compare.log")"
      fi
      say "$line"
    fi
    kill "$svc_pid" "$ls_pid" 2>/dev/null || true
    wait "$svc_pid" "$ls_pid" 2>/dev/null || true
    tail -60 "$work/llama-server-$label-$mode.log" >"$work/keep/llama-server-$label-$mode.log" 2>/dev/null || true
    tail -20 "$work/$label-$mode.log" >"$work/keep/service-$label-$mode.log" 2>/dev/null || true
  done
  kill "$ref_pid" 2>/dev/null || true
  wait "$ref_pid" 2>/dev/null || true
done
say "gpu-check took $((SECONDS - started)) s"
printf '%s\n' "${summary[@]}"
