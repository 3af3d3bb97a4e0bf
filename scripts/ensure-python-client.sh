#!/usr/bin/env bash
# Installs Debian's Python Kubernetes client (python3-kubernetes), the second official client
# the API server's conformance tests drive (test/cluster/apiserver/python/). Idempotent; needs root or
# sudo for apt-get. Debian's package belongs to the system interpreter, /usr/bin/python3.
set -euo pipefail
PYTHON="${TROUPE_PYTHON:-/usr/bin/python3}"
if "$PYTHON" -c 'import kubernetes' >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-python-client: python3-kubernetes is missing and this user cannot run apt-get" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq python3-kubernetes >/dev/null
"$PYTHON" -c 'import kubernetes; print("python3-kubernetes", kubernetes.__version__)'
