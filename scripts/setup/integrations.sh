#!/usr/bin/env bash
# TRL, datasets, pyarrow and matplotlib (integrations, hub loader, exports, plots).  Runs after
# llm.sh so torch is already the CPU build; the constraint keeps it that way.  Idempotent.
set -euo pipefail
PY="${PYTHON:-python3}"
if "$PY" -c "import trl, datasets, pyarrow, matplotlib" 2>/dev/null; then
  exit 0
fi
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
"$PY" -c "import torch, transformers; print(f'torch=={torch.__version__.split(\"+\")[0]}'); print(f'transformers=={transformers.__version__}')" >"$constraints"
"$PY" -m pip install --quiet --disable-pip-version-check -c "$constraints" "trl>=1.0" "datasets>=3.0" "pyarrow>=15" "matplotlib>=3.8"
