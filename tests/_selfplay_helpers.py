"""Shared by the self-play tests: a SelfPlay on the miniature's prompts that never loads a model
until asked (``model="unused"``), for the stages that can be driven by hand."""
from __future__ import annotations

LIBRARY = "seed:100"
FUNCTIONS = ("abs", "cumsum", "add")


def selfplay(tmp_path, **kw):
    """A one-round SelfPlay in ``tmp_path/run`` with three proposals about FUNCTIONS; ``kw``: other settings."""
    from se_gym.selfplay.loop import SelfPlay, SelfPlayConfig

    cfg = SelfPlayConfig(**{"model": "unused", "library": LIBRARY, "prompts": "miniature", "rounds": 1, "proposals": 3,
                            "functions": FUNCTIONS, "samples": 2, "eval": "none", **kw})
    return SelfPlay(cfg, tmp_path / "run", progress=False, log=lambda m: None)
