#!/usr/bin/env bash
# Installs Debian's Chromium for the dashboard's browser tests (test/dashboard/) when it is
# missing. Idempotent; needs root or sudo for apt-get.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-chromium: $CHROMIUM is missing and this user cannot run apt-get" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium >/dev/null
"$CHROMIUM" --version
