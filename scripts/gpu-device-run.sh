#!/usr/bin/env bash
# On a GPU machine without Node or network, in a copy of the repository carrying .gpu/ (made by
# scripts/gpu-pack.sh): unpacks Node, node_modules, the vocabulary and the llama.cpp builds
# into /tmp, then runs scripts/gpu-check.sh writing its figures under $OUT (or /tmp/gpu-out).
#   DEADLINE=420 scripts/gpu-device-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
env=${GPU_ENV:-/tmp/gpu-env}
mkdir -p "$env/bin"
[ -x "$env/bin/node" ] || { xz -dc .gpu/node.xz >"$env/bin/node"; chmod +x "$env/bin/node"; }
[ -d node_modules ] || tar -xJf .gpu/node_modules.tar.xz
if [ -f .gpu/llama-cuda.tar.xz ] && [ ! -d "$env/llama-cuda" ]; then
  mkdir -p "$env/llama-cuda" && tar -xJf .gpu/llama-cuda.tar.xz -C "$env/llama-cuda"
fi
[ -f "$env/vocab.gguf" ] || xz -dc .gpu/vocab.gguf.xz >"$env/vocab.gguf"
if [ ! -d "$env/llama-src" ]; then mkdir -p "$env/llama-src" && tar -xJf .gpu/llama-src.tar.xz -C "$env/llama-src"; fi
export PATH="$env/bin:$PATH" GPU_CHECK_VOCAB="$env/vocab.gguf" LLAMA_SRC="$env/llama-src"
[ -d "$env/llama-cuda" ] && export LLAMA_CUDA_DIR="$env/llama-cuda"
out=${OUT:-/tmp/gpu-out}
node --version
# What the machine has, for the record (and for a failed build's diagnosis).
{ nvidia-smi -L; nvcc --version | tail -2; gcc --version | head -1; cmake --version | head -1
  ls /usr/local/cuda/include/cublas_v2.h; grep -m1 'model name' /proc/cpuinfo; nproc; } 2>&1 || true
exec scripts/gpu-check.sh --out "$out" --deadline "${DEADLINE:-420}" "$@"
