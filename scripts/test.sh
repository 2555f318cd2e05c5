#!/usr/bin/env bash
# Install what the test suite needs, then run it.  Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[dev]"
# each part of the package that needs system pieces (bubblewrap, a Docker daemon, torch, vLLM, Ray)
# installs them in its own script; they are idempotent and quick when everything is present
for step in scripts/setup/*.sh; do
  [ -e "$step" ] || continue
  echo "== setup: $step"
  bash "$step"
done
exec "$PY" -m pytest -q "$@"
