"""Task-suite kinds (issue 48): ``miniature`` is a registered kind like the others, a spec carries
its kind's argument as the kind defines it, ``--tasks path/file.py:Class[:ARG]`` loads a suite of
one's own, and the benchmark reads what a kind declares instead of its name."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from se_gym.tasks import TaskError
from se_gym.tasks.spec import TASK_SUITES, TaskSpec, load_task_spec, parse_task_spec, suite_of

SUITE = Path(__file__).parent / "plugins" / "first_tasks_suite.py"


def test_miniature_is_a_registered_kind_with_a_seed_argument():
    assert "miniature" in TASK_SUITES.names()
    spec = parse_task_spec("miniature:2")
    assert spec == TaskSpec("miniature", 2) and spec.arg == 2 and spec.seed == 2 and str(spec) == "miniature:2"
    assert parse_task_spec("miniature", default_seed=5).arg == 5
    train, lib = load_task_spec("miniature:1", "train")
    test, _ = load_task_spec("miniature:1", "single_test")
    assert lib.id.startswith("seed101-") and len(train) == 24 and len(test) == 18
    assert {t.split for t in test} == {"single_test"} and load_task_spec("miniature:1", "multiple_test")[0] == []
    assert suite_of(spec).minted and not suite_of(spec).official and suite_of("sebench").official
    with pytest.raises(TaskError, match="non-negative integer seed"):
        parse_task_spec("miniature:train")


def test_a_spec_carries_its_kind_s_argument_and_the_old_keywords_still_build_it():
    assert TaskSpec("builtin", seed=3) == TaskSpec("builtin", 3) and TaskSpec("sebench", path="/x").arg == "/x"
    assert parse_task_spec("sebench").arg is None and parse_task_spec("sebench:/x").path == "/x"


def test_a_suite_of_one_s_own_by_file_py_class_with_its_argument(tmp_path):
    tasks, lib = load_task_spec(f"{SUITE}:FirstTasks:2", "single_test")
    assert len(tasks) == 2 and lib.id.startswith("seed0-")
    spec = parse_task_spec(f"{SUITE}:FirstTasks:2")
    assert spec.arg == 2 and spec.kind == f"{SUITE}:FirstTasks"
    with pytest.raises(TaskError, match="cannot import|no file"):
        parse_task_spec("no/such/file.py:Suite")


def test_the_rollout_command_takes_tasks_from_a_file_py_class(tmp_path, capsys):
    from se_gym.cli import main

    # (a model that does not exist: the tasks are loaded and checked before any model)
    out = tmp_path / "o.jsonl"
    assert main(["rollout", "--model", "m", "--tasks", "nope.py:X", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--tasks nope.py:X" in err and err.count("\n") == 1


def test_the_benchmark_runs_the_miniature_through_the_registry(tmp_path):
    from se_gym.bench.config import BenchConfig
    from se_gym.bench.run import UNSEEN_SPLIT, world

    w = world(BenchConfig(tasks="miniature", unseen=2, out=str(tmp_path)), 0)
    assert sorted(w.splits) == ["single_test", "train", UNSEEN_SPLIT] and len(w.splits[UNSEEN_SPLIT]) == 6
    assert w.unseen == frozenset(t.id for t in w.splits[UNSEEN_SPLIT]) and not w.official
    prompt, docs = w.renderer(w.splits["train"][0], "open")
    assert docs and all(line.startswith(w.library.package) for line in docs)  # the miniature's own prompts
    plain = world(BenchConfig(tasks="builtin", out=str(tmp_path)), 0)
    assert json.dumps(sorted(plain.splits)) == json.dumps(["multiple_test", "single_test", "train"])
