#!/usr/bin/env bash
# Ray for the distributed rollout (se_gym.distributed): idempotent, quick when already installed.
set -euo pipefail
PY="${PYTHON:-python3}"
if "$PY" -c "import ray, sys; sys.exit(0 if tuple(map(int, ray.__version__.split('.')[:2])) >= (2, 40) else 1)" 2>/dev/null; then
  exit 0
fi
"$PY" -m pip install --quiet --disable-pip-version-check "ray[default]>=2.40"
