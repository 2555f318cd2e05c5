"""Strict's run-time library dependence check (issue 42): a passing answer's results must come from
the library, as the task's reference's do (se_gym/judge/dependence.py, the library server's
counterfactual mode in se_gym/library/server.py).

The red team (tests/_dependence_corpus.py): answers that compute the right result in plain Python
and only name the library (a bare mention, a dropped call, a dead branch, code after ``return``, a
default argument, a lambda never called, the library on a constant or for a shape only...), and
answers that run the reference's own library code to detect the counterfactual library.  Each
passes every case: without the check each earns 1.0, with it none earns anything.  The honest
side: the 213 honest-but-unusual answers of tests/_gate_corpus.py (in test_gate_corpora.py) and
honest answers that split the work between the library and Python otherwise than the reference.
"""
from __future__ import annotations

import json
import logging
import math
import os
import socket
import struct
import threading

import pytest

from _dependence_corpus import DETECTORS, HELPERS, ORACLES, QUERY_TASKS, SHAPES, _fields, honest_alternatives, named_unused, query_answers
from _gate_corpus import block
from conftest import legit_skip, strict_server_module
from se_gym.judge import Judge, JudgeError
from se_gym.judge.extract import fenced
from se_gym.judge.types import Status
from se_gym.library import writer
from se_gym.sandbox import ExecStatus, Limits, Program
from se_gym.sandbox.base import Sandbox, sandbox_error
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")


@pytest.fixture(scope="module")
def suite():
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    by_id = {t.id: t for t in tasks}
    return [by_id[i] for i in ORACLES], lib


@pytest.fixture(scope="module")
def judge(suite):
    with Judge(suite[1], profile="strict", workers=2) as j:
        yield j


def _items(rows):
    return [(block(code), t.test_cases, t.function_name, None, t.library_solution) for *_, code, t in rows]


def test_named_but_unused_answers_pass_every_case_and_earn_nothing(suite, judge):
    tasks, lib = suite
    rows = [r for r in named_unused(tasks, lib) if r[0] in SHAPES]
    assert len({name for name, *_ in rows}) == len(SHAPES) >= 15
    with Judge(lib, profile="strict", workers=2, dependence=False) as off:  # the hole: without the check
        before = off.judge_many(_items(rows))
    ran = [r for r, v in zip(rows, before) if v.status is not Status.STATIC_GATE]
    assert all(v.passed for v in before if v.status is not Status.STATIC_GATE), [
        (name, v.status.value, v.detail[:80]) for (name, _, _), v in zip(rows, before) if not v.passed and v.status is not Status.STATIC_GATE]
    assert len(ran) >= len(rows) - 2 * len(tasks)  # (only "a length" of the constructor alone fails the gate)
    after = judge.judge_many(_items(ran))
    gamed = [f"{name} ({t.id}): {v.status.value} {v.reward}" for (name, _, t), v in zip(ran, after) if v.reward > 0]
    assert not gamed, "\n".join(gamed)
    assert all(v.status is Status.LIBRARY_UNUSED and v.dependence["reference"] == "used" for v in after), [
        (name, v.status.value) for (name, _, _), v in zip(ran, after) if v.status is not Status.LIBRARY_UNUSED]
    assert {c for v in after for c in v.dependence["cases"]} <= {"unchanged", "differs", "independent"}


def test_the_detecting_adversary_earns_nothing(suite, judge):
    """It runs the reference's own library code on the input and, when that differs from its
    Python result (the counterfactual library), returns something else, raises, or scales its
    result by what a probe of another function returned: all 0.  Returning the library's own
    result on detection is computing with the library, and passes."""
    tasks, lib = suite
    rows = [r for r in named_unused(tasks, lib) if r[0] in DETECTORS]
    verdicts = judge.judge_many(_items(rows))
    gamed = [f"{name} ({t.id}): {v.status.value}" for (name, _, t), v in zip(rows, verdicts) if v.reward > 0]
    assert not gamed, "\n".join(gamed)
    assert all(v.status is Status.LIBRARY_UNUSED for v in verdicts)
    yields = []
    for t in tasks:
        f = _fields(t, lib)
        yields.append((block(HELPERS + "import {P}\n{lib}\ndef solve({params}):\n{py}\n    got = _lib({params})\n"
                             "    return value if _same(got, value) else got\n".format(**f)), t.test_cases, t.function_name, None, t.library_solution))
    assert all(v.passed and set(v.dependence["cases"]) <= {"match", "independent"} for v in judge.judge_many(yields))


def test_honest_answers_that_split_the_work_otherwise_pass(suite, judge):
    """Part of the work in Python (before or after the library), other call forms (per element, per
    column, keyword or positional axis), aliases, a shortcut for empty input: they pass.  Those that
    compute the task's core with other library functions than the reference (ptp for max - min,
    clip for maximum) are refused, as docs/security.md says."""
    tasks, lib = suite
    rows = honest_alternatives(tasks, lib)
    assert sum(e == "pass" for _, e, _, _ in rows) >= 25
    verdicts = judge.judge_many(_items(rows))
    wrong = [f"{name} ({t.id}): expected {expect}, got {v.status.value} {v.detail[:100]} {v.dependence}"
             for (name, expect, _, t), v in zip(rows, verdicts) if (v.passed) != (expect == "pass")]
    assert not wrong, "\n".join(wrong)
    assert all(v.reward == 0 and v.status is Status.LIBRARY_UNUSED for (_, e, _, _), v in zip(rows, verdicts) if e == "reject")
    # a part done in Python before the library is matched in that function's own world
    assert any(c.startswith("match:") for (_, e, _, _), v in zip(rows, verdicts) if e == "pass" for c in v.dependence["cases"])


def test_queries_and_conversions_are_computations_of_the_counterfactual_library(judge):
    """Issue 42, task 1: on every built-in seed 19 tasks (shape, size, the shape of atleast_3d,
    astype, empty) had a reference whose results the counterfactual library did not move: every
    case was "independent", and an answer that named the library and computed in Python (a shape by
    ``len``) earned 1.0.  Now queries (functions and the array's attributes alike) and conversions
    are computations and the empty spec accumulates its allocation: the plain-Python answers earn
    nothing, the honest ones pass, and those that take the query from another function (or ``len``)
    are refused, by design.  The plain ones earned 1.0 on main's code (and still do without the check)."""
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    rows = query_answers([t for t in tasks if t.id in QUERY_TASKS], lib)
    assert {t.id for *_, t in rows} == set(QUERY_TASKS) and sum(e == "plain" for _, e, _, _ in rows) >= 6
    verdicts = judge.judge_many(_items(rows))
    wrong = [f"{name} ({t.id}): expected {expect}, got {v.status.value} {v.detail[:100]} {v.dependence}"
             for (name, expect, _, t), v in zip(rows, verdicts) if v.passed != (expect == "pass")]
    assert not wrong, "\n".join(wrong)
    for (name, expect, _, t), v in zip(rows, verdicts):
        if expect == "pass":
            assert "independent" not in v.dependence["cases"], (name, v.dependence)
        else:
            assert v.reward == 0 and v.status is Status.LIBRARY_UNUSED, (name, v.status, v.detail)
    plain = [r for r in rows if r[1] == "plain"]
    with Judge(lib, profile="strict", workers=2, dependence=False) as off:  # (the hole, without the check)
        assert all(v.reward == 1.0 for v in off.judge_many(_items(plain)))


def test_a_case_where_even_the_reference_does_not_depend_on_the_library_demands_nothing(suite, judge):
    _, lib = suite
    cumsum, P = lib.qualified("cumsum"), lib.package
    ref = f"import {P}\n\ndef solve(x):\n    return [float(v) for v in {cumsum}(x)]\n"
    cases = [{"input": "x=[1.5, 2.0, -4.0]", "output": "[1.5, 3.5, -0.5]"}, {"input": "x=[]", "output": "[]"},
             {"input": "x=[2.0]", "output": "[2.0]"}]
    shortcut = block(f"import {P}\ndef solve(x):\n    if not x:\n        return []\n    return [float(v) for v in {cumsum}(x)]\n")
    python_on_the_rest = block(f"import {P}\ndef solve(x):\n    if not x:\n        return {cumsum}(x)\n    out, acc = [], 0.0\n"
                               "    for v in x:\n        acc += v\n        out.append(acc)\n    return out\n")
    got = judge.judge_many([(shortcut, cases, "def solve(x):", None, ref), (python_on_the_rest, cases, "def solve(x):", None, ref)])
    assert got[0].passed and got[0].dependence["cases"] == ["match", "independent", "match"], got[0].dependence
    assert got[1].status is Status.LIBRARY_UNUSED and got[1].dependence["cases"] == ["unchanged", "independent", "unchanged"]


def test_fraction_reward_credits_only_cases_computed_with_the_library(suite):
    tasks, lib = suite
    t = next(t for t in tasks if t.id.endswith("0002"))  # |x - s|
    half = block(f"import {lib.package}\ndef solve(x, s):\n    if len(x) % 2:\n        return [abs(v - s) for v in x]\n"
                 f"    return [float(v) for v in {lib.qualified('abs')}([v - s for v in x])]\n")
    with Judge(lib, profile="strict", workers=2, reward="fraction") as j:
        v = j.judge_many([t.judge_item(half)])[0]
    odd = [len(eval(c.input.split("=", 1)[1].rsplit(", s=", 1)[0])) % 2 == 1 for c in t.test_cases]
    assert 0 < sum(odd) < len(odd)
    assert v.status is Status.LIBRARY_UNUSED and v.reward == pytest.approx(1 - sum(odd) / len(odd)), (v.reward, v.dependence)
    assert [c == "unchanged" for c in v.dependence["cases"]] == odd


def test_without_a_reference_the_rule_is_weaker_and_says_so(suite, judge, caplog):
    """No reference (or one that fails its own tests): every computation is perturbed and some case
    must change.  The named-but-unused shapes still earn nothing; a constant or a detector may."""
    tasks, lib = suite
    t = tasks[0]
    f = _fields(t, lib)
    bare = block(SHAPES["bare mention"].format(**f))
    honest = block(t.library_solution)
    with caplog.at_level(logging.WARNING, logger="se_gym.judge.core"):
        with Judge(lib, profile="strict", workers=1) as j:
            v = j.judge_many([(bare, t.test_cases, t.function_name), (honest, t.test_cases, t.function_name),
                              (bare, t.test_cases, t.function_name, None, "def solve(x):\n    return []\n"),
                              (honest, t.test_cases, t.function_name, None, "def solve(x):\n    return []\n")])
    assert "without reference solutions" in caplog.text
    assert v[0].status is Status.LIBRARY_UNUSED and v[0].dependence["reference"] == "none"
    assert v[1].passed and v[1].dependence["reference"] == "none" and "changed" in v[1].dependence["cases"]
    assert v[2].status is Status.LIBRARY_UNUSED and v[3].passed
    assert v[2].dependence["reference"] == "failed" and "gates" in v[2].dependence["reference_problem"]


def test_sebench_keeps_the_official_rules(suite):
    tasks, lib = suite
    t = tasks[0]
    bare = block(SHAPES["dropped call"].format(**_fields(t, lib)))
    with Judge(lib, profile="sebench", workers=1) as j:
        v = j.judge_many([t.judge_item(bare)])[0]
    assert v.passed and v.dependence is None and j.dependence is False
    with pytest.raises(JudgeError, match="profile strict"):
        Judge(lib, profile="sebench", dependence=True)
    with pytest.raises(JudgeError, match="dependence must be"):
        Judge(lib, profile="strict", dependence="yes")


class _Failing(Sandbox):
    """A test double of an infrastructure failure on demand (what the check must never score as the
    answer's): runs programs in a real local sandbox, but answers every program its ``fail`` picks
    with a sandbox error, or with its library server's word removed."""

    name = "failing"
    library_modes = True

    def __init__(self, lib, fail):
        super().__init__()
        from se_gym.judge.core import sandbox_preload
        from se_gym.sandbox import make_sandbox

        self.box = make_sandbox("local", workers=1, pythonpath=[str(lib.materialize("strict", docs=False))], preload=sandbox_preload(lib))
        self.fail = fail

    def run(self, programs, limits=None):
        from dataclasses import replace

        out = self.box.run(programs, limits)
        for i, p in enumerate(programs):
            how = self.fail(getattr(p, "library_mode", None))
            if how == "error":
                out[i] = sandbox_error("failing", "the machine went away")
            elif how == "silent":
                out[i] = replace(out[i], library_report=None)
        return out

    def isolation(self):
        return self.box.isolation()

    def _close(self):
        self.box.close()


@pytest.mark.parametrize("how", ["error", "silent"])
def test_a_failed_second_run_is_infrastructure_never_a_score(suite, how):
    tasks, lib = suite
    t = tasks[0]
    box = _Failing(lib, lambda mode: how if mode and "cf" in mode else None)
    with box, Judge(lib, profile="strict", sandbox=box) as j:
        v = j.judge_many([t.judge_item(block(t.library_solution))])[0]
    assert v.infrastructure and v.status is Status.SANDBOX_ERROR and v.reward == 0 and "dependence" in v.detail


def test_a_reference_runs_once_per_judge_and_later_answers_run_alone(suite):
    """Issue 49: the reference's record and its counterfactual outcomes are kept for the judge's life
    (one secret per judge), so a later batch on the same task runs only its answers' second runs;
    and the kept outcomes judge a later named-but-unused answer as a fresh check would.  Issue 44:
    the reference judged as an answer (validate's oracle) is its record run and its counterfactual
    runs itself: 2 runs where it took 4, none but its real run once they are kept."""
    tasks, lib = suite
    t = tasks[0]
    modes: list = []
    box = _Failing(lib, lambda mode: modes.append(mode))
    unused = next(code for name, code, task in named_unused(tasks, lib) if task is t and name in SHAPES)
    other = t.library_solution + "\n# the same code, another answer's text\n"
    with box, Judge(lib, profile="strict", sandbox=box) as j:
        first = j.judge_many([t.judge_item(fenced(t.library_solution))])[0]
        runs_first = list(modes)
        modes.clear()
        again = j.judge_many([t.judge_item(fenced(t.library_solution))])[0]
        runs_again = list(modes)
        modes.clear()
        alike = j.judge_many([t.judge_item(block(other))])[0]
        runs_alike = [m for m in modes if m]
        modes.clear()
        bad = j.judge_many([t.judge_item(block(unused))])[0]
        runs_bad = [m for m in modes if m]
    with Judge(lib, profile="strict") as fresh:  # (no reference's run shared: every run made)
        alone = fresh.judge_many([t.judge_item(block(other))])[0]
    assert first.passed and again.passed and alike.passed and first.dependence == again.dependence == alike.dependence == alone.dependence
    # the answer, recording (it is the reference's record); the reference in world "*" (the answer's too)
    # (its counterfactual run reports the fed computations it perturbed: red-team round 5)
    # (both with the judge's salt of the digests, never seen by a program: red-team round 10)
    salt = runs_first[0].get("salt")
    assert isinstance(salt, str) and len(salt) == 16
    assert runs_first == [{"record": True, "salt": salt},
                          {"cf": runs_first[1]["cf"], "keys": runs_first[1]["keys"], "fed_record": True, "salt": salt}]
    assert runs_again == [None]  # its real run: its record and its world are kept
    assert len(runs_alike) == 1 and "cf" in runs_alike[0]  # another answer's second run alone
    assert bad.status is Status.LIBRARY_UNUSED and bad.reward == 0
    assert all("cf" in m for m in runs_bad)  # (the reference ran in no mode again)


def test_an_idle_pool_runs_the_references_record_beside_the_answer(suite, monkeypatch):
    """Issue 49 (cold start): a batch smaller than the pool (an env's step) submits the reference's
    record run right after the answer's, so the check of a passing answer starts at the reference's
    counterfactual run; the record is kept, and a later answer to the task makes none."""
    from se_gym.sandbox.local import LocalSandbox

    tasks, lib = suite
    t = tasks[1]
    modes: list = []
    real = LocalSandbox.submit

    def submit(self, program, limits=None):
        modes.append(("submit", getattr(program, "library_mode", None)))
        return real(self, program, limits)

    real_run = LocalSandbox.run

    def run(self, programs, limits=None):
        modes.extend(("run", getattr(p, "library_mode", None)) for p in programs)
        return real_run(self, programs, limits)

    monkeypatch.setattr(LocalSandbox, "submit", submit)
    monkeypatch.setattr(LocalSandbox, "run", run)
    other = t.library_solution + "\n# the same code, another answer's text\n"
    with Judge(lib, profile="strict", workers=2) as j:
        first = j.judge_many([t.judge_item(block(other))])[0]
        runs_first = list(modes)
        modes.clear()
        again = j.judge_many([t.judge_item(block(other))])[0]
        runs_again = list(modes)
    assert first.passed and again.passed and first.dependence == again.dependence
    # the answer; the reference's record submitted beside it; then the check: the reference's world
    # "*" and the answer's (before: the check ran the record first, after the answer's verdict)
    assert runs_first[:2] == [("submit", None), ("submit", {"record": True, "salt": runs_first[1][1]["salt"]})] and len(runs_first) == 4
    assert "fed_record" in runs_first[2][1] and "cf" in runs_first[3][1] and "fed_record" not in runs_first[3][1]
    assert runs_again[0] == ("submit", None) and len(runs_again) == 2 and "cf" in runs_again[1][1]  # no record, no reference run again


def test_a_sandbox_without_library_modes_says_the_check_did_not_run(suite):
    tasks, lib = suite
    t = tasks[0]
    box = _Failing(lib, lambda mode: None)
    box.library_modes = False
    with box:
        with Judge(lib, profile="strict", sandbox=box) as j:
            v = j.judge_many([t.judge_item(block(t.library_solution))])[0]
        assert v.passed and v.dependence == {"ran": False, "why": "the failing sandbox runs no library servers' modes"}
        with Judge(lib, profile="strict", sandbox=box, dependence=True) as j:
            with pytest.raises(JudgeError, match="library servers' modes"):
                j.judge_many([t.judge_item(block(t.library_solution))])


def test_multi_turn_a_named_but_unused_answer_gets_feedback_then_an_honest_one_passes(suite):
    import gymnasium as gym

    tasks, lib = suite
    t = tasks[0]
    env = gym.make("SEBench-v0", tasks=[t], library=lib, max_turns=2)
    try:
        env.reset(seed=0)
        obs, reward, terminated, _, info = env.step(block(SHAPES["dead branch"].format(**_fields(t, lib))))
        assert reward == 0 and not terminated and info["verdict"].status is Status.LIBRARY_UNUSED
        assert info["verdict"].dependence["reference"] == "used"  # (the env passes the task's reference)
        assert "do not come from the library" in obs.rsplit("### Feedback", 1)[1], obs[-600:]
        _, reward, terminated, _, info = env.step(block(t.library_solution))
        assert reward == 1.0 and terminated and info["verdict"].dependence["cases"]
    finally:
        env.close()


# ------------------------------------------------------------------ the counterfactual library itself
@pytest.fixture(scope="module")
def server_module(suite, tmp_path_factory):
    return strict_server_module(suite[1], tmp_path_factory.mktemp("cf"), "cf_server")


def _session(mod, mode, requests):
    """One program's requests to a server on a socket pair, with its mode (as the worker hands it)."""
    a, b = socket.socketpair()
    a.settimeout(60)  # (a server that does not answer fails the test instead of hanging it)
    t = threading.Thread(target=mod.serve, args=(b.fileno(), None, json.dumps(mode).encode()), daemon=True)
    t.start()

    def frame(msg):
        body = json.dumps(msg).encode()
        a.sendall(struct.pack(">I", len(body)) + body)

    def reply():
        n = struct.unpack(">I", a.recv(4, socket.MSG_WAITALL))[0]
        return json.loads(a.recv(n, socket.MSG_WAITALL))

    def data(v):  # arrays (handles) by their data
        if isinstance(v, dict) and "h" in v:
            frame(["list", [], v["h"]])
            return reply()[1]
        if isinstance(v, dict) and "t" in v:
            return [data(x) for x in v["t"]]
        return v

    out = []
    for req in requests:
        frame(req)
        got = reply()
        out.append([got[0], data(got[1])] if got[0] == "ok" else got)
    a.close()
    t.join(timeout=30)
    b.close()
    said = mod.report()
    return out, json.loads(said) if said else None


def _plain(value):
    # a NumPy scalar crosses as {"g": [value, dtype]} (the client makes it a scalar of that dtype)
    if type(value) is list:
        return [_plain(x) for x in value]
    return value["g"][0] if type(value) is dict and set(value) == {"g"} else value


def _plain_session(*args):
    replies, said = _session(*args)
    return [[r[0], _plain(r[1])] for r in replies], said


def test_the_counterfactual_library_keeps_kinds_and_valid_indices(suite, server_module):
    lib = suite[1]
    n = lib.names

    def call(name, *args, **kw):
        return ["call", [], n[name], list(args), kw]

    reqs = [call("abs", [-1.5, 2.0, 0.0]), call("cumsum", [1, 2, 3]), call("greater", [1, 5], 2), call("argmax", [3, 9, 1]),
            call("argsort", [3.0, 1.0, 2.0, 0.5]), call("nonzero", [0, 1, 0, 1]), call("binary_repr", 10), call("sum", 4.0),
            call("array", [1.0, 2.0]), call("shape", [[1, 2]]), call("abs", -1.5), call("transpose", [[1.0, 2.0], [3.0, 4.0]]),
            call("abs", [v / 4 - 5 for v in range(40)]), call("abs", [-4.75, -0.25, 2.0, 4.75]), call("cumsum", list(range(-20, 20))),
            call("size", [[1, 2], [3, 4]]), call("copy", [1.5, 2.5])]
    real, _ = _plain_session(server_module, {}, reqs)
    _, record = _plain_session(server_module, {"record": True}, reqs)
    assert set(record["record"]) >= {"abs", "cumsum", "greater", "argmax", "argsort", "nonzero#0", "binary_repr", "sum"}
    secret = os.urandom(32).hex()
    cf, said = _plain_session(server_module, {"cf": secret, "keys": None}, reqs)
    again, _ = _plain_session(server_module, {"cf": secret, "keys": None}, reqs)
    other, _ = _plain_session(server_module, {"cf": os.urandom(32).hex(), "keys": None}, reqs)
    assert cf == again and cf != other and said["cf"] >= 8  # deterministic in the secret and the values
    v = [r[1] for r in cf]
    assert all(x * y > 0 for x, y in zip(v[0][:2], real[0][1][:2])) and all(a != b for a, b in zip(v[0], real[0][1]))  # signs kept
    assert 0.1 <= abs(v[0][2]) <= 0.5  # a zero moves too
    assert all(type(x) is int for x in v[1]) and v[1] != real[1][1]  # ints stay ints
    assert v[2] == [not x for x in real[2][1]]  # bools flip
    assert 0 <= v[3] < 3 and v[3] != real[3][1]  # an index stays a valid one
    assert sorted(v[4]) == [0, 1, 2, 3] and v[4] != real[4][1]  # argsort: still a permutation
    assert len(v[5][0]) == 2 and all(0 <= i < 4 for i in v[5][0]) and v[5] != real[5][1]  # nonzero: valid indices
    assert v[6] != real[6][1] and len(v[6]) >= len(real[6][1]) and set(v[6]) <= set("01")  # a binary string, changed
    assert v[8] == real[8][1]  # the array constructor is real
    # queries and conversions are weak computations: real when every computation is perturbed (no
    # reference), perturbed where a reference's record names them (issue 42: a reference whose
    # result was a shape demanded nothing)
    assert [v[9], v[15], v[16]] == [real[9][1], real[15][1], real[16][1]]
    assert {"~shape#0", "~shape#1", "~size", "~copy"} <= set(record["record"])
    weak, _ = _plain_session(server_module, {"cf": secret, "keys": {k: b for k, b in record["record"].items() if k[0] == "~"}}, reqs)
    w = [r[1] for r in weak]
    assert w[9] != real[9][1] and all(type(x) is int for x in w[9]) and len(w[9]) == 2, (w[9], real[9])
    assert type(w[15]) is int and w[15] != real[15][1] and w[16] != real[16][1] and w[0] == real[0][1]
    assert v[10] == v[0][0] and v[7] != 4.0  # abs(-1.5) alone: the same key, so the same value as in the array
    assert all(x != y for r, q in zip(v[11], real[11][1]) for x, y in zip(r, q))  # a view (not C-ordered) too
    # a large result (NumPy) and a small one (plain Python) key and move the same values alike
    assert [v[12][i] for i in (1, 19, 28, 39)] == v[13] and all(type(x) is int for x in v[14]) and v[14] != real[14][1]
    # only the recorded keys of the chosen functions: abs perturbed, the rest real
    only_abs, _ = _plain_session(server_module, {"cf": secret, "keys": {"abs": record["record"]["abs"]}}, reqs)
    assert only_abs[0] == cf[0] and only_abs[10] == cf[10] and only_abs[12] == cf[12]
    assert [r for i, r in enumerate(only_abs) if i not in (0, 10, 12, 13)] == [r for i, r in enumerate(real) if i not in (0, 10, 12, 13)]


# A raw program (no harness) that prints what a program can observe of its surroundings without
# calling the library: it must print the same thing whatever mode its library server was given.
PROBE = r"""
import fcntl, os, resource, socket, struct, sys
seen = {"argv": sys.argv, "env": dict(os.environ), "fds": sorted(os.listdir("/proc/self/fd")), "uid": os.getuid(),
        "cwd": os.getcwd(), "flags": str(sys.flags), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
        "cpu": resource.getrlimit(resource.RLIMIT_CPU)[1], "modules": sorted(m for m in sys.modules if "se_gym" not in m)}
for fd in (4, 5):  # the answer's socket and the harness's
    s = socket.socket(fileno=fd)
    try:
        seen[fd] = s.recv(1 << 16, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        seen[fd] = "nothing to read"
    # what was written on our end and its server has not read yet (SIOCOUTQ): nothing, whatever the mode
    seen[fd, "queued"] = struct.unpack("i", fcntl.ioctl(fd, 0x5411, b"\0\0\0\0"))[0]
    s.detach()
f, walk = sys._getframe(), []  # (the worker's frames, which a program forked from it holds too)
while f is not None:
    walk.append((f.f_code.co_name, sorted(f.f_locals)))
    req = f.f_locals.get("req")
    if isinstance(req, dict):
        seen["request"] = sorted(req), "cf" in repr(req) or "record" in repr(req)
    if f.f_code.co_name == "main":
        seen["reply"] = f.f_locals.get("reply")  # (the program before's: gone)
    f = f.f_back
seen["frames"] = walk
print(seen)
"""


def test_a_program_cannot_tell_the_modes_apart(suite):
    """The mode reaches the server before the program exists, on the server's own control socket:
    the program sees the same environment, arguments, descriptors, limits and modules, nothing to
    read or still queued on its sockets, the same worker request in the frames it was forked with
    (the mode is popped from it before the fork) and no reply of the program before, in the real
    library, a record, and the counterfactual library, from the worker's first program on."""
    from se_gym.judge.core import sandbox_preload
    from se_gym.sandbox import make_sandbox

    lib = suite[1]
    modes = [None, {}, {"record": True}, {"cf": os.urandom(32).hex(), "keys": None}, {"cf": os.urandom(32).hex(), "keys": {"abs": ""}}]
    with make_sandbox("local", workers=1, pythonpath=[str(lib.materialize("strict", docs=False))], preload=sandbox_preload(lib)) as box:
        first = box.run([Program(PROBE, library_mode=m) for m in modes], Limits(wall_s=10, cpu_s=10))
        # (in between, a program that outlives the worker's first tick: the worker once imported
        # termios for it then, and every program after found it in sys.modules)
        assert box.run(["import time; time.sleep(0.1)"])[0].status is ExecStatus.OK
        got = first + box.run([Program(PROBE, library_mode=m) for m in modes[::-1]], Limits(wall_s=10, cpu_s=10))
    assert all(r.status is ExecStatus.OK for r in got), [r.stderr[-300:] for r in got]
    assert len({r.stdout for r in got}) == 1, [r.stdout for r in got]
    out = got[0].stdout
    assert "4: 'nothing to read', (4, 'queued'): 0, 5: 'nothing to read', (5, 'queued'): 0" in out, out
    assert "'request': (['code', 'id', 'limits'" in out and "'reply': None" in out, out
    assert [r.library_report is not None for r in got] == [m is not None and m != {} for m in modes + modes[::-1]]


def test_the_async_path_and_the_judge_command_run_the_check_too(suite, tmp_path):
    """``judge_many_async`` (the verifiers adapter's) and ``se-gym judge`` on rows with a
    ``library_solution``: the same check, the same verdicts."""
    import asyncio

    from se_gym.cli import main

    tasks, lib = suite
    t = tasks[0]
    unused = block(SHAPES["lambda never called"].format(**_fields(t, lib)))
    with Judge(lib, profile="strict", workers=1) as j:
        got = asyncio.run(j.judge_many_async([t.judge_item(block(t.library_solution)), t.judge_item(unused)]))
    assert got[0].passed and got[0].dependence["reference"] == "used" and got[1].status is Status.LIBRARY_UNUSED
    src, out = tmp_path / "rows.jsonl", tmp_path / "judged.jsonl"
    cases = [{"input": c.input, "output": c.output} for c in t.test_cases]
    rows = [{"response": r, "test_cases": cases, "function_name": t.function_name, "library_solution": t.library_solution}
            for r in (block(t.library_solution), unused)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["judge", "--input", str(src), "--out", str(out), "--library", "seed:0", "--profile", "strict", "--quiet"]) == 0
    judged = [json.loads(line)["judge"] for line in out.read_text().splitlines()]
    assert [v["status"] for v in judged] == ["passed", "library_unused"]
    assert judged[1]["extra"]["dependence"]["reference"] == "used"


def test_a_computations_key_carries_what_it_was_computed_from(server_module):
    """Wave 4's red team: a computation's key was its class and its value only, so a result made
    in Python and passed through the reference's function where that function is an identity
    (``max([hi])``, ``sort`` of a sorted list, ``abs`` of an absolute value) got the reference's
    perturbation.  The digest of its inputs joins the key: the same however the call is made (per
    element, per row or column, with ``axis``, arguments swapped), another where the inputs differ."""
    import numpy as np

    S = server_module
    m = np.array([[3.0, -1.0, 2.0], [9.0, 7.0, -8.0]])
    x = [3.0, -1.0, 2.0]

    def digest(path, args, kwargs=None, fn=None):
        kwargs = kwargs or {}
        out = (fn or S.FUNCTIONS.get(path) or getattr(np, path))(*args, **kwargs)
        return S._inputs(fn or getattr(np, path, None), path, list(args), kwargs, out)

    def index(path, args, kwargs=None):
        kwargs = kwargs or {}
        return S._index_inputs(path, list(args), kwargs, getattr(np, path)(*args, **kwargs))

    cat = np.concatenate
    same = [
        (digest("absolute", [m]), cat([digest("absolute", [v]) for v in m.reshape(-1)])),  # a ufunc per element
        (digest("maximum", [x, 0.0]), digest("maximum", [0.0, x])),  # arguments swapped
        (digest("sum", [m], {"axis": 0}), cat([digest("sum", [list(c)]) for c in m.T])),  # a reduction per column
        (digest("sum", [m, 0]), digest("sum", [m], {"axis": 0, "keepdims": True})),
        (digest("matmul", [m, m.T]), np.array([digest("dot", [r, c])[0] for r in m for c in m]).reshape(-1)),  # dot of row and column
        (digest("sort", [m], {"axis": 1}), cat([digest("sort", [list(r)]) for r in m])),  # along an axis, per row
        (digest("diff", [m]), cat([digest("diff", [list(r)]) for r in m])),
        (index("argmax", [m], {"axis": 1}), cat([index("argmax", [list(r)]) for r in m])),
        (digest("round", [[1.26, 2.5]], {"decimals": 1}), cat([digest("round", [v], {"decimals": 1}) for v in (1.26, 2.5)])),
    ]
    for k, (a, b) in enumerate(same):
        assert a is not None and b is not None and np.array_equal(a, b), k
    hi = max(x)
    differ = [
        (digest("max", [x]), digest("max", [[hi]])),  # laundering: the same output from other inputs
        (digest("sort", [x]), digest("sort", [sorted(x)])),
        (digest("absolute", [[v - 1 for v in x]]), digest("absolute", [[abs(v - 1) for v in x]])),
        (digest("cumsum", [x]), cat([digest("cumsum", [[t]]) for t in np.cumsum(x)])),
        (index("argmax", [x]), index("argmax", [[0.0, 0.0, 1.0][::-1]])),
    ]
    for k, (a, b) in enumerate(differ):
        assert a is not None and b is not None and not np.array_equal(a, b), k


def test_tuple_results_and_vectorized_callables_key_what_they_were_computed_from(server_module):
    """The laundering the input digests left open (issue 42, wave 4, docs/security.md): a tuple
    result's parts (``linalg.eig``/``svd``/``qr``, ``divmod``, ``modf``, ``frexp``...) and a
    ``vectorize``'d callable's results were keyed by class and value only, so ``eig`` of a
    diagonal of eigenvalues found in Python, ``divmod`` of a quotient by 1 or a vectorize'd
    identity on a Python result got the reference's perturbation.  Now each part carries a digest
    of its inputs: elementwise for a ufunc's parts and a vectorize'd callable (per element is the
    whole), the first argument in order for the rest."""
    import numpy as np

    S = server_module
    secret = "ab" * 16

    def fn_of(path):
        return getattr(np.linalg, path[7:]) if path.startswith("linalg.") else getattr(np, path)

    def keys_of(path, fn, args):
        rec = S._Counterfactual({"record": True})
        rec.call(path, path, list(args), {}, fn(*args), fn)
        return rec.report()["record"]

    def moved(keys, path, fn, args):
        cf = S._Counterfactual({"cf": secret, "keys": keys})
        real = fn(*args)
        got = cf.call(path, path, list(args), {}, real, fn)
        parts = zip(got, real) if isinstance(real, tuple) else [(got, real)]
        return [not np.array_equal(np.asarray(g), np.asarray(r)) for g, r in parts]

    a = np.array([[2.0, 1.0], [0.0, 3.0]])  # (triangular: eig returns its diagonal exactly, as eig of the diagonal does)
    x, y = [7.0, -5.5, 2.25], [2.0, 3.0, -1.0]
    square, same = np.vectorize(lambda v: v * v), np.vectorize(lambda v: v)
    cases = [  # (path, the function, honest arguments, the laundering function, its arguments)
        ("linalg.eig", None, (a,), None, (np.diag(np.diag(a)),)),
        ("linalg.qr", None, (a,), None, (np.diag(np.linalg.qr(a)[1].diagonal()),)),
        ("divmod", None, (x, y), None, (np.floor_divide(x, y), 1.0)),
        ("modf", None, (x,), None, ([v - int(v) for v in x],)),
        ("frexp", None, (x,), None, (np.frexp(x)[0],)),
        (S._MADE, square, (x,), same, ([v * v for v in x],)),
    ]
    for path, fn, honest, launder, laundered in cases:
        fn = fn or fn_of(path)
        launder = launder or fn
        keys = keys_of(path, fn, honest)
        assert any(moved(keys, path, fn, honest)), path
        assert any(moved(keys, path, fn, [np.array(v) for v in honest])), path  # (the same values, another form)
        # the laundering call returns some part of the honest one's values...
        real, fake = fn(*honest), launder(*laundered)
        pairs = zip(real, fake) if isinstance(real, tuple) else [(real, fake)]
        assert any(np.shape(r) == np.shape(f) and np.array_equal(r, f) for r, f in pairs), path
        # ...and is not perturbed for it
        assert not any(moved(keys, path, launder, laundered)), path
    # the digest of a ufunc's parts is per element: one element at a time is the whole call
    whole = S._part_inputs(np.divmod, "divmod", [x, y], {}, np.divmod(x, y))
    per = [S._part_inputs(np.divmod, "divmod", [p, q], {}, np.divmod(p, q)) for p, q in zip(x, y)]
    assert all(np.array_equal(whole[k], np.concatenate([d[k] for d in per])) for k in range(2))


def test_a_pipelines_later_steps_follow_the_perturbed_earlier_ones(judge, suite):
    """A computation fed by a perturbed one is keyed by its value alone: with the input digests in
    the keys, a pipeline's later steps (fed perturbed values in world ``*``) had other inputs than
    the recorded ones and stayed real, so a reference ending in a count or a floor did not move
    (``se-gym validate``: 172 multiple_test tasks of ten libraries became independent; this test's
    reference was independent on every case at the commit before the fix)."""
    _, lib = suite
    P = lib.package
    cnz, floor, neg = (lib.qualified(k) for k in ("count_nonzero", "floor", "negative"))
    ref = f"import {P}\n\ndef solve(x):\n    return int({cnz}({floor}({neg}(x))))\n"
    # (no value near 0: however the negation is perturbed, the floors stay nonzero and the count stays)
    xs = ([5.5, -6.0, 8.25], [10.0, -12.5], [-7.0, 9.5, 6.0, -20.0], [15.0], [-5.5, 30.0, -8.0, 6.5, 12.0])
    cases = []
    for x in xs:
        got = sum(1 for v in x if math.floor(-v) != 0)
        cases.append({"input": f"x={x!r}", "output": str(got)})
    plain = block(f"import {P}\n\ndef solve(x):\n    {neg}(x)\n    return sum(1 for v in x if math.floor(-v) != 0)\n".replace(
        f"import {P}\n", f"import {P}\nimport math\n"))
    honest = block(f"import {P}\n\ndef solve(x):\n    f = {floor}({neg}({P}.{lib.names['array']}(x)))\n    return int({cnz}(f))\n")
    got = judge.judge_many([(block(ref), cases, "def solve(x):", None, ref), (honest, cases, "def solve(x):", None, ref),
                            (plain, cases, "def solve(x):", None, ref)])
    assert got[0].passed and "match" in got[0].dependence["cases"], got[0].dependence
    assert got[1].passed, (got[1].status, got[1].detail, got[1].dependence)
    assert got[2].status is Status.LIBRARY_UNUSED, (got[2].status, got[2].detail, got[2].dependence)


def test_every_argument_that_decides_a_result_is_in_its_key(server_module):
    """Issue 42, round 3: every function but the elementwise ones, the reductions and the products
    was keyed by its first argument only (and an in-place function by its values only), so the
    reference's function called on the task's own input with arguments of the answer's choosing
    (``roll(x, 0)``, ``take(x, range(n))``, ``choose(i, [r, r, r])``, counts set by one-hot
    ``weights``, ``interp`` at the query points, ``lstsq`` of another right-hand side, ``put`` of
    nothing on a Python result) got the reference's perturbation while the task's work was done in
    Python.  Every argument that decides the result is in the key now (a ragged first argument
    included, which had no digest); the same call in another form (keyword or positional, a
    default given, ``swapaxes`` for ``transpose``, ``-1`` in a shape) keys alike."""
    import numpy as np

    S = server_module
    secret = "cd" * 16

    def fn_of(path):
        return getattr(np.linalg, path[7:]) if path.startswith("linalg.") else getattr(np, path)

    def run(cf, path, args, kwargs):
        fn = fn_of(path)
        args = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
        before = S._ordered(args[0])[0] if path in S._IN_PLACE else None
        if not args:  # (every argument by name)
            args, kwargs = [], dict(kwargs)
        out = fn(*args, **kwargs)
        real = np.array(args[0]) if path in S._IN_PLACE else out
        got = cf.call(S._ALIASES.get(path, path), path, args, kwargs, out, fn, before)
        return (real, args[0]) if path in S._IN_PLACE else (out, got)  # (in place: the destination)

    def keys_of(path, args, kwargs):
        rec = S._Counterfactual({"record": True})
        run(rec, path, args, kwargs)
        return rec.report()["record"]

    def moved(keys, path, args, kwargs):
        real, got = run(S._Counterfactual({"cf": secret, "keys": keys}), path, args, kwargs)
        parts = zip(got, real) if isinstance(real, tuple) else [(got, real)]
        return any(not np.array_equal(np.asarray(g), np.asarray(r)) for g, r in parts)

    x = np.array([4.0, -2.5, 7.0, 1.5])
    r = [0.5, 9.0, -3.0, 2.0]  # (a "Python result")
    m = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    eye2 = np.eye(2)
    cases = [  # (path, the reference's arguments, the same call in another form, a laundering call)
        ("roll", ([x, 2], {}), ([x], {"shift": 2}), ([x, 0], {})),
        ("take", ([x, [2, 0]], {}), ([x], {"indices": [2, 0]}), ([x, [0, 1, 2, 3]], {})),
        ("repeat", ([x, 2], {}), ([x], {"repeats": 2}), ([x, 1], {})),
        ("choose", ([[0, 1, 0, 1], [x, x * 2]], {}), ([np.array([0, 1, 0, 1]), [x, x * 2]], {}), ([[0, 1, 0, 1], [r, r]], {})),
        ("histogram", ([x], {"bins": 2}), ([x, 2], {}), ([x], {"bins": 1, "weights": [3, 0, 0, 0]})),
        ("interp", ([x, [0.0, 8.0], [1.0, 3.0]], {}), ([x], {"xp": [0.0, 8.0], "fp": [1.0, 3.0]}), ([x, sorted(x), [1.0] * 4], {})),
        ("linalg.lstsq", ([eye2, [3.0, 5.0]], {"rcond": None}), ([eye2, [3.0, 5.0]], {}), ([eye2, [5.0, 3.0]], {"rcond": None})),
        ("eye", ([3], {"k": 1}), ([3, 3, 1], {}), ([3, 4], {})),
        ("max", ([x], {}), ([x], {"initial": -1e300}), ([x], {"initial": 7.0, "where": [True, True, False, True]})),
        ("linalg.norm", ([x], {}), ([x, 2], {}), ([x, 1], {})),
        ("transpose", ([m], {}), ([m, (1, 0)], {}), ([m, (0, 1)], {})),
        ("reshape", ([x, (2, -1)], {}), ([x, (2, 2)], {}), ([x, -1], {})),
        ("put", ([np.array(r), [0], [4.0]], {}), ([np.array(r), (0,)], {"v": [4.0]}), ([np.array([4.0, 9.0, -3.0, 2.0]), [1], [9.0]], {})),
        # a ragged first argument (unequal parts) had no digest at all: keyed by value only
        ("concatenate", ([(x, x[:2])], {}), ([[list(x), x[:2]]], {}), ([(x[:1], np.concatenate([x[1:], x[:2]]))], {})),
        # the first argument by its parameter's name (not only ``a=``)
        ("interp", ([x, [0.0, 8.0], [1.0, 3.0]], {}), ([], {"x": x, "xp": [0.0, 8.0], "fp": [1.0, 3.0]}), ([], {"x": x, "xp": sorted(x), "fp": [1.0] * 4})),
    ]
    for path, honest, other, launder in cases:
        keys = keys_of(path, *honest)
        assert moved(keys, path, *honest), path
        assert moved(keys, path, *other), path
        assert not moved(keys, path, *launder), path
    # swapaxes is transpose's class: the same permutation, the same key
    keys = keys_of("transpose", [m], {})
    assert moved(keys, "swapaxes", [m, 0, 1], {})
    # an argument is tried at its default only where that writes nothing: an ``out=`` array keeps
    # the call's own result
    o = np.zeros(())
    S._Counterfactual({"record": True}).call("sum", "sum", [x], {"out": o, "initial": 5.0}, np.sum(x, out=o, initial=5.0), np.sum)
    assert float(o) == float(np.sum(x)) + 5.0


def test_a_small_arguments_digest_in_python_is_numpys(server_module):
    """The ordered digest of a small argument is computed in plain Python (faster than NumPy on a
    few elements); it must be the very words NumPy's path makes, or a reference and an answer
    passing the same values in two forms (a list, an array of another size class) would key apart."""
    import random

    import numpy as np

    S = server_module

    def numpy_path(v):
        w = S._words(v)
        pos = np.arange(w.size, dtype=np.uint64) * S._GOLDEN
        return int(np.sum(S._mix(w.reshape(-1) ^ pos), dtype=np.uint64) ^ np.uint64(w.ndim))

    rng = random.Random(0)
    cases = [[-0.0, 0.0, float("nan"), float("inf"), -float("inf"), True, 3], (1, 2.5, False),
             np.array([2**63 - 1, -2**63], dtype=np.int64), np.array([2**64 - 1], dtype=np.uint64),
             np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[True], [False]])]
    cases += [[rng.uniform(-1e9, 1e9) for _ in range(rng.randint(1, 32))] for _ in range(50)]
    cases += [[rng.randint(-2**53, 2**53) for _ in range(rng.randint(1, 32))] for _ in range(50)]
    for v in cases:
        assert S._flat_small(v) is not None
        assert int(S._ordered(v)[0]) == numpy_path(v), v


def test_a_sorted_result_that_its_perturbation_only_reordered_still_moves():
    """``unique([3, 1, 1])`` under a secret that moves 1 to 3 and 3 to 1: put back in order, the
    perturbed result was the real one, and this honest answer, judged without a reference, got
    ``library_unused`` (7 judgements in 200, each with its own secret; this secret is one of them).
    The counterfactual result now moves as a whole (server.py ``_still_moved``)."""
    import hashlib

    import numpy as np

    from se_gym.library import mint
    from se_gym.library.server import _in_order, _still_moved

    real, moved = np.array([1, 3]), np.array([3, 1])
    assert _in_order("unique", (moved,), {}, moved).tolist() == [1, 3]
    assert _still_moved("unique", real, moved, np.array([1, 3])).tolist() == [3, 5]  # shifted by the first move, +2
    assert _still_moved("unique", real, np.array([2, 5]), np.array([2, 5])).tolist() == [2, 5]  # moved anyway: as it is
    lib = mint(0)
    answer = f"```python\nimport {lib.package}\ndef solve(x):\n    return {lib.qualified('unique')}(x)\n```"
    with Judge(lib, profile="strict") as judge:
        judge._dependence_secret = hashlib.sha256(b"unique-22").hexdigest()
        v = judge.judge_many([(answer, [{"input": "x=[3, 1, 1]", "output": "[1, 3]"}])])[0]
    assert v.status == Status.PASSED, v.detail
