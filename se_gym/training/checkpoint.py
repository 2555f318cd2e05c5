"""Checkpoints that survive interruption: written to a temporary folder, then renamed into place.

A trainer checkpoint holds the trainable weights (all of them for full fine-tuning, the adapter
for LoRA), the optimizer and scheduler state, the RNG states and a small JSON of counters.
Resuming loads it into a trainer built the same way from the same base model.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path

from ..storage import atomic_dir

STATE_JSON = "trainer_state.json"
WEIGHTS = "trainable.pt"
OPTIM = "optim.pt"


def _rng_state() -> dict:
    import numpy as np
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    import numpy as np
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def trainable_state(model) -> dict:
    return {k: v.detach().cpu().clone() for k, v in model.named_parameters() if v.requires_grad}


def save_trainer(path: str | os.PathLike, model, optimizer, scheduler, counters: dict) -> Path:
    """Write a resumable checkpoint of a training run to ``path`` (replacing any older one)."""
    import torch

    path = Path(path)
    with atomic_dir(path) as tmp:
        torch.save(trainable_state(model), tmp / WEIGHTS)
        torch.save(
            {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict() if scheduler else None, "rng": _rng_state()},
            tmp / OPTIM,
        )
        (tmp / STATE_JSON).write_text(json.dumps(counters, indent=2, sort_keys=True), encoding="utf-8")
    return path


def has_checkpoint(path: str | os.PathLike) -> bool:
    return (Path(path) / STATE_JSON).is_file()


def load_trainer(path: str | os.PathLike, model, optimizer, scheduler) -> dict:
    """Restore what :func:`save_trainer` wrote; return its counters."""
    import torch

    path = Path(path)
    weights = torch.load(path / WEIGHTS, map_location="cpu", weights_only=True)
    params = dict(model.named_parameters())
    missing = sorted(set(weights) - set(params))
    if missing:
        raise ValueError(f"checkpoint {path} has weights the model lacks, e.g. {missing[0]}")
    with torch.no_grad():
        for name, value in weights.items():
            params[name].copy_(value.to(params[name].device, params[name].dtype))
    blob = torch.load(path / OPTIM, map_location="cpu", weights_only=False)
    optimizer.load_state_dict(blob["optimizer"])
    if scheduler is not None and blob["scheduler"] is not None:
        scheduler.load_state_dict(blob["scheduler"])
    _set_rng_state(blob["rng"])
    return json.loads((path / STATE_JSON).read_text(encoding="utf-8"))
