#!/usr/bin/env bash
# System pieces of the sandbox: bubblewrap (local backend), util-linux's unshare/setpriv (the local
# backend's namespace fallback without bubblewrap, and the layout matrix's non-root layouts) and Docker +
# its SDK (docker backend; the daemon itself is started on demand by scripts/docker_daemon.sh).
# Idempotent; quick when everything is present.  Run as root on Debian bookworm.
#   SE_GYM_SETUP_DOCKER=0 bash scripts/setup/sandbox.sh   # skip Docker
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
{ command -v unshare && command -v setpriv; } >/dev/null 2>&1 || need+=(util-linux)
if [ "${SE_GYM_SETUP_DOCKER:-1}" = 1 ]; then
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "sandbox setup: need root to install ${need[*]}; the sandbox falls back to namespaces through unshare, or rlimits only (se-gym sandbox info says which)" >&2
    exit 0
  fi
  echo "sandbox setup: installing system packages with apt-get: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ "${SE_GYM_SETUP_DOCKER:-1}" = 1 ]; then
  "${PYTHON:-python3}" -c "import docker" 2>/dev/null || "${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check "docker>=7.0"
fi
echo "sandbox setup: bwrap $(command -v bwrap || echo missing), unshare $(command -v unshare || echo missing)"
