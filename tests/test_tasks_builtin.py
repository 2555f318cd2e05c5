"""The built-in procedural suite: coverage, validity, determinism, caching, CLI."""
from __future__ import annotations

import ast
import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from se_gym.library import CATALOGUE, mint, official
from se_gym.tasks import TaskError, build_suite, builtin_tasks, load_suite
from se_gym.tasks.builtin import specs_by_function
from se_gym.tasks.builtin import validate as validation
from se_gym.tasks.builtin.common import compile_reference, run_case

SMALL = {"train": 30, "single_test": 12, "multiple_test": 12}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SE_GYM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="module")
def small():
    return build_suite(0, sizes=SMALL, progress=False, validate="inprocess")


def test_every_catalogue_function_has_a_spec_in_its_family():
    specs = specs_by_function()
    assert sorted(specs) == sorted(e.key for e in CATALOGUE)
    styles = {s.style for ss in specs.values() for s in ss}
    assert {"call", "list", "scalar", "custom"} <= styles


def test_task_shape(small):
    lib = small.library
    for split, tasks in small.splits.items():
        assert len(tasks) == SMALL[split]
        assert len({t.id for t in tasks}) == len(tasks)
        for t in tasks:
            assert len(t.test_cases) >= 8 and t.example in t.test_cases
            assert len({c.input for c in t.test_cases}) == len(t.test_cases)
            assert len({c.output for c in t.test_cases}) >= 2
            assert "Input:" in t.query and "Output:" in t.query
            assert t.function_name == f"def solve({', '.join(_kwargs(t.example.input))}):"
            assert "import numpy as np" in t.reference_solution and "np." not in t.library_solution
            assert f"import {lib.package}" in t.library_solution
            assert t.source == "builtin:seed=0" and t.metadata["style"] in ("call", "list", "scalar", "custom")
            for c in t.test_cases:  # only plain Python literals, as in SE-Bench
                ast.literal_eval("{" + ", ".join(f"{k!r}: {v}" for k, v in _kwargs(c.input).items()) + "}")
    assert all(len(t.functions) == 1 for t in small["train"] + small["single_test"])
    assert all(len(t.functions) >= 3 for t in small["multiple_test"])


def _kwargs(text: str) -> dict:
    call = ast.parse(f"f({text})", mode="eval").body
    return {kw.arg: ast.unparse(kw.value) for kw in call.keywords}


def test_reference_reproduces_expected_outputs(small):
    for t in small["train"][:10] + small["multiple_test"][:5]:
        fn = compile_reference(t.reference_solution, t.entry_point)
        assert [run_case(fn, c.input, warn=True) for c in t.test_cases] == list(t.expected)


def test_single_test_questions_differ_from_train(small):
    train_queries = {t.query for t in small["train"]}
    assert not train_queries & {t.query for t in small["single_test"]}
    train_inputs = {c.input for t in small["train"] for c in t.test_cases}
    test_inputs = [c.input for t in small["single_test"] for c in t.test_cases]
    assert sum(i in train_inputs for i in test_inputs) <= len(test_inputs) // 20


def test_single_test_covers_every_function():
    suite = build_suite(5, sizes={"train": 0, "single_test": len(CATALOGUE), "multiple_test": 0}, progress=False,
                        validate="inprocess")
    assert {t.functions[0] for t in suite["single_test"]} == {e.key for e in CATALOGUE}
    assert suite.manifest["functions_covered"] == len(CATALOGUE)
    assert sum(t.metadata["style"] in ("call", "list", "scalar") for t in suite["single_test"]) > len(CATALOGUE) // 3


def test_in_process_check_catches_a_wrong_solution(small):
    import dataclasses

    good = small["train"][0]
    # the right code against another task's expectations stands for a wrong answer
    other = small["train"][1].test_cases[0].output
    wrong = dataclasses.replace(good, id="wrong", test_cases=tuple(type(c)(c.input, other) for c in good.test_cases))
    broken = dataclasses.replace(good, id="broken", library_solution=good.library_solution.replace("return ", "return len(", 1) + ")")
    failures = validation.check_in_process([good, wrong, broken], small.library)
    assert set(failures) == {"wrong", "broken"}


def test_failed_tasks_are_regenerated(monkeypatch):
    calls = []

    def flaky(tasks, library, profiles=validation.PROFILES):
        calls.append([t.id for t in tasks])
        return {tasks[0].id: "forced failure"} if len(calls) == 1 else {}

    monkeypatch.setattr(validation, "check_in_process", flaky)
    suite = build_suite(0, sizes={"train": 3, "single_test": 0, "multiple_test": 0}, progress=False, validate="inprocess")
    assert calls[1] == [suite["train"][0].id]
    assert suite["train"][0].metadata["attempt"] == 1 and suite["train"][1].metadata["attempt"] == 0
    assert suite.manifest["validation"]["stats"]["train"]["regenerated"] == 1


def test_same_seed_same_bytes_and_seeds_differ(tmp_path, small):
    again = build_suite(0, sizes=SMALL, progress=False, validate="inprocess")
    a, b = small.write(tmp_path / "a"), again.write(tmp_path / "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) == 5
    for rel in files:
        assert filecmp.cmp(a / rel, b / rel, shallow=False), rel
    other = build_suite(1, sizes=SMALL, progress=False, validate="inprocess")
    assert not set(small.library.names.values()) & set(other.library.names.values())
    assert [t.hash for t in other["train"]] != [t.hash for t in small["train"]]


def test_determinism_across_processes(small):
    code = (
        "from se_gym.tasks import build_suite;"
        f"s = build_suite(0, sizes={SMALL!r}, progress=False, validate=False);"
        "print(s.manifest['hashes'])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    assert out.stdout.strip() == str(dict(small.manifest["hashes"]))


def test_written_suite_reads_back_in_official_layout(tmp_path, small):
    out = small.write(tmp_path / "suite")
    assert (out / "datasets/train/train.jsonl").exists() and (out / "datasets/test/multiple_test.jsonl").exists()
    back = load_suite(out)
    for split in small.splits:
        assert back[split] == small[split]
    row = json.loads((out / "datasets/test/single_test.jsonl").read_text().splitlines()[0])
    assert {"query", "function_name", "test_cases", "example", "right_exe_result", "example_output", "selected_functions"} <= set(row)
    lib = official(out / "datasets/train/api_doc.jsonl")  # the docs file is a valid official api_doc
    assert dict(lib.names) == dict(small.library.names)


def test_builtin_tasks_cache(monkeypatch):
    first = builtin_tasks("train", seed=2, sizes=SMALL)
    import se_gym.tasks.builtin as builtin

    monkeypatch.setattr(builtin, "build_suite", lambda *a, **k: pytest.fail("cache was not used"))
    assert builtin_tasks("train", seed=2, sizes=SMALL) == first
    assert len(builtin_tasks("multiple_test", seed=2, sizes=SMALL)) == SMALL["multiple_test"]


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(TaskError, match="unknown split 'dev'"):
        build_suite(0, sizes={"dev": 3})
    with pytest.raises(TaskError, match="not in the catalogue"):
        build_suite(0, functions=["no_such_function"])
    with pytest.raises(TaskError, match="seed"):
        build_suite(-1)
    with pytest.raises(TaskError, match="split must be"):
        builtin_tasks("dev")


def test_functions_filter_and_custom_library():
    lib = mint(7, package="qq")
    suite = build_suite(0, library=lib, sizes={"train": 4, "single_test": 2, "multiple_test": 0},
                        functions=["abs", "norm"], progress=False, validate="inprocess")
    assert {t.functions[0] for t in suite["train"]} == {"abs", "linalg.norm"}
    assert all("import qq" in t.library_solution for t in suite["train"])


def test_cli_build_and_show(tmp_path, capsys):
    from se_gym.cli import main

    out = tmp_path / "suite"
    assert main(["tasks", "build", "--seed", "3", "--out", str(out), "--sizes", "train=6,single_test=3,multiple_test=3",
                 "--no-validate"]) == 0
    assert "train 6" in capsys.readouterr().out
    assert main(["tasks", "show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "train: 6 tasks" in text and "multiple_test: 3 tasks" in text
    assert main(["tasks", "build", "--out", str(tmp_path / "x"), "--sizes", "train=x"]) == 2
    assert "expected SPLIT=COUNT" in capsys.readouterr().err
    # a task spec where a folder goes: one line naming it and the flag that was meant
    assert main(["tasks", "show", "builtin:3"]) == 2
    assert "no task files found in builtin:3 (the built-in suite: --seed N)" in capsys.readouterr().err


def test_judge_agrees_with_the_suite(small):
    tasks = list(small["train"][:6]) + list(small["multiple_test"][:3])
    assert validation.check_with_judge(tasks, small.library) == {}


def test_judge_validation_flags_a_broken_task(small):
    from dataclasses import replace

    good = small["train"][0]
    pkg = small.library.package
    wrong_code = good.library_solution.replace("return ", "return 0 * 7 + 12345 if True else ", 1)
    broken = replace(good, id=good.id + "-broken", library_solution=wrong_code)
    numpy_passes = replace(good, id=good.id + "-np", reference_solution=good.library_solution)  # "reference" that uses only the library
    failures = validation.check_with_judge([good, broken, numpy_passes], small.library, profiles=("strict",))
    assert set(failures) == {broken.id, numpy_passes.id}
    assert "library solution" in failures[broken.id] and "numpy reference" in failures[numpy_passes.id]
    assert pkg in good.library_solution


def test_two_libraries_checked_in_one_process():
    """The in-process check of a second library used the first library's server: a client whose
    channel was unset took any socket on fd 4 (the sandbox's place for its server) for its own, and
    the first library's spawned server sat there.  ``se-gym validate --libraries 10`` builds ten
    suites in one process; every build after the first failed ("no attempt out of 12")."""
    code = (
        "import os\n"
        "while os.open(os.devnull, os.O_RDONLY) < 3:\n"  # the next free fd is 4: where the first server lands
        "    pass\n"
        "from se_gym.tasks import build_suite\n"
        "from se_gym.tasks.builtin import validate as V\n"
        "small = {'train': 4, 'single_test': 0, 'multiple_test': 0}\n"
        "a, b = (build_suite(s, sizes=small, progress=False, validate=False) for s in (0, 1))\n"
        "print(V.check_in_process(a['train'], a.library, ('strict',)) or 'ok')\n"
        "print(V.check_in_process(b['train'], b.library, ('strict',)) or 'ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["ok", "ok"], out.stdout[-2000:]


def test_every_spec_has_a_reference_whose_results_depend_on_the_library():
    """Issue 42's dependence check demands nothing of a case whose reference result stays the same
    when the library's results change; a task all of whose cases are such paid any answer that named
    the library (a shape by ``len()``, a conversion by ``int()``).  On every seed, 19 tasks were:
    the specs of ``shape``, ``size``, ``atleast_3d``, ``astype`` (pure queries and conversions,
    which the counterfactual library left real) and ``empty`` (whose reference overwrote the whole
    allocation in Python).  One task of every single-function spec, its reference judged as an
    answer with itself as the reference: it passes, and some case depends on the library."""
    from se_gym.judge import Judge
    from se_gym.tasks.builtin.generate import make_task

    lib = mint(0)
    specs = [s for ss in specs_by_function().values() for s in ss]
    tasks = [make_task(s, split="train", seed=0, index=i, library=lib) for i, s in enumerate(specs)]
    with Judge(lib, profile="strict", dependence=True) as judge:
        got = judge.judge_many([(f"```python\n{t.library_solution}\n```", t.test_cases, t.function_name, None, t.library_solution)
                                for t in tasks])
    failed = [(t.functions, v.status.value, v.detail[:80]) for t, v in zip(tasks, got) if not v.passed]
    assert not failed, failed
    flat = [t.functions for t, v in zip(tasks, got) if set(v.dependence["cases"]) == {"independent"}]
    assert not flat, f"{len(flat)} of {len(tasks)} specs' results do not depend on the library: {flat}"
