"""Shared pieces of the rollout / distributed tests: what to skip on, the tiny model, row comparison."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import need_module

REPO = Path(__file__).resolve().parents[1]


def require_pipeline() -> None:
    """Skip locally / fail in CI when a third-party piece the rollout needs is not installed."""
    for module, names in (
        ("se_gym.judge", ("Judge",)),
        ("se_gym.tasks", ("builtin_tasks", "render_messages", "render_prompt")),
        ("se_gym.llm.hf", ("HFGenerator",)),
    ):
        mod = importlib.import_module(module)  # se-gym's own modules: a failure is a bug, not a skip
        assert all(hasattr(mod, n) for n in names), f"{module} lacks one of {names}"
    for dep in ("torch", "transformers", "tokenizers"):
        need_module(dep, f"the tiny model needs {dep} (installed by scripts/setup/*.sh)")


def build_tiny(root: Path) -> Path:
    from se_gym.llm import build_tiny_model

    # open-book prompts (docs included) run to a few thousand tokens
    return build_tiny_model(root / "tiny", max_position_embeddings=8192)


def config(tiny_dir: Path, **overrides: Any):
    from se_gym.llm.rollout import RolloutConfig

    base = dict(model=str(tiny_dir), backend="hf", tasks="builtin", split="single_test", library="seed:0",
                n=2, temperature=1.0, max_tokens=24, seed=7, limit=4, batch_size=2)
    base.update(overrides)
    return RolloutConfig(**base)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def comparable(row: dict) -> dict:
    """A row without its timings, the only fields that legitimately differ between equal runs."""
    return {k: v for k, v in row.items() if k != "timing"}


def cli(args: list[str], env: dict | None = None, **kw) -> subprocess.Popen:
    """Start ``se-gym ARGS`` in a child interpreter (the same one as the tests)."""
    full = dict(os.environ, OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "se_gym.cli", *args], cwd=REPO, env=full, **kw)


def kill_after_rows(args: list[str], out: Path, lines: int = 2, timeout: float = 120) -> bytes:
    """Start ``se-gym ARGS --out OUT``, SIGKILL it once OUT holds ``lines`` rows; returns what it wrote."""
    import signal
    import time

    proc = cli(args + ["--out", str(out)])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= lines:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the rollout ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return out.read_bytes()
