#!/usr/bin/env bash
# The system packages and services the tests need beyond npm: a running PostgreSQL and Redis
# (scripts/start-test-services.sh), and Debian's Chromium, which the console's end-to-end test
# drives through playwright-core (which ships no browser of its own).
set -euo pipefail
"$(dirname "$0")/start-test-services.sh"
if command -v chromium >/dev/null; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
