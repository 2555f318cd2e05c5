#!/usr/bin/env bash
# Install what the test suite needs, then run it.  Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[dev]"
# each part of the package that needs system pieces installs them in its own script (idempotent,
# quick when everything is present); the order matters: torch (llm.sh) before what builds on it
for name in sandbox llm ray integrations; do
  echo "== setup: $name"
  bash "scripts/setup/$name.sh"
done
exec "$PY" -m pytest -q "$@"
