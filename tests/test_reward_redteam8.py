"""Red-team round 8 against strict's reward: the paths training goes through
(tests/_reward_redteam8_corpus.py; docs/security.md "Red-team round 8").

* self-play's validator (rule 6a) accepted references that compute in Python beside a library call on
  a constant; their tasks paid that trick in Python and refused the honest answer.  Fixed: each case's
  computations are recorded alone, those alike in every case stay real, some result must still change.
* a reference's record run stopped once at a limit (a loaded machine: a test double shortens its wall
  clock, as nothing here can load the machine on cue) made its task judged by the weaker rule for the
  judge's life, a named-but-unused answer earning 1.0.  Fixed: run again, then infrastructure, never kept.
* a sandbox that runs no library modes skipped the check with no warning.  Fixed: it warns once.
* honest answers through the env (one and several turns), TRL's reward function and ``se-gym judge``
  rows pass under several secrets.
"""
from __future__ import annotations

import json
import logging

import pytest

from _dependence_corpus import ORACLES, adapter_answers
from _gate_corpus import block
from _reward_redteam8_corpus import (
    QUESTION,
    SELFPLAY_ANSWERS,
    SELFPLAY_HONEST,
    SELFPLAY_HOSTILE,
    honest_forms,
    render,
)
from conftest import legit_skip
from se_gym.judge import Judge
from se_gym.library import mint, writer
from se_gym.sandbox import Limits
from se_gym.sandbox.local import LocalSandbox
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32, "19" * 32)
LIB = mint(0)


@pytest.fixture(scope="module")
def suite():
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    by_id = {t.id: t for t in tasks}
    return [by_id[i] for i in ORACLES], lib


def _proposal(inputs, body, question=QUESTION):
    from se_gym.selfplay import render_proposal

    return render_proposal(question, inputs, render(LIB, body))


@pytest.fixture(scope="module")
def validator():
    from se_gym.selfplay import ValidationConfig, Validator

    with Validator(LIB, ValidationConfig(wall_s=1.0)) as v:
        yield v


# -- self-play's validator -------------------------------------------------------------------------
def test_selfplay_rejects_references_whose_library_work_is_on_constants(validator):
    got = {name: validator.validate_texts([_proposal(inputs, body)])[0] for name, inputs, body in SELFPLAY_HOSTILE}
    wrong = {n: (o.reason, o.detail[:100]) for n, o in got.items() if o.reason != "library_unused"}
    assert not wrong, wrong


def test_selfplay_accepts_honest_references(validator):
    got = {name: validator.validate_texts([_proposal(inputs, body, f"{QUESTION} ({name})")])[0]
           for name, inputs, body in SELFPLAY_HONEST}
    wrong = {n: (o.reason, o.detail[:150]) for n, o in got.items() if not o.accepted}
    assert not wrong, wrong
    # and the judge pays the honest answer to each accepted task, under several secrets
    for secret in SECRETS[:2]:
        with Judge(LIB, profile="strict", workers=2) as j:
            j._dependence_secret = secret
            vs = j.judge_many([o.task.judge_item(block(o.task.library_solution)) for o in got.values()])
        assert all(v.passed for v in vs), [(v.status.value, v.detail[:100]) for v in vs]


def test_a_constant_trick_task_would_pay_the_trick_and_refuse_the_honest_answer():
    """(Why rule 6a matters: the task built from the first hostile reference, judged as the check
    judges it, pays the same trick in Python and refuses the honest library answer.)"""
    from _reward_redteam8_corpus import INPUTS
    from se_gym.tasks.record import Task, TestCase

    ref = render(LIB, SELFPLAY_HOSTILE[0][2])
    outs = [str([sum(abs(v) for v in eval(s[2:])[: k + 1]) for k in range(3)]) for s in INPUTS]
    cases = tuple(TestCase(s, o) for s, o in zip(INPUTS, outs))
    t = Task(id="rt8/const", split="selfplay", source="selfplay", query=QUESTION, function_name="def solve(x):",
             test_cases=cases, example=cases[0], functions=("sum",), reference_solution="", library_solution=ref)
    answers = {k: render(LIB, b) for k, b in SELFPLAY_ANSWERS.items()}
    with Judge(LIB, profile="strict", workers=2) as j:
        j._dependence_secret = SECRETS[0]
        got = dict(zip(answers, j.judge_many([t.judge_item(block(a)) for a in answers.values()])))
    assert got["python with the constant sum"].reward == 1.0
    assert got["honest"].status.value == "library_unused"


# -- a reference's record run stopped at a limit ------------------------------------------------
def _spiking(monkeypatch, spikes):
    """LocalSandbox.run and .submit where the reference's first ``spikes`` record runs get a 1 ms wall
    clock (a test double for a machine loaded at that moment)."""
    left = {"n": spikes}
    run = LocalSandbox.run

    def spiky(self, programs, limits=None):
        out = []
        for p in programs:
            mode = getattr(p, "library_mode", None)
            if mode and mode.get("record") and left["n"]:
                left["n"] -= 1
                out += run(self, [p], Limits(wall_s=0.001, cpu_s=0.001))
            else:
                out += run(self, [p], limits)
        return out

    submit = LocalSandbox.submit

    def spiky_submit(self, program, limits=None):  # (the record made ahead, while the answer runs)
        mode = getattr(program, "library_mode", None)
        if mode and mode.get("record") and left["n"]:
            left["n"] -= 1
            limits = Limits(wall_s=0.001, cpu_s=0.001)
        return submit(self, program, limits)

    monkeypatch.setattr(LocalSandbox, "run", spiky)
    monkeypatch.setattr(LocalSandbox, "submit", spiky_submit)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_reference_record_stopped_once_at_a_limit_is_made_again(suite, monkeypatch, workers):
    tasks, lib = suite
    t = tasks[0]
    unused = adapter_answers(t, lib)["unused"]
    for secret in SECRETS[:2]:
        _spiking(monkeypatch, 1)
        with Judge(lib, profile="strict", workers=workers) as j:
            j._dependence_secret = secret
            got = [j.judge_many([t.judge_item(unused)])[0] for _ in range(3)]
        assert [v.status.value for v in got] == ["library_unused"] * 3, [(v.reward, v.dependence) for v in got]
        assert all(v.reward == 0 and v.dependence["reference"] == "used" for v in got)


def test_a_reference_record_stopped_twice_is_infrastructure_not_kept(suite, monkeypatch):
    tasks, lib = suite
    t = tasks[0]
    answers = adapter_answers(t, lib)
    _spiking(monkeypatch, 2)
    with Judge(lib, profile="strict", workers=1) as j:
        j._dependence_secret = SECRETS[0]
        first = j.judge_many([t.judge_item(answers["unused"])])[0]
        then = j.judge_many([t.judge_item(answers["unused"]), t.judge_item(answers["reference"])])
    assert first.infrastructure and first.status.value == "sandbox_error" and not first.reward, (first.status, first.dependence)
    assert [v.status.value for v in then] == ["library_unused", "passed"], [(v.status, v.dependence) for v in then]


# -- a sandbox that cannot run the check --------------------------------------------------------
class _Wrapper:
    """A user's sandbox: it hands the programs on to a LocalSandbox, and declares no library modes."""

    name = "wrapped"

    def __init__(self, inner):
        self.inner = inner
        self.workers = inner.workers

    def run(self, programs, limits=None):
        return self.inner.run(programs, limits)

    def close(self):
        self.inner.close()


def test_a_sandbox_without_library_modes_warns_once(suite, caplog):
    from se_gym.judge.core import sandbox_preload
    from se_gym.sandbox import make_sandbox

    tasks, lib = suite
    t = tasks[0]
    unused = adapter_answers(t, lib)["unused"]
    inner = make_sandbox("local", workers=1, pythonpath=[str(lib.materialize("strict", docs=False))], preload=sandbox_preload(lib))
    with inner, caplog.at_level(logging.WARNING, logger="se_gym"):
        with Judge(lib, profile="strict", sandbox=_Wrapper(inner)) as j:
            got = j.judge_many([t.judge_item(unused)]) + j.judge_many([t.judge_item(unused)])
    assert all(v.dependence == {"ran": False, "why": "the wrapped sandbox runs no library servers' modes"} for v in got)
    said = [r.getMessage() for r in caplog.records if "does not run" in r.getMessage()]
    assert len(said) == 1 and "dependence=True" in said[0], said


# -- honest answers through the paths ------------------------------------------------------------
def _forms(tasks):
    return [(t, name, block(code)) for t in tasks[:2] for name, code in honest_forms(t.library_solution)]


def test_honest_forms_pass_the_judge_under_several_secrets(suite):
    tasks, lib = suite
    forms = _forms(tasks)
    assert len(forms) >= 10
    for secret in SECRETS:
        with Judge(lib, profile="strict", workers=2) as j:
            j._dependence_secret = secret
            got = j.judge_many([t.judge_item(a) for t, _, a in forms])
        wrong = [(t.id, n, v.status.value, v.detail[:100]) for (t, n, _), v in zip(forms, got) if not v.passed]
        assert not wrong, wrong


def test_honest_forms_pass_the_env_in_one_and_several_turns(suite):
    import gymnasium as gym

    tasks, lib = suite
    for max_turns in (1, 2):
        env = gym.make("SEBench-v0", tasks=tasks[:2], library=lib, max_turns=max_turns, profile="strict")
        try:
            for t, name, answer in _forms(tasks):
                env.reset(options={"task_id": t.id})
                if max_turns == 2:  # a named-but-unused first turn, then the honest form
                    _, r, done, _, info = env.step(adapter_answers(t, lib)["unused"])
                    assert r == 0 and not done and info["verdict"].status.value == "library_unused"
                _, r, done, _, info = env.step(answer)
                assert r == 1.0 and done, (t.id, name, info["verdict"].status.value, info["verdict"].detail[:100])
        finally:
            env.close()


def test_honest_forms_pass_trl_reward_and_se_gym_judge_rows(suite, tmp_path):
    from se_gym.cli import main
    from se_gym.integrations import export
    from se_gym.integrations.trl import SEBenchReward, dataset_rows

    tasks, lib = suite
    forms = _forms(tasks)
    rows = dataset_rows([t for t, _, _ in forms], lib, book="closed")
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    reward = SEBenchReward(lib)
    try:
        got = reward(prompts=[r["prompt"] for r in rows], completions=[a for _, _, a in forms], **columns)
    finally:
        reward.close()
    assert got == [1.0] * len(forms), [(n, v.status.value) for (_, n, _), v in zip(forms, reward.last_verdicts)]
    export.to_rollout_jsonl([{"task": t, "response": a} for t, _, a in forms], tmp_path / "r.jsonl")
    out = tmp_path / "judged.jsonl"
    assert main(["judge", "--input", str(tmp_path / "r.jsonl"), "--out", str(out), "--library", "seed:0",
                 "--profile", "strict", "--quiet"]) == 0
    assert {json.loads(line)["judge"]["status"] for line in out.read_text().splitlines()} == {"passed"}


# -- official tasks whose reference fails some of its cases ----------------------------------------
@pytest.fixture(scope="module")
def official_lib():
    from conftest import shared_path
    from se_gym.library import official

    return official(shared_path("sebench", "api_doc.jsonl"))


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_a_reference_failing_some_cases_is_used_on_the_others(official_lib, reward):
    from _reward_redteam8_corpus import PARTIAL_TASKS, official_probe_items

    items = official_probe_items(official_lib, PARTIAL_TASKS)
    assert len({i for i, _, _ in items}) == len(PARTIAL_TASKS) >= 15
    for secret in SECRETS[:2]:
        with Judge(official_lib, profile="strict", workers=2, reward=reward) as j:
            j._dependence_secret = secret
            got = j.judge_many([it for *_, it in items])
        earned = [(i, name, v.reward, v.dependence) for (i, name, _), v in zip(items, got) if v.reward > 0]
        assert not earned, earned
        assert all(v.dependence.get("reference_fails") for v in got if v.dependence and v.dependence.get("ran")), \
            [v.dependence for v in got]


# -- new classes against the check itself (regression guard) ---------------------------------------
@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_tolerance_raising_mixed_type_and_weak_answers_earn_nothing(suite, reward):
    from _reward_redteam8_corpus import new_class_items

    tasks, lib = suite
    items = new_class_items(tasks, lib)
    assert len(items) >= 50
    for secret in SECRETS[:2]:
        with Judge(lib, profile="strict", workers=2, reward=reward) as j:
            j._dependence_secret = secret
            got = j.judge_many([it for *_, it in items])
        assert sum(v.status.value in ("passed", "library_unused") for v in got) >= 50  # (right: only the check refuses them)
        earned = [(tid, name, v.reward, v.dependence) for (tid, _, name, _), v in zip(items, got) if v.reward > 0]
        assert not earned, earned


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_a_reference_passing_only_cases_that_depend_on_nothing_demands_the_weaker_rule(suite, reward):
    """(A partial reference must never demand less than none: here it passes only the empty input,
    whose result no perturbation moves; the task's other outputs are twice the running total.)"""
    tasks, lib = suite
    t = next(t for t in tasks if t.id == "builtin/s0/train/0007")  # cumsum
    cases = [{"input": "x=[]", "output": "[]"}, {"input": "x=[1.0, 2.0]", "output": "[2.0, 6.0]"},
             {"input": "x=[3.0, -1.0, 0.5]", "output": "[6.0, 4.0, 5.0]"}]
    q = lib.package
    cumsum, total = lib.qualified("cumsum"), lib.qualified("sum")
    dropped = (f"import {q}\ndef solve(x):\n    {total}([1.0])\n    out, t = [], 0.0\n    for v in x:\n        t += v\n"
               "        out.append(2 * t)\n    return out\n")
    honest = f"import {q}\ndef solve(x):\n    return [2 * float(v) for v in {cumsum}(x)]\n"
    for secret in SECRETS[:2]:
        with Judge(lib, profile="strict", workers=2, reward=reward) as j:
            j._dependence_secret = secret
            got = j.judge_many([(block(code), cases, "solve", [c["output"] for c in cases], t.library_solution) for code in (dropped, honest)])
        assert got[0].reward == 0 and got[0].dependence["reference_fails"] == [1, 2], (got[0].status, got[0].dependence)
        assert got[1].passed, (got[1].status, got[1].detail, got[1].dependence)


def test_judge_one_answer_takes_the_reference(suite):
    """``Judge.judge`` had no way to pass the reference: one answer judged through it always got the
    weaker rule, where the library on a constant earns 1.0."""
    tasks, lib = suite
    t = tasks[0]
    a = adapter_answers(t, lib)
    with Judge(lib, profile="strict", workers=1) as j:
        j._dependence_secret = SECRETS[0]
        assert j.judge(a["unused"], t.test_cases, t.function_name).reward == 1.0  # (the weaker rule)
        v = j.judge(a["unused"], t.test_cases, t.function_name, reference=t.library_solution)
        assert v.status.value == "library_unused" and v.reward == 0 and v.dependence["reference"] == "used"
        assert j.judge(a["reference"], t.test_cases, t.function_name, reference=t.library_solution).passed
