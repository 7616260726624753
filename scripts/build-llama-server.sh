#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source that ships inside node-llama-cpp's npm package
# (llama/gitRelease.bundle), so the remote engine is tested against the same llama.cpp as the
# in-process engine. The build lives outside the repository and is reused when present.
# Prints the binary's path on stdout (everything else goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=node_modules/node-llama-cpp/llama
[ -f "$pkg/gitRelease.bundle" ] || { echo "run npm ci first: $pkg/gitRelease.bundle is missing" >&2; exit 1; }
tag=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tag)' "$pkg/llama.cpp.info.json")
# GGML_NATIVE=ON matches the in-process engine closest (5e-8 vs 6e-7). Without AMX, though: on a
# CPU that has it (Xeon Sapphire Rapids and later) -march=native turns on ggml's AMX matrix kernels,
# and this llama.cpp's crash (segmentation fault or illegal instruction) on the first decode of
# a Q4_0 or Q8_0 model (engine.quantized.test.ts), with or without OpenMP.
flags=(-DGGML_NATIVE=ON)
if [ "$(uname -m)" = x86_64 ]; then
  noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  flags+=("-DCMAKE_C_FLAGS=$noamx" "-DCMAKE_CXX_FLAGS=$noamx")
fi
# The build is keyed by the CPU's flags, so a cache carried to another CPU is rebuilt rather than
# crashing on an illegal instruction, and by the recipe, so a changed recipe builds anew.
cpu=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m; echo "${flags[*]}") | sha1sum | cut -c1-8)
root=${JUDGE_LLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/typed-judgment-service}
dir="$root/llama.cpp-$tag-$cpu"
bin="$dir/build/bin/llama-server"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then echo "$bin"; exit 0; fi
command -v cmake >/dev/null || { echo "cmake is needed to build llama-server (apt-get install cmake g++)" >&2; exit 1; }
mkdir -p "$root"
rm -rf "$dir.tmp"
git clone --quiet "$pkg/gitRelease.bundle" "$dir.tmp" >&2
(
  cd "$dir.tmp"
  cmake -B build "${flags[@]}" -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build build --target llama-server -j"$(nproc)" >&2
)
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "$bin"
