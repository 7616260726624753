#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a GPU machine that has no Node and no network (a lent
# device machine: CUDA and Python only, 64 MiB carried per call) into .gpu/ (git-ignored):
#   node.xz                 this machine's Node binary
#   node_modules.tar.xz     node_modules without what serving, benching and fixtures never load
#                           (other platforms' llama.cpp binaries, the CUDA ones: 159 MB that do
#                           not compress; TypeScript, vitest, Playwright, sources of native modules)
#   vocab.gguf.xz           the Qwen2 vocabulary the fixtures take their tokenizer from
#   llama-src.tar.xz        the bundled llama.cpp source, for a CUDA build there
#   llama-cuda.tar.xz       with --cuda-build DIR: a CUDA llama-server and llama-bench built here
#                           (saves the ~4-minute build on the lease; see docs/benchmarks.md, scripts/gpu-check.sh)
# Then on the device machine: scripts/gpu-device-run.sh (carry .gpu).
#   scripts/gpu-pack.sh [--cuda-build /tmp/llama-cuda]
set -euo pipefail
cd "$(dirname "$0")/.."
cuda_build=""
[ "${1:-}" = "--cuda-build" ] && cuda_build=$2
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
mkdir -p .gpu
xzc() { xz -6 -T"$(nproc)" -c; }

[ -s .gpu/node.xz ] || xzc <"$(command -v node)" >.gpu/node.xz
tar -c --exclude='node_modules/@node-llama-cpp/linux-arm64' --exclude='node_modules/@node-llama-cpp/linux-armv7l' \
  --exclude='node_modules/@node-llama-cpp/linux-x64-cuda' --exclude='node_modules/@node-llama-cpp/linux-x64-cuda-ext' \
  --exclude='node_modules/@node-llama-cpp/linux-x64-vulkan' --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' \
  --exclude='node_modules/typescript' --exclude='node_modules/playwright-core' --exclude='node_modules/@types' \
  --exclude='node_modules/vitest' --exclude='node_modules/@vitest' --exclude='node_modules/vite' \
  --exclude='node_modules/rollup' --exclude='node_modules/@rollup' \
  --exclude='node_modules/better-sqlite3/deps' --exclude='node_modules/better-sqlite3/src' \
  --exclude='node_modules/better-sqlite3/build/Release/obj*' --exclude='node_modules/better-sqlite3/build/deps' \
  --exclude='node_modules/better-sqlite3/build/Release/*.a' --exclude='node_modules/openai' --exclude='node_modules/*/test' \
  --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' --exclude='*.map' --exclude='*.md' \
  node_modules | xzc >.gpu/node_modules.tar.xz
vocab=$(node --import tsx -e 'import("./src/gguf/llama-vocab-files.ts").then(async (m) => console.log((await m.llamaVocabFiles("qwen2")).gguf))')
xzc <"$vocab" >.gpu/vocab.gguf.xz
src=$(cd "$(dirname "$(scripts/build-llama-server.sh)")/../src" && pwd)
# The source without its models, docs and examples' data: what CMake reads for the two targets.
other_backends=(); for b in blas cann et hexagon hip metal musa opencl openvino rpc sycl virtgpu vulkan webgpu zdnn zendnn; do
  other_backends+=(":(exclude)ggml/src/ggml-$b"); done
git -C "$src" archive --format=tar HEAD -- CMakeLists.txt app cmake common ggml include src tools vendor licenses LICENSE \
  "${other_backends[@]}" | xzc >.gpu/llama-src.tar.xz
if [ -n "$cuda_build" ]; then
  tar -C "$cuda_build/bin" -c llama-server llama-bench | xzc >.gpu/llama-cuda.tar.xz
fi
du -ch .gpu/* >&2
