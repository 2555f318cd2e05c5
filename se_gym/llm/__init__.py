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
    make_generator,
)


def build_tiny_model(*args, **kwargs):  # thin wrapper so `import se_gym.llm` does not import torch
    """See :func:`se_gym.llm.tiny.build_tiny_model`."""
    from .tiny import build_tiny_model as _build

    return _build(*args, **kwargs)


__all__ = [
    "BACKENDS",
    "Completion",
    "Generation",
    "GenerationError",
    "Generator",
    "SamplingParams",
    "build_tiny_model",
    "make_generator",
]
