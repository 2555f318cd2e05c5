"""Generation backends: one ``Generator`` interface over transformers (``hf``), vLLM (``vllm``) and any
OpenAI-compatible server (``openai``), plus ``build_tiny_model`` for offline tests and demos.

Importing this package needs no torch, vLLM or HTTP client; each backend imports its own on use.
"""
from .base import (
    BACKENDS,
    Completion,
    Generation,
    GenerationError,
    Generator,
    SamplingParams,
    WeightUpdateUnsupported,
    make_generator,
)


def build_tiny_model(*args, **kwargs):  # thin wrapper so `import se_gym.llm` does not import torch
    """See :func:`se_gym.llm.tiny.build_tiny_model`.

    Args:
        args: passed on.
        kwargs: passed on.
    """
    from .tiny import build_tiny_model as _build

    return _build(*args, **kwargs)


_LAZY = {
    "HFGenerator": "se_gym.llm.hf",
    "VLLMGenerator": "se_gym.llm.vllm_backend",
    "OpenAIGenerator": "se_gym.llm.openai_backend",
    "VLLMServer": "se_gym.llm.vllm_server",
}


def __getattr__(name: str):
    # backend classes load on first use, with their heavy dependencies
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'se_gym.llm' has no attribute {name!r}")


__all__ = [
    "HFGenerator",
    "OpenAIGenerator",
    "VLLMGenerator",
    "VLLMServer",
    "BACKENDS",
    "Completion",
    "Generation",
    "GenerationError",
    "Generator",
    "SamplingParams",
    "WeightUpdateUnsupported",
    "build_tiny_model",
    "make_generator",
]
