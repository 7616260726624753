#!/usr/bin/env bash
# The Python side of the SDK ecosystem check (src/compat/python-sdk.test.ts): a virtual
# environment outside the repository, cached, with the public conformance suite and the
# official Python SDK at pinned versions from PyPI. Prints the environment's bin directory.
# Exit 3 when Python 3 (with venv and pip) is missing, so the test can say so loudly under CI.
set -euo pipefail
JEVCOMPAT_VERSION=0.1.1
TYPESAFE_SDK_VERSION=0.7.5
cache="${JUDGE_PYTHON_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/typed-judgment-service/python-sdk}"
venv="$cache/venv-jevcompat-$JEVCOMPAT_VERSION-typesafe-sdk-$TYPESAFE_SDK_VERSION"
python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "python-sdk-env: $python not found: install Python 3.9+ with venv and pip (e.g. apt-get install python3 python3-venv)" >&2
  exit 3
fi
if [ ! -x "$venv/bin/jevcompat" ] || [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  mkdir -p "$cache"
  if ! "$python" -m venv "$venv" >&2; then
    echo "python-sdk-env: $python cannot create a virtual environment: install its venv module (e.g. apt-get install python3-venv)" >&2
    exit 3
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "jevcompat==$JEVCOMPAT_VERSION" "typesafe-sdk==$TYPESAFE_SDK_VERSION" >&2
  touch "$venv/.complete"
fi
echo "$venv/bin"
