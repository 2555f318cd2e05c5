"""examples/gym_loop.py and examples/trl_grpo.py run as a user runs them (a fresh interpreter, the
tiny model built on the spot) and print what their loops did."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO, need_module


def _run(script: str, tmp_path) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO), TOKENIZERS_PARALLELISM="false")
    done = subprocess.run([sys.executable, str(REPO / "examples" / script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_gym_loop_example_steps_the_vector_env(tmp_path):
    need_module("torch", "the example's model needs torch (extra 'train')")
    need_module("transformers", "the example's model needs transformers (extra 'train')")
    lines = _run("gym_loop.py", tmp_path).splitlines()
    steps = [line for line in lines if line.startswith("step ")]
    # 4 episodes per step, each of one turn: every episode finishes, with a judged status
    assert len(steps) == 2 and all("finished 4" in line and "statuses ['" in line for line in steps), lines


def test_the_trl_grpo_example_trains(tmp_path):
    for name in ("torch", "transformers"):
        need_module(name, "the example's model needs it (extra 'train')")
    need_module("trl", "the example needs trl (extra 'trl')")
    need_module("datasets", "make_dataset needs datasets (extra 'hf')")
    out = _run("trl_grpo.py", tmp_path)
    assert "trained 2 steps" in out and out.count("step ") >= 2, out
