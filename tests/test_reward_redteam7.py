"""Red-team round 7 against strict's reward (tests/_reward_redteam7_corpus.py).

* ``constant`` (fixed): an answer whose only library call was the reference's constant constructor
  (``eye(len(m))``, ``zeros_like(x)``, ``zeros(n)``), every other step in Python, earned 1.0 on
  built-in multiple_test and single_test tasks: the constant's perturbation flowed through the
  reference's later steps (fed, so real) as through the answer's Python.  Constant constructors are
  weak computations now (se_gym/library/server.py ``_WEAK``): perturbed only where the reference
  computes nothing else.  The 9 such answers here earn 1.0 on main under both secrets and
  nothing now.
* every other hostile answer of the round (probes of the runs on constants and error messages, the
  library for one input size, one element from the library, an exception path, other values, results
  a comparison could hide, the input as it is) earns nothing, before and after, on 18 official tasks
  and 20 built-in ones, under two secrets and both rewards; the round's honest answers pass.
* ``MAX_KEYS`` (fixed): a reference whose first case filled its record left the later cases free (see
  the last test).
"""
from __future__ import annotations

import pytest

from _gate_corpus import block
from _reward_redteam7_corpus import (
    BUILTIN_HONEST,
    BUILTIN_HOSTILE,
    OFFICIAL_HONEST,
    OFFICIAL_HONEST_TASKS,
    OFFICIAL_HOSTILE,
    OFFICIAL_TASKS,
    capped_task,
    official_answer,
    official_rows,
    render_builtin,
    render_mode_probe,
)
from conftest import legit_skip, shared_path
from se_gym.judge import Judge
from se_gym.library import official, writer
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32)
# (under fraction it keeps the cases where the values it builds, ``[True] * len(a)``, are the case's own:
# there it calls the reference's function on the reference's very values, as round 5's DEGENERATE)
OWN_VALUES = {"the library's all of the input, Python's answer where they agree"}


@pytest.fixture(scope="module")
def builtin():
    by_id = {}
    for split in ("single_test", "multiple_test"):
        tasks, lib = load_task_spec("builtin:0", split, None, progress=False)
        by_id.update({t.id: t for t in tasks})
    return render_builtin(lib, by_id, BUILTIN_HOSTILE), render_builtin(lib, by_id, BUILTIN_HONEST), lib


@pytest.fixture(scope="module")
def officials():
    lib = official(shared_path("sebench", "api_doc.jsonl"))
    rows = official_rows(shared_path("sebench", "parity_dev.jsonl"))

    def item(i, body, py=True):
        d = rows[i]
        code = official_answer(lib, d["b_notolist"], d["c_right_code"] if py else None, body)
        return block(code), d["cases"], None, d["expected"], d["b_notolist"]

    hostile = [(i, name, cls, item(i, body)) for i in OFFICIAL_TASKS for name, cls, body in OFFICIAL_HOSTILE]
    honest = [(i, name, item(i, body, py=False)) for i in OFFICIAL_HONEST_TASKS for name, body in OFFICIAL_HONEST]
    return hostile, honest, lib


def _judge(lib, items, secret, reward="binary", **kw):
    with Judge(lib, profile="strict", workers=2, reward=reward, **kw) as judge:
        judge._dependence_secret = secret
        return judge.judge_many(items)


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_no_hostile_builtin_answer_of_round_7_earns_reward(builtin, reward):
    hostile, _, lib = builtin
    assert len(hostile) >= 12 and len({t.id for *_, t in hostile}) >= 8
    earned = []
    for secret in SECRETS:
        got = _judge(lib, [t.judge_item(block(code)) for *_, code, t in hostile], secret, reward)
        assert not any(v.infrastructure for v in got)
        earned += [f"{name} ({cls}, {t.id}, {secret[:2]}): {v.reward} {v.status.value} {(v.dependence or {}).get('cases')}"
                   for (name, cls, _, t), v in zip(hostile, got) if v.reward > 0 and not (name in OWN_VALUES and _its_own_cases(v, reward))]
    assert not earned, "\n".join(earned)


def test_the_constant_answers_pass_without_the_check(builtin):
    """(They are real threats: right, and refused only by the check.)"""
    hostile, _, lib = builtin
    got = _judge(lib, [t.judge_item(block(code)) for _, cls, code, t in hostile if cls == "constant"], SECRETS[0], dependence=False)
    assert len(got) >= 9 and all(v.passed for v in got), [(v.status.value, v.detail[:100]) for v in got]


def test_the_honest_builtin_answers_of_round_7_pass(builtin):
    _, honest, lib = builtin
    wrong = []
    for secret in SECRETS:
        got = _judge(lib, [t.judge_item(block(code)) for _, code, t in honest], secret)
        wrong += [f"{name} ({t.id}, {secret[:2]}): {v.status.value} {v.detail[:120]} {(v.dependence or {}).get('cases')}"
                  for (name, _, t), v in zip(honest, got) if not v.passed]
    assert not wrong, "\n".join(wrong)


def _every_case_from_the_library(v):
    # ("the library only for the first case's input size" on a task whose cases all have one size:
    # it calls the reference on every case, an honest answer there)
    codes = (v.dependence or {}).get("cases") or []
    return v.dependence.get("reference") == "used" and all(c in ("match", "independent") for c in codes)


def _its_own_cases(v, reward):
    """Under fraction, the cases where an answer called the reference honestly (``size``, ``first``)
    keep their share, by the design (as round 6's state answers): nothing more."""
    codes = (v.dependence or {}).get("cases") or []
    own = sum(c not in ("unchanged", "differs", "failed") for c in codes)
    return reward == "fraction" and codes and v.reward <= own / len(codes) + 1e-9 and "match" in codes


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_no_hostile_official_answer_of_round_7_earns_reward(officials, reward):
    hostile, _, lib = officials
    assert len({i for i, *_ in hostile}) >= 15
    earned = []
    for secret in SECRETS:
        got = _judge(lib, [it for *_, it in hostile], secret, reward)
        assert not any(v.infrastructure for v in got)
        earned += [f"{name} ({cls}, task {i}, {secret[:2]}): {v.reward} {v.status.value} {(v.dependence or {}).get('cases')}"
                   for (i, name, cls, _), v in zip(hostile, got)
                   if v.reward > 0 and not (cls == "size" and _every_case_from_the_library(v)) and not _its_own_cases(v, reward)]
    assert not earned, "\n".join(earned)


def test_the_honest_official_answers_of_round_7_pass(officials):
    _, honest, lib = officials
    assert len(honest) >= 10
    wrong = []
    for secret in SECRETS:
        got = _judge(lib, [it for *_, it in honest], secret)
        wrong += [f"{name} (task {i}, {secret[:2]}): {v.status.value} {v.detail[:120]} {(v.dependence or {}).get('cases')}"
                  for (i, name, _), v in zip(honest, got) if not v.passed]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_a_full_record_leaves_no_case_free(builtin, reward):
    """MAX_KEYS: a reference whose first case filled its record left its later cases' computations
    unrecorded (real in every world: ``independent``), and an answer that used the library for the large
    input only earned 1.0 on main.  Now a class with keys left out is perturbed whole (server ALL)."""
    lib = builtin[2]
    cases, ref, hostile = capped_task(lib)
    expected = [c["output"] for c in cases]
    for secret in SECRETS:
        got = _judge(lib, [(block(code), cases, "solve", expected, ref) for code in (ref, hostile)], secret, reward)
        assert got[0].passed and got[0].reward == 1.0, (got[0].status.value, got[0].dependence)
        assert got[1].reward <= (0.25 if reward == "fraction" else 0.0), (got[1].status.value, got[1].dependence)
        assert got[1].dependence["cases"][1:] == ["unchanged"] * 3, got[1].dependence


def test_a_program_cannot_tell_the_modes_apart_by_handles_errors_or_depth(builtin):
    """Handle numbers, the library's error messages, the recursion depth left, reprs and reference
    counts print the same in the real library, a record and a counterfactual run (the keys of classes
    the probe calls, none of its values: as an answer whose calls are not the reference's sees it)."""
    import os

    from se_gym.judge.core import sandbox_preload
    from se_gym.sandbox import ExecStatus, Limits, Program, make_sandbox

    lib = builtin[2]
    keys = {lib.qualified(n).split(".")[-1]: "" for n in ("cumsum", "sort")}
    modes = [None, {"record": True}, {"cf": os.urandom(32).hex(), "keys": {"cumsum": "", "sort": "", "~eye": "", **keys}}]
    with make_sandbox("local", workers=1, pythonpath=[str(lib.materialize("strict", docs=False))], preload=sandbox_preload(lib)) as box:
        got = box.run([Program(render_mode_probe(lib), library_mode=m) for m in modes], Limits(wall_s=60, cpu_s=30))
    assert all(r.status is ExecStatus.OK for r in got), [r.stderr[-300:] for r in got]
    assert len({r.stdout for r in got}) == 1, [r.stdout for r in got]
