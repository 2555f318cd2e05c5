"""The strict gate against two corpora of our own (issue 31): honest-but-unusual answers on real
built-in tasks, which the permissive gate (strict's default with the out-of-process library) must
accept, and hostile answers of every class of the issue plus a seeded fuzzer, which must earn
nothing under ``strict``, with either gate.
"""
from __future__ import annotations

import ast
import os

import pytest

from _dependence_corpus import ORACLES, fuzz_named_unused
from _gate_corpus import CASES, STYLES, block, fuzz_programs, fuzz_walk_programs, honest_answers, hostile_answers
from conftest import legit_skip
from se_gym.judge import Judge, gates
from se_gym.judge.extract import entry_function
from se_gym.judge.gates import library_use, official_static_gate, open_check, star_names, strict_check
from se_gym.library import mint, writer
from se_gym.tasks.spec import load_task_spec

# three seed-0 train tasks of different shapes: a list of floats, a scalar, an array (wrapped print)
TASK_IDS = ("builtin/s0/train/0000", "builtin/s0/train/0001", "builtin/s0/train/0012")
LIB7 = mint(7)


@pytest.fixture(scope="module")
def suite():
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    return [t for t in tasks if t.id in TASK_IDS], lib


@pytest.fixture(scope="module")
def honest(suite):
    tasks, lib = suite
    return honest_answers(tasks, lib), lib


def test_the_permissive_gate_accepts_every_honest_answer(honest):
    answers, lib = honest
    assert len(STYLES) >= 60 and len(answers) == 3 * len(STYLES)
    # (as the judge applies it: refused code only in a main block, or in definitions only it uses, is
    # skipped, never run; round 7)
    refused = [f"{name} ({t.id}): {v[0]}" for name, _, code, t in answers
               if (v := open_check(code, lib.package)) and getattr(gates, "without_refused_demo", lambda *a: None)(code, lib.package, v, "solve") is None]
    assert not refused, "\n".join(refused)
    # and the permissive rule for using the library holds for each (a helper or an alias may call it)
    missing = [f"{name}: {why}" for name, _, code, _ in answers
               if (why := library_use(ast.parse(code + f"import {lib.package}\n"), "solve", lib.package, star_names=star_names(lib)))]
    assert not missing, "\n".join(missing)
    # the closed gate (SE_GYM_STRICT_SERVER=0's) refuses many of them: the reason for the permissive one
    closed = sum(not strict_check(code, lib.package, lib.linalg, permissive=False) for _, _, code, _ in answers)
    print(f"honest answers accepted: closed gate {closed}/{len(answers)}, permissive gate {len(answers)}/{len(answers)}")
    assert closed < len(answers)


def test_the_official_static_gate_is_as_each_style_says(honest):
    answers, lib = honest
    wrong = []
    for name, official, code, t in answers:
        src = code + f"import {lib.package}\n"  # (officially the entry is the first function defined)
        ok, why = official_static_gate(src, entry_function(src), lib.package, lib.names.get("array", "array"))
        if ok != official:
            wrong.append(f"{name} ({t.id}): official gate {ok} ({why}), the corpus says {official}")
    assert not wrong, "\n".join(wrong)


def test_honest_answers_score_one_end_to_end_under_sebench(honest):
    """Where SE-Bench's rules apply (its entry, the first function defined, is ``solve`` and calls the
    library), each honest answer runs and passes every case under ``sebench``."""
    answers, lib = honest
    chosen = [(name, code, t) for name, official, code, t in answers if official and entry_function(code) == "solve"]
    assert len(chosen) >= 90
    with Judge(lib, profile="sebench", workers=2) as judge:
        verdicts = judge.judge_many([(block(code), t.test_cases, t.function_name) for _, code, t in chosen])
    failed = [f"{name} ({t.id}): {v.status.value} {v.detail[:160]}" for (name, _, t), v in zip(chosen, verdicts) if not v.passed]
    assert not failed, f"{len(failed)} of {len(chosen)} failed:\n" + "\n".join(failed[:10])


def test_honest_answers_score_one_end_to_end_under_strict(honest):
    """Every honest answer passes every case under ``strict`` (the permissive gate, the run-time wall
    with its allowances for dataclasses and typing.overload, the library out of process), and the
    library dependence check (issue 42) with its task's reference: its results come from the library."""
    if not writer.uses_server("strict"):
        legit_skip("SE_GYM_STRICT_SERVER=0: strict keeps the closed gate")
    answers, lib = honest
    with Judge(lib, profile="strict", workers=2) as judge:
        verdicts = judge.judge_many([t.judge_item(block(code)) for _, _, code, t in answers])
    failed = [f"{name} ({t.id}): {v.status.value} {v.detail[:160]}" for (name, _, _, t), v in zip(answers, verdicts) if not v.passed]
    assert not failed, f"{len(failed)} of {len(answers)} failed:\n" + "\n".join(failed[:10])
    assert all(v.dependence["reference"] == "used" and "match" in v.dependence["cases"] for v in verdicts)


def test_the_permissive_rule_for_the_library_refuses_answers_that_do_not_use_it():
    pkg = LIB7.package
    for code, why in (
        ("def solve(x):\n    return [abs(v) for v in x]\n", "does not use"),
        (f"def helper(x):\n    return {pkg}.abs(x)\ndef solve(x):\n    return [abs(v) for v in x]\n", "does not use"),
        (f"def solve(x):\n    {pkg}.abs(x)\n", "returns no value"),
        (f"def helper(x):\n    return {LIB7.qualified('array')}(x)\ndef solve(x):\n    return [abs(v) for v in helper(x)]\n", "array constructor"),
        ("def other(x):\n    return x\n", "not found"),
    ):
        assert why in library_use(ast.parse(code + f"import {pkg}\n"), "solve", pkg, LIB7.names.get("array", "array")), code


def test_the_switch_follows_the_out_of_process_library(monkeypatch):
    """The permissive gate is the strict default exactly where the library is out of process."""
    code = f"import {LIB7.package}\nclass A:\n    @property\n    def v(self):\n        return 1\ndef solve(x):\n    return {LIB7.qualified('abs')}(x)\n"
    assert gates.PERMISSIVE_STRICT is writer.STRICT_SERVER
    if writer.STRICT_SERVER:
        assert not strict_check(code, LIB7.package, LIB7.linalg) and gates.FORBIDDEN_BUILTINS == gates.OPEN_BUILTINS
        assert "maxsize" in gates.module_attributes("sys") and "modules" not in gates.module_attributes("sys")
    monkeypatch.setattr(gates, "PERMISSIVE_STRICT", False)
    monkeypatch.setattr(gates, "ALLOWED_MODULES", gates.CLOSED_MODULES)
    monkeypatch.setattr(gates, "FORBIDDEN_BUILTINS", gates.CLOSED_BUILTINS)
    assert strict_check(code, LIB7.package, LIB7.linalg)


# ----------------------------------------------------------------------------------- hostile
REF7 = f"import {LIB7.package}\ndef solve(x):\n    return [float(v) for v in {LIB7.qualified('abs')}(x)]\n"


def _judge_hostile(judge: Judge, answers: dict[str, str]) -> list[str]:
    """Each answer with the task's reference (``REF7``: strict's library dependence check runs it
    beside the answer, issue 42), then the honest one.  A hostile answer computes the right value
    only where its route worked (with NumPy in its own process, or a forged report): so a case
    right in the real run is a wall's failure, even where the dependence check then took the
    reward away (``library_unused``), and it is reported as one."""
    names = list(answers)
    verdicts = judge.judge_many([(answers[n], CASES, None, None, REF7) for n in names] + [(block(REF7), CASES, None, None, REF7)])
    assert verdicts[-1].passed, f"the honest answer in the batch: {verdicts[-1].detail}"
    return [f"{n}: {v.status.value} reward={v.reward} ({v.detail[:120]})" for n, v in zip(names, verdicts)
            if v.reward > 0 or v.passed or v.infrastructure or any(c.ok for c in v.cases)]


@pytest.fixture(scope="module")
def strict_judge():
    with Judge(LIB7, profile="strict", workers=2, reward="fraction") as judge:
        yield judge


def test_hostile_answers_earn_nothing_under_strict(strict_judge):
    """Every class of issue 31 (reflection through allowed modules and unchecked syntax, the library's
    own objects, NumPy hooks carried in C containers, hook classes built indirectly), fraction reward:
    not even one case may pass.  Under the permissive gate most of these reach the run time, where
    today's in-process NumPy would be found (benchmarks/gate_corpora.py measures which)."""
    hostile = hostile_answers(LIB7)
    assert len({cls for cls, _ in hostile.values()}) == 4 and len(hostile) >= 40
    gamed = _judge_hostile(strict_judge, {name: answer for name, (_, answer) in hostile.items()})
    assert not gamed, "\n".join(gamed)


def test_the_permissive_gate_still_refuses_what_names_its_route():
    """What the permissive gate refuses on its own (the route named in the code: a dangerous attribute,
    keyword, class pattern, string, a module used as a value, hooks defined by name)."""
    refused = {name for name, (_, answer) in hostile_answers(LIB7).items()
               if open_check(answer.split("```python\n")[1].split("```")[0], LIB7.package)}
    for name in ("functools.update_wrapper copies __globals__", "match class pattern __globals__",
                 "match class pattern __subclasses__", "attrgetter with a dotted dunder path", "str.format walks attributes",
                 "sys module as a value", "enum helper hands back getattr", "library function __globals__",
                 "library private module", "hook class inside a deque", "type(int) builds the hook class",
                 "metaclass subclass builds the hook class", "Enum functional API carries a hook"):
        assert name in refused, name


def test_fuzzed_reflective_and_hook_programs_earn_nothing_under_strict(strict_judge):
    """Seeded random programs (SE_GYM_FUZZ_SEED, default 0): reflective chains from the objects an
    answer has, and NumPy-hooked objects made several ways and carried in containers."""
    seed = int(os.environ.get("SE_GYM_FUZZ_SEED", "0"))
    programs = fuzz_programs(LIB7, seed, 40)
    print(f"fuzz seed {seed}: {len(programs)} programs")
    gamed = _judge_hostile(strict_judge, {f"fuzz {seed}/{i}": p for i, p in enumerate(programs)})
    assert not gamed, "\n".join(gamed)


def test_fuzzed_named_but_unused_programs_earn_nothing_under_strict():
    """Seeded random answers (SE_GYM_FUZZ_SEED, default 0) that compute the right result in plain
    Python and only name the library, one to three ways at once (bare mentions, dropped calls, dead
    branches, code after return, lambdas never called, the library on constants or for a shape, its
    result times zero), in the entry function, a helper, a method or after the return, under an
    alias or not: each passes every case; with the dependence check (issue 42) none earns reward."""
    if not writer.uses_server("strict"):
        legit_skip("SE_GYM_STRICT_SERVER=0: the dependence check is a mode of the library server")
    seed = int(os.environ.get("SE_GYM_FUZZ_SEED", "0"))
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    programs = fuzz_named_unused([t for t in tasks if t.id in ORACLES], lib, seed, 40)
    print(f"named-but-unused fuzz seed {seed}: {len(programs)} programs")
    with Judge(lib, profile="strict", workers=2, reward="fraction") as judge:
        verdicts = judge.judge_many([t.judge_item(block(code)) for _, code, t in programs])
    gamed = [f"{name} ({t.id}): {v.status.value} reward={v.reward}\n{code}" for (name, code, t), v in zip(programs, verdicts) if v.reward > 0]
    assert not gamed, "\n".join(gamed)
    assert sum(v.status.value == "library_unused" for v in verdicts) >= 0.8 * len(programs)  # (the rest: the gate)


def test_fuzzed_frame_and_handler_walks_earn_nothing_under_strict(strict_judge):
    """Issue 42: seeded random programs (SE_GYM_FUZZ_SEED, default 0) that get a frame (a signal
    handler, a traceback, a generator, sys._getframe), walk back and look for NumPy, a nonce to
    forge the channel with, the harness's results to rewrite or the wall's state to switch off.
    Each passes the permissive gate: the run time must stop it."""
    seed = int(os.environ.get("SE_GYM_FUZZ_SEED", "0"))
    programs = fuzz_walk_programs(LIB7, seed, 40)
    assert not [p for p in programs if open_check(p.split("```python\n")[1].split("```")[0], LIB7.package)]
    gamed = _judge_hostile(strict_judge, {f"walk {seed}/{i}": p for i, p in enumerate(programs)})
    assert not gamed, "\n".join(gamed)


def test_under_the_closed_gate_hostile_answers_earn_nothing_either(strict_judge, monkeypatch):
    """The closed gate (SE_GYM_STRICT_SERVER=0's), with whatever library this run uses: nothing earns
    reward there either (the walls are independent)."""
    monkeypatch.setattr(gates, "PERMISSIVE_STRICT", False)
    monkeypatch.setattr(gates, "ALLOWED_MODULES", gates.CLOSED_MODULES)
    monkeypatch.setattr(gates, "FORBIDDEN_BUILTINS", gates.CLOSED_BUILTINS)
    answers = {name: answer for name, (_, answer) in hostile_answers(LIB7).items()}
    answers.update({f"fuzz 1/{i}": p for i, p in enumerate(fuzz_programs(LIB7, 1, 40))})
    gamed = _judge_hostile(strict_judge, answers)
    assert not gamed, "\n".join(gamed)
