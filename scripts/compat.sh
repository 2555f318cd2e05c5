#!/usr/bin/env bash
# The compatibility matrix: each integrated stack at the release its extra resolves to today (and, with
# --newest, the newest on the index), its smoke test in a venv holding that release, the table in
# docs/integrations/compatibility.md.  Run with the test venv's python (scripts/test.sh's, or PYTHON=).
#   scripts/compat.sh                    # the resolved column (reuses venvs that hold the release)
#   scripts/compat.sh --newest --fresh   # both columns, every venv built anew (minutes: NeMo Gym's is large)
#   scripts/compat.sh --only trl,gem --out /tmp/c.md
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}}"
PY="${PY:-python3}"
exec "$PY" scripts/compat.py "$@"
