#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source that ships inside node-llama-cpp's npm package
# (llama/gitRelease.bundle) and runs it on node-llama-cpp's own prebuilt libraries, so that the
# remote engine the tests start computes with exactly the binaries the in-process engine loads.
# The build lives outside the repository and is reused when present.
# Prints the binary's path on stdout (everything else goes to stderr).
#
# Why node-llama-cpp's libraries rather than a build of our own: the numbers come from ggml's CPU
# kernels, and node-llama-cpp ships one CPU library per micro-architecture (libggml-cpu-haswell,
# -icelake, -sapphirerapids, -zen4, …) and loads the best one for the CPU at run time. A build of
# our own runs other kernels (GGML_NATIVE: -march=native; on a Sapphire Rapids Xeon the two were
# 1–4% apart on SmolLM2). Here only llama-server's own code (HTTP, slots, sampling: libllama-server-
# impl, libllama-common, libmtmd) is compiled; libllama, libggml, libggml-base and every
# libggml-cpu-* variant are node-llama-cpp's files, copied beside the binary, and ggml's backend
# loader (GGML_BACKEND_DL) picks the variant from the same files with the same scoring as in
# process. The loaded variant is printed by llama-server at start ("load_backend: loaded CPU
# backend from …"; src/testing/cpu-library.ts reads it from /proc for both sides).
#
# AMX: on a CPU with AMX both engines load libggml-cpu-sapphirerapids (AMX kernels included),
# because that is what node-llama-cpp ships and loads; the choice is node-llama-cpp's, and the two
# engines stay identical whichever it is. (A -march=native build of ours with AMX crashed on the
# first decode of Q4_0/Q8_0 models; that build is gone.)
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=node_modules/node-llama-cpp/llama
[ -f "$pkg/gitRelease.bundle" ] || { echo "run npm ci first: $pkg/gitRelease.bundle is missing" >&2; exit 1; }
tag=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tag)' "$pkg/llama.cpp.info.json")
# node-llama-cpp's CPU prebuilt for this platform (the one `getLlama({ gpu: false })` loads).
platform=$(node -e 'console.log(`${process.platform}-${process.arch}`)')
libs=$(ls -d "node_modules/@node-llama-cpp/$platform/bins/"*/ 2>/dev/null | head -1)
[ -n "$libs" ] && ls "$libs"libggml-cpu-*.so >/dev/null 2>&1 || {
  echo "node-llama-cpp ships no prebuilt CPU libraries for $platform (node_modules/@node-llama-cpp/$platform): llama-server cannot share the in-process engine's kernels here" >&2
  exit 1
}
flags=(-DBUILD_SHARED_LIBS=ON -DGGML_BACKEND_DL=ON -DGGML_CPU=OFF -DGGML_NATIVE=OFF
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN')
# Keyed by the recipe and by node-llama-cpp's libraries, so a changed recipe or a new
# node-llama-cpp builds anew. Not by the CPU: nothing compiled here is tuned to it.
key=$( (echo "${flags[*]}"; cat "$libs"*.so | sha1sum) | sha1sum | cut -c1-8)
root=${JUDGE_LLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/typed-judgment-service}
dir="$root/llama.cpp-$tag-shared-$key"
# $dir/bin: the binary and the libraries it runs on; $dir/src: the llama.cpp source it was built
# from (scripts/gpu-check.sh and gpu-pack.sh build and pack the CUDA server from it).
bin="$dir/bin/llama-server"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then echo "$bin"; exit 0; fi
command -v cmake >/dev/null || { echo "cmake is needed to build llama-server (apt-get install cmake g++)" >&2; exit 1; }
mkdir -p "$root"
# One build at a time (test files ask for the binary in parallel): the others wait, then reuse it.
exec 9>"$dir.lock"
flock 9
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then echo "$bin"; exit 0; fi
# A build interrupted half-way is resumed from its tree (cmake builds incrementally).
work="$dir.tmp"
[ -d "$work/src/.git" ] || { rm -rf "$work"; mkdir -p "$work"; git clone --quiet "$pkg/gitRelease.bundle" "$work/src" >&2; }
(
  cd "$work/src"
  cmake -B build "${flags[@]}" -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build build --target llama-server -j"$(nproc)" >&2
)
out="$work/bin"
rm -rf "$out"
mkdir -p "$out"
built="$work/src/build/bin"
cp "$built/llama-server" "$built"/libllama-server-impl.so "$out/"
# Ours: the server's own libraries (their sonames, as the binary asks for them).
for soname in $(readelf -d "$built/libllama-server-impl.so" | sed -n 's/.*(NEEDED).*\[\(lib\(llama-common\|mtmd\)\.so[^]]*\)\].*/\1/p'); do
  cp -L "$built/$soname" "$out/$soname"
done
# node-llama-cpp's: every library it ships (but its own libllama-common, which serves its addon),
# and our sonames for libllama, libggml and libggml-base pointing at its files.
for file in "$libs"*.so; do
  case "$(basename "$file")" in libllama-common*) ;; *) cp "$file" "$out/" ;; esac
done
link() { # our soname, node-llama-cpp's file (by pattern)
  local target
  target=$(cd "$out" && ls $2 2>/dev/null | head -1)
  [ -n "$target" ] || { echo "node-llama-cpp's $2 is missing from $libs" >&2; exit 1; }
  ln -sf "$target" "$out/$1"
}
link libllama.so.0 'libllama.v*.so'
link libggml.so.0 'libggml.v*.so'
link libggml-base.so.0 'libggml-base.so'
"$out/llama-server" --version >/dev/null 2>&1 || { echo "the assembled llama-server does not start: $("$out/llama-server" --version 2>&1 | tail -3)" >&2; exit 1; }
rm -rf "$work/src/build" "$dir"
mv "$work" "$dir"
echo "$bin"
