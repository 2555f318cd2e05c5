#!/usr/bin/env bash
# TRL, datasets, pyarrow and matplotlib (integrations, hub loader, exports, plots), then the
# environment-protocol adapters' packages (skyrl-gym, openenv-core).  Runs after llm.sh so torch is
# already the CPU build; the constraints keep it (and everything else installed) as it is.  Idempotent.
set -euo pipefail
PY="${PYTHON:-python3}"
PIP=("$PY" -m pip install --quiet --disable-pip-version-check)
if ! "$PY" -c "import trl, datasets, pyarrow, matplotlib" 2>/dev/null; then
  constraints=$(mktemp)
  "$PY" -c "import torch, transformers; print(f'torch=={torch.__version__.split(\"+\")[0]}'); print(f'transformers=={transformers.__version__}')" >"$constraints"
  "${PIP[@]}" -c "$constraints" "trl>=1.0" "datasets>=3.0" "pyarrow>=15" "matplotlib>=3.8"
  rm -f "$constraints"
fi

# adapters: add packages, never change an installed one (the freeze is the constraint)
if ! "$PY" -c "import skyrl_gym, openenv.core, fastmcp, uvicorn, websockets" 2>/dev/null; then
  frozen=$(mktemp)
  "$PY" -m pip freeze --disable-pip-version-check | grep -v -e '^-e ' -e ' @ ' -e '^se-gym' >"$frozen" || true
  "${PIP[@]}" -c "$frozen" "skyrl-gym==0.4.0"
  # openenv-core without gradio: gradio only serves OpenEnv's optional web UI (ENABLE_WEB_INTERFACE)
  # and pins pillow<13, which would downgrade the shared environment
  "${PIP[@]}" -c "$frozen" fastapi uvicorn websockets "fastmcp>=3.0.0" httpx requests typer rich pyyaml \
    huggingface_hub openai tomli tomli-w
  "${PIP[@]}" --no-deps "openenv-core==0.3.0"
  rm -f "$frozen"
fi
echo "integrations setup: skyrl-gym $("$PY" -c 'from importlib.metadata import version as v; print(v("skyrl-gym"))'), openenv-core $("$PY" -c 'from importlib.metadata import version as v; print(v("openenv-core"))')"
