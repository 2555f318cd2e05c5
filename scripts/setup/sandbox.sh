#!/usr/bin/env bash
# System pieces of the sandbox: bubblewrap (local backend) and, when asked, Docker (docker backend).
# Idempotent; quick when everything is present.  Run as root on Debian bookworm.
#   SE_GYM_SETUP_DOCKER=1 bash scripts/setup/sandbox.sh   # also install docker.io + the SDK
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if [ "${SE_GYM_SETUP_DOCKER:-0}" = 1 ]; then
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "sandbox setup: need root to install ${need[*]}; the sandbox falls back to rlimits-only" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ "${SE_GYM_SETUP_DOCKER:-0}" = 1 ]; then
  "${PYTHON:-python3}" -c "import docker" 2>/dev/null || "${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check "docker>=7.0"
fi
echo "sandbox setup: bwrap $(command -v bwrap || echo missing)"
