"""GEM (gem-llm): SEBench-v0 through GEM's own make / reset / step and its vector env, in the venv
scripts/setup/integrations.sh makes for it (gem-llm pins msgspec, nltk and reasoning-gym; the venv sees
the test venv's packages through a .pth, its own first)."""
from __future__ import annotations

import os
from pathlib import Path

from conftest import run_in_venv

_VF_VENV = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers"))
GEM_PYTHON = Path(os.environ.get("SE_GYM_GEM_VENV", str(_VF_VENV.parent / "gem"))) / "bin" / "python"


def test_gem_make_reset_step_and_its_vector_env(tmp_path):
    res = run_in_venv(GEM_PYTHON, "_gem_loop.py", tmp_path, probe="import gem", what="gem-llm")
    single = res["single"]
    assert single["prompt_has_query"] and single["info"]["max_turns"] == 2
    # a wrong answer with a turn left: the execution feedback as the next observation, no reward yet
    obs, reward, terminated, truncated, info = single["wrong"]
    assert (reward, terminated, truncated) == (0.0, False, False) and "attempt 1 of 2" in obs and info["status"] == "static_gate"
    obs, reward, terminated, truncated, info = single["right"]
    assert (reward, terminated, info["status"], info["infrastructure"]) == (1.0, True, "passed", False)
    assert obs == "<｜TERMINAL_STATE｜>"  # GEM's terminal observation
    assert res["seeded_reset"] == [True]
    vec = res["vec"]
    assert len(set(vec["ids"])) == 4  # env i is seeded seed + i: four different tasks
    assert vec["rewards"] == [1.0, 0.0, 1.0, 0.0] and all(vec["terminated"])
    assert all(vec["next_ids"]) and vec["next_ids"] != vec["ids"]  # GEM's autoreset started each env's next task
    assert sum(vec["batches"]) == 4 and max(vec["batches"]) >= 2  # GEM's threads' steps shared sandbox batches
    # issue 42: judged with the task's reference, a named-but-unused answer gets 0 (1.0 without it)
    assert res["reference"][1:3] == [1.0, True] and res["reference"][4]["status"] == "passed"
    assert res["unused"][1:3] == [0.0, True] and res["unused"][4]["status"] == "library_unused"
