"""``se-gym validate`` tells the suite's own data defects from se-gym's (validate/data.py): a task whose
NumPy reference, run with NumPy, misses its own expected output, or whose reference computes with no
library function, is the suite's warning; the same in a suite se-gym generated, or a library solution
that fails where NumPy gives the data, stays an error.  Real judge, real local sandbox."""
from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest

from se_gym.judge.types import Status
from se_gym.tasks import build_suite
from se_gym.tasks.record import TestCase
from se_gym.validate import ValidateConfig, checks, data, validate


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SE_GYM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="module")
def suite():
    return build_suite(0, sizes={"train": 4, "single_test": 1, "multiple_test": 1}, progress=False, validate="inprocess")


def _wrong_output(task):
    """The task with its last case's expected output changed (its reference no longer gives it)."""
    last = task.test_cases[-1]
    return replace(task, test_cases=(*task.test_cases[:-1], TestCase(last.input, "[123456789]")))


def test_the_suites_own_data_defects_are_warnings_and_se_gyms_are_errors(suite, tmp_path):
    tasks = suite["train"]
    mine = "jsonl:mine.jsonl"  # a user's file: its references are the suite's own
    disagree = replace(_wrong_output(tasks[0]), id="disagree", source=mine)
    generated = replace(_wrong_output(tasks[1]), id="generated")  # still builtin: the generator is se-gym's
    ours = replace(tasks[2], id="ours", source=mine,
                   library_solution=tasks[2].library_solution.replace("return ", "return 1 + 0 * ", 1))
    plain = "def {name}(*args, **kwargs):\n    return 0\n"
    name = tasks[3].function_name.split("(")[0].split()[-1]
    no_library = replace(tasks[3], id="no_library", source=mine, reference_solution=plain.format(name=name),
                         library_solution=plain.format(name=name))
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t.to_json()) + "\n" for t in (disagree, generated, ours, no_library)), encoding="utf-8")
    report = validate(ValidateConfig(specs=(f"jsonl:{path}",), library="seed:0", sandboxes=("local",), out=str(tmp_path / "out"),
                                     progress=False, second_process=False))
    got = {r["id"]: r["checks"]["oracle"] for r in report["tasks"]}
    assert got["disagree"]["severity"] == "warning", got["disagree"]
    assert "its NumPy reference, run with NumPy, gives" in got["disagree"]["detail"] and "'[123456789]'" in got["disagree"]["detail"]
    assert got["no_library"]["severity"] == "warning" and "computes with no library function" in got["no_library"]["detail"]
    assert got["generated"]["severity"] == "error" and "the reference as written" in got["generated"]["detail"]
    assert got["ours"]["severity"] == "error" and "the reference as written" in got["ours"]["detail"]
    assert report["summary"]["exit_status"] == 1 and report["severity_policy"]["rules"]["oracle/data"] == "warning"


def _verdict(reward, status="passed", detail=""):
    return SimpleNamespace(reward=reward, status=Status(status), detail=detail)


def test_only_the_official_profile_failing_where_numpy_and_strict_agree_is_the_official_librarys():
    """Official task 140's class: the sebench profile keeps the official library's behaviour (a list of
    library arrays is not unwrapped), so its reference fails there alone."""
    task = SimpleNamespace(source="sebench", test_cases=(TestCase("x=[1]", "[2]"),))
    failed = checks.failed("oracle", "the reference as written, under sebench: runtime_error: ...")
    sebench_only = {("sebench", "native"): _verdict(0.0, "runtime_error", "case 0 raised ValueError"),
                    ("strict", "native"): _verdict(1.0)}
    got = data.classify(failed, sebench_only, task, [["v", "[2]"]])
    assert got.severity == "warning" and got == checks.failed("oracle", got.detail, "official") and "official library" in got.detail
    both = {**sebench_only, ("strict", "native"): _verdict(0.0, "wrong_answer", "case 0")}
    assert data.classify(failed, both, task, [["v", "[2]"]]) is failed  # strict fails too where NumPy gives the data: ours
    assert data.classify(failed, sebench_only, replace_source(task, "builtin:seed=0"), [["v", "[2]"]]) is failed
    assert data.classify(failed, sebench_only, task, None) is failed  # the NumPy reference did not run: nothing shown


def replace_source(task, source):
    return SimpleNamespace(**{**vars(task), "source": source})


def test_the_numpy_reference_program_reports_values_and_errors():
    task = SimpleNamespace(function_name="def solve(x):", test_cases=(TestCase("x=[1, 2]", ""), TestCase("x=None", "")),
                           reference_solution="import numpy as np\n\ndef solve(x):\n    return [np.float64(v) * 2 for v in x]\n")
    program = data.program(task)
    from se_gym.sandbox import make_sandbox

    box = make_sandbox("local")
    try:
        (result,) = box.run([program])
    finally:
        box.close()
    assert data.outputs(result.stdout) == [["v", "[2.0, 4.0]"], ["e", "TypeError: 'NoneType' object is not iterable"]]
    assert data.program(SimpleNamespace(function_name="def solve(x):", test_cases=(), reference_solution="")) is None
