#!/usr/bin/env bash
# The system packages the tests need beyond npm: Debian's Chromium, which the console's
# end-to-end test drives through playwright-core (which ships no browser of its own).
set -euo pipefail
if command -v chromium >/dev/null; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
