"""Registries instead of if-chains (issue 37): a sandbox backend written in one file and registered
with one call works through gym.make and the CLI, with no other edit to se-gym."""
from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest

import se_gym  # noqa: F401  (registers SEBench-v0)
from se_gym.envs import EnvConfigError
from se_gym.sandbox import SANDBOXES, Sandbox, register_sandbox

PLUGIN = Path(__file__).parent / "plugins" / "subprocess_sandbox.py"
SMALL = {"train": 0, "single_test": 2, "multiple_test": 0}


@pytest.fixture
def subproc(monkeypatch):
    """The plug-in registered under "subproc" for this test only; its module, to see it was used."""
    monkeypatch.setattr(SANDBOXES, "_entries", dict(SANDBOXES._entries))  # (forgotten after the test)
    register_sandbox("subproc", f"{PLUGIN}:SubprocessSandbox")  # the one registration
    module = SANDBOXES.load("subproc").__module__
    import sys

    started = sys.modules[module].STARTED
    started.clear()
    return started


@pytest.fixture(scope="module")
def tasks():
    from se_gym.tasks import build_suite

    return list(build_suite(0, sizes=SMALL, progress=False, validate="inprocess").splits["single_test"])


def test_a_registered_backend_judges_through_gym_make(subproc, tasks):
    env = gym.make("SEBench-v0", tasks=tasks, sandbox="subproc", profile="sebench")
    try:
        env.reset(seed=0)
        task = env.unwrapped.task
        _, reward, *_ = env.step(f"```python\n{task.library_solution}\n```")
        assert reward == 1.0
        env.reset()
        _, reward, *_ = env.step("```python\ndef f():\n    return 1\n```")
        assert reward == 0.0
    finally:
        env.close()
    assert subproc == ["subproc"]  # the plug-in ran the programs, not the local backend


def test_a_registered_backend_judges_through_the_cli(subproc, tasks, tmp_path, capsys):
    from se_gym.cli import main

    rows = [{"response": f"```python\n{t.library_solution}\n```", "function_name": t.function_name,
             "test_cases": [{"input": c.input, "output": c.output} for c in t.test_cases]} for t in tasks]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["judge", "--input", str(src), "--out", str(out), "--library", "seed:0", "--sandbox", "subproc", "--quiet"]) == 0
    assert "sandbox subproc, isolation none" in capsys.readouterr().err
    assert [json.loads(line)["judge"]["reward"] for line in out.read_text().splitlines()] == [1.0, 1.0]
    assert subproc == ["subproc"]


def test_an_unregistered_name_fails_at_make_listing_the_registered_ones(subproc):
    with pytest.raises(EnvConfigError, match=r"sandbox must be one of local, docker, http, ray, subproc; got 'subprc' \(did you mean 'subproc'\?\)"):
        gym.make("SEBench-v0", sandbox="subprc")


def test_the_old_backend_flag_of_judge_and_sandbox_still_works_and_warns_once(caplog, monkeypatch):
    from se_gym import configs
    from se_gym.cli import build_parser

    monkeypatch.setattr(configs, "_WARNED", set())  # (once per process: not yet in this test)

    parser = build_parser()
    for argv in (["judge", "--input", "i", "--out", "o", "--library", "seed:0", "--backend", "docker"],
                 ["sandbox", "info", "--backend", "docker"], ["sandbox", "serve", "--backend", "docker"]):
        with caplog.at_level("WARNING", logger="se_gym"):
            assert parser.parse_args(argv).sandbox == "docker"
    warned = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert warned == ["--backend is deprecated here: use --sandbox (it means the same)"]


def test_a_registered_task_suite_kind_loads_through_gym_make(monkeypatch, tasks):
    from se_gym.tasks.spec import TASK_SUITES, TaskSuite

    class Given(TaskSuite):  # "given:K": the first K tasks of the fixture, against library seed 0
        def default_library(self, spec):
            return "seed:0"

        def load(self, spec, split, library, progress):
            return tasks[: int(spec.path)]

    monkeypatch.setattr(TASK_SUITES, "_entries", dict(TASK_SUITES._entries))
    TASK_SUITES.register("given", Given)
    env = gym.make("SEBench-v0", tasks="given:1")
    try:
        env.reset(seed=0)
        assert env.unwrapped.task.id == tasks[0].id
    finally:
        env.close()


def test_one_task_spec_grammar_the_split_is_never_in_the_spec():
    from se_gym.tasks import TaskError
    from se_gym.tasks.spec import parse_task_spec

    assert parse_task_spec("builtin:3").seed == 3 and parse_task_spec("builtin", default_seed=5).seed == 5
    assert parse_task_spec("sebench:/x").path == "/x"
    with pytest.raises(TaskError, match="the split is its own option"):
        parse_task_spec("builtin:single_test")
    from se_gym.tasks.spec import TASK_SUITES, task_grammar

    # the kinds and the grammar are read from the registry, never a constant
    with pytest.raises(TaskError, match=rf"task spec kind must be one of {re.escape(', '.join(TASK_SUITES.names()))}; got 'bultin' "
                                        r"\(did you mean 'builtin'\?\)") as exc:
        parse_task_spec("bultin:3")
    assert str(exc.value).endswith(f"(write {task_grammar()})")
    assert task_grammar().startswith("'builtin[:SEED]', 'sebench[:PATH]', 'jsonl:PATH', 'selfplay:PATH', 'miniature[:SEED]'")


def test_a_backend_that_claims_a_channel_it_never_carries_scores_infrastructure_not_wrong(tasks):
    """Issue 43.8: a backend that leaves ``has_channel`` at its default (True) but never carries fd 3
    got every right answer scored runtime_error 0 with infrastructure=False."""
    import importlib.util

    from se_gym.judge import Judge

    spec = importlib.util.spec_from_file_location("subprocess_sandbox_for_channel_test", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class ForgetfulSandbox(module.SubprocessSandbox):
        name = "forgetful"
        has_channel = Sandbox.has_channel  # the contract's default (True), never overridden

    from se_gym.library import from_spec

    lib = from_spec("seed:0")  # the library the built-in suite of seed 0 is written against
    box = ForgetfulSandbox(pythonpath=[str(lib.materialize("sebench", docs=False))])
    try:
        with Judge(lib, profile="sebench", sandbox=box) as judge:
            t = tasks[0]
            v = judge.judge(f"```python\n{t.library_solution}\n```", t.test_cases, t.function_name)
    finally:
        box.close()
    assert v.infrastructure is True and v.status.value == "sandbox_error", v
    assert "has_channel" in v.detail
