"""Shared pieces of the tests/test_llm*.py modules: one tiny model per test session."""
from __future__ import annotations

from pathlib import Path

import pytest

TEXT_PROMPTS = ["import zwc\n", "The value of the array", "def solve(x):\n    return zwc.", "a"]
CHAT_PROMPTS = [
    [{"role": "user", "content": "compute the sum of the list"}],
    [{"role": "system", "content": "answer with code"}, {"role": "user", "content": "sort it"}],
]


def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the tiny model once per session (per xdist worker) and reuse it across modules."""
    from se_gym.llm.tiny import build_tiny_model

    out = tmp_path_factory.getbasetemp() / "tiny_llm"
    if not (out / "model.safetensors").exists():
        # a larger init spread than the default makes next-token choices clear-cut, so that greedy
        # outputs compare across backends without near-ties
        build_tiny_model(out, init_std=0.2, seed=0)
    return out
