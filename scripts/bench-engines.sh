#!/usr/bin/env bash
# The same requests through the in-process engine and through a real llama-server, on one GGUF:
# starts llama-server and two `judge serve` instances (JUDGE_ENGINE=llama and llama-server),
# then runs `judge bench` against each in turn, alternating, and prints both reports.
#   scripts/bench-engines.sh <model.gguf> [rounds=2] [extra judge bench options…]
set -euo pipefail
cd "$(dirname "$0")/.."
model=$(realpath "$1"); rounds=${2:-2}; shift $(( $# >= 2 ? 2 : 1 ))
# LLAMA_SERVER_BIN: another llama-server build to compare against the in-process engine.
bin=${LLAMA_SERVER_BIN:-$(scripts/build-llama-server.sh)}
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port() { node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }
ls_port=$(port); a_port=$(port); b_port=$(port)
threads=$(node -e 'console.log(Math.max(1, require("os").availableParallelism()))')
"$bin" -m "$model" --host 127.0.0.1 --port "$ls_port" -np 1 -c 8192 -fa off --cache-ram 0 --threads "$threads" --no-warmup >"$work/llama-server.log" 2>&1 &
for side in a b; do
  scripts/bench-key.sh "$work/$side.db" >"$work/$side.key"
done
JUDGE_DB="$work/a.db" JUDGE_PORT=$a_port JUDGE_MODEL="$model" JUDGE_SLOTS=1 JUDGE_LOG_LEVEL=warn node bin/judge.js serve 2>"$work/a.log" &
JUDGE_DB="$work/b.db" JUDGE_PORT=$b_port JUDGE_ENGINE=llama-server JUDGE_ENGINE_URL=http://127.0.0.1:$ls_port \
  JUDGE_ENGINE_TIMEOUT_MS=120000 JUDGE_REQUEST_TIMEOUT_MS=600000 JUDGE_LOG_LEVEL=warn node bin/judge.js serve 2>"$work/b.log" &
for p in $a_port $b_port; do
  until curl -fs "http://127.0.0.1:$p/health" >/dev/null; do sleep 1; done
done
for round in $(seq "$rounds"); do
  for side in a b; do
    p=$([ $side = a ] && echo $a_port || echo $b_port)
    name=$([ $side = a ] && echo "in-process (JUDGE_ENGINE=llama)" || echo "llama-server (JUDGE_ENGINE=llama-server)")
    echo "=== round $round: $name"
    node bin/judge.js bench --url "http://127.0.0.1:$p" --key-file "$work/$side.key" "$@"
  done
done
