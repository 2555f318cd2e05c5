"""Red-team round 6 against strict's reward (tests/_reward_redteam6_corpus.py).

* ``memory`` (fixed): the counterfactual library's keys and copies took several times a result's
  memory, so a large allocation that the real library made raised ``MemoryError`` in the
  counterfactual one and a program could tell the runs apart (on main the probe's output differed:
  ``zeros`` of 40M elements passed in the real library only).  An answer used it to compute in Python
  in the run that is scored and to call the reference only in the check's.  Now the program's arrays
  may hold a share of the server's room in every mode (``server.HOLD_SHARE``): the probe prints the
  same in the real library and in both counterfactual modes (fails before the fix).
* every other hostile answer of the round (state across cases, identity-like carriers, an exception
  path, formatting, a learned scale, iteration order) earns nothing, before and after, under two
  secrets and both rewards; the round's honest-but-unusual answers pass.
"""
from __future__ import annotations

import os

import pytest

from _gate_corpus import block
from _reward_redteam6_corpus import HONEST, HOSTILE, ONE_HONEST_CASE, render, render_honest, render_probe
from conftest import legit_skip
from se_gym.judge import Judge
from se_gym.library import writer
from se_gym.sandbox import ExecStatus, Limits, Program
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32)


@pytest.fixture(scope="module")
def corpus():
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    by_id = {t.id: t for t in tasks}
    return render(lib, by_id), render_honest(lib, by_id), lib


def test_a_program_cannot_tell_the_modes_apart_by_memory(corpus):
    from se_gym.judge.core import sandbox_preload
    from se_gym.sandbox import make_sandbox

    lib = corpus[2]
    zeros = lib.qualified("zeros").split(".")[-1]
    modes = [None, {"cf": os.urandom(32).hex(), "keys": None}, {"cf": os.urandom(32).hex(), "keys": {zeros: ""}}]
    with make_sandbox("local", workers=1, pythonpath=[str(lib.materialize("strict", docs=False))], preload=sandbox_preload(lib)) as box:
        got = box.run([Program(render_probe(lib), library_mode=m) for m in modes], Limits(wall_s=60, cpu_s=30))
    assert all(r.status is ExecStatus.OK for r in got), [r.stderr[-300:] for r in got]
    assert len({r.stdout for r in got}) == 1, [r.stdout for r in got]
    assert "1" in got[0].stdout and "0" in got[0].stdout, got[0].stdout  # (small ones made, large ones refused)


def _its_own_case(name, v, reward):
    """Under fraction, the state answers that call the library honestly on their first case keep that
    case's share (it is the library's, by the design), and nothing else."""
    codes = (v.dependence or {}).get("cases") or []
    return (reward == "fraction" and name in ONE_HONEST_CASE and codes[:1] == ["match"] and v.reward <= 1 / len(codes)
            and all(c in ("unchanged", "differs", "failed") for c in codes[1:]))


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_no_hostile_answer_of_round_6_earns_reward(corpus, reward):
    hostile, _, lib = corpus
    assert len(hostile) == len(HOSTILE) >= 14
    earned = []
    for secret in SECRETS:
        with Judge(lib, profile="strict", workers=2, reward=reward) as judge:
            judge._dependence_secret = secret
            got = judge.judge_many([t.judge_item(block(code)) for _, _, code, t in hostile])
        earned += [f"{name} ({cls}, {t.id}, {secret[:2]}): {v.reward} {v.status.value} {(v.dependence or {}).get('cases')}"
                   for (name, cls, _, t), v in zip(hostile, got) if v.reward > 0 and not _its_own_case(name, v, reward)]
        assert not any(v.infrastructure for v in got)
    assert not earned, "\n".join(earned)


def test_the_honest_answers_of_round_6_pass(corpus):
    _, honest, lib = corpus
    assert len(honest) == len(HONEST) >= 10
    wrong = []
    for secret in SECRETS:
        with Judge(lib, profile="strict", workers=2) as judge:
            judge._dependence_secret = secret
            got = judge.judge_many([t.judge_item(block(code)) for _, code, t in honest])
        wrong += [f"{name} ({t.id}, {secret[:2]}): {v.status.value} {v.detail[:120]} {(v.dependence or {}).get('cases')}"
                  for (name, _, t), v in zip(honest, got) if not v.passed]
    assert not wrong, "\n".join(wrong)
