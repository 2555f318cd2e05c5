"""NeMo Gym (nemo-gym 0.7): SE-Bench's resources server on NeMo Gym's Gymnasium server, played by NeMo
Gym's own gymnasium_agent (its /run, as `gym eval run` posts a dataset row) over HTTP, in the Python
3.13 venv scripts/setup/integrations.sh makes for it (nemo-gym 0.7 needs Python >= 3.13 and mcp < 2)."""
from __future__ import annotations

import os
from pathlib import Path

from conftest import run_in_venv

NEMO_PYTHON = Path(os.environ.get("SE_GYM_NEMO_GYM_VENV", "/var/tmp/se-gym-venvs/nemo-gym")) / "bin" / "python"


def test_gymnasium_agent_plays_sebench_rows_with_feedback_and_masks_infrastructure(tmp_path):
    res = run_in_venv(NEMO_PYTHON, "_nemo_gym_loop.py", tmp_path, probe="import nemo_gym, resources_servers.gymnasium", what="nemo-gym")
    assert res["version"].startswith("0.7.")
    right, fixed, wrong, down, reference, unused = res["runs"]
    # right at once: one model turn, the judge's reward, the episode ends
    assert (right["reward"], right["terminated"], right["turns"], right["info"]["status"]) == (1.0, True, ["assistant"], "passed")
    # wrong, then right: the execution feedback came back as the next user message (max_turns=2 from the row)
    assert (fixed["reward"], fixed["turns"], fixed["info"]["turn"]) == (1.0, ["assistant", "user", "assistant"], 2)
    assert "attempt 1 of 2" in fixed["feedback"][0]
    assert (wrong["reward"], wrong["terminated"], wrong["truncated"], wrong["info"]["status"]) == (0.0, True, False, "static_gate")
    # the sandbox could not judge: NeMo Gym's own mask, not a wrong answer
    assert down["info"]["mask_sample"] is True and down["info"]["failure_kind"] == "verifier_error"
    assert down["info"]["status"] == "sandbox_error" and down["reward"] == 0.0 and down["turns"] == ["assistant"]
    # issue 42: judged with the task's reference (the row's task carries it): a named-but-unused answer gets 0
    assert (reference["reward"], reference["info"]["status"]) == (1.0, "passed")
    assert (unused["reward"], unused["terminated"], unused["info"]["status"]) == (0.0, True, "library_unused")
