"""Red-team round 9 against strict's reward (tests/_reward_redteam9_corpus.py; docs/security.md
"Red-team round 9").

* an answer's counterfactual run whose library server ran out of the program's CPU (a plain-Python
  answer beside heavy library calls on a constant: the counterfactual library's work per element
  makes the same calls fit in the scored run and not in the check's) was an infrastructure failure,
  reward None: the answer chose not to be counted.  Fixed: a counterfactual run of an answer stopped
  at one of its limits is the answer's (``library_unused``), as one stopped at the wall clock was.
* a case that world * left as it was (``independent``) demanded nothing: on builtin/s2/multiple_test/0180
  the library on the smallest inputs and right values from Python elsewhere earned 1.0.  Fixed: such a
  case is judged in the first redrawn world that moves it (or a function's world under it).
* guards: built-in seeds 1-3 (their own mints) on the train, single_test and multiple_test suites:
  every reference depends on the library somewhere; hostile shapes with a table oracle earn nothing
  under the binary reward (under ``fraction`` only the library's own cases); honest forms pass.
"""
from __future__ import annotations

import pytest

from _gate_corpus import block
from _reward_redteam8_corpus import honest_forms
from _reward_redteam9_corpus import HOSTILE, cpu_answer, cpu_honest, table_answers
from conftest import legit_skip
from se_gym.judge import Judge
from se_gym.library import writer
from se_gym.sandbox import Limits
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32, "19" * 32)
SUITES = [(seed, split) for seed in (1, 2, 3) for split in ("train", "single_test", "multiple_test")]


@pytest.fixture(scope="module")
def cumsum_task():
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    return next(t for t in tasks if t.id == "builtin/s0/train/0007"), lib


# -- the library server's CPU in the counterfactual run ------------------------------------------
@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_a_counterfactual_server_out_of_cpu_is_the_answers_not_infrastructure(cumsum_task, reward):
    t, lib = cumsum_task
    limits = Limits(cpu_s=1.0, wall_s=6.0)  # (a CPU limit under the wall clock: the server's CPU stops first)
    hostile, honest = cpu_answer(lib, 10), cpu_honest(lib, 0)
    with Judge(lib, profile="strict", workers=1, limits=limits, dependence=False) as j:
        scored = j.judge_many([t.judge_item(block(hostile))])[0]
    assert scored.passed, (scored.status, scored.detail)  # (its scored run is right, within its limits)
    for secret in SECRETS[:2]:
        with Judge(lib, profile="strict", workers=1, limits=limits, reward=reward) as j:
            j._dependence_secret = secret
            got, ok = j.judge_many([t.judge_item(block(hostile)), t.judge_item(block(honest))])
        assert not got.infrastructure and got.status.value == "library_unused" and got.reward == 0, \
            (got.status, got.infrastructure, got.detail, got.dependence)
        assert ok.passed, (ok.status, ok.detail, ok.dependence)


# -- other seeds and suites ------------------------------------------------------------------------
def _picked(seed, split, per):
    tasks, lib = load_task_spec(f"builtin:{seed}", split, None, progress=False)
    step = max(1, len(tasks) // (4 * per))  # (spread over the suite; some tasks' cases are no literals)
    return [t for t in tasks[::step] if table_answers(t)][:per], lib


@pytest.mark.parametrize("seed,split", SUITES)
def test_table_oracle_shapes_earn_nothing_on_other_seeds_and_suites(seed, split):
    tasks, lib = _picked(seed, split, 2)
    items = [(t, name, t.judge_item(block(code))) for t in tasks for name, code in table_answers(t)]
    assert len(tasks) == 2 and len(items) == 2 * len(HOSTILE)
    with Judge(lib, profile="strict", workers=2, dependence=False) as j:
        right = [v.passed for v in j.judge_many([it for *_, it in items])]
    assert sum(right) >= len(items) - 2, right  # (right: only the check refuses them; the signs shape fails a boolean result)
    # (under fraction, the cases whose result is the library's own keep their share: the library on one case;
    # the table's values placed in the library's order, where that order *is* the library's result, a
    # boolean result with as many true as false values)
    gated = {HOSTILE[2][0], HOSTILE[3][0], HOSTILE[7][0]}
    for reward in ("binary", "fraction"):
        for secret in SECRETS[:2]:
            with Judge(lib, profile="strict", workers=2, reward=reward) as j:
                j._dependence_secret = secret
                got = j.judge_many([it for *_, it in items])
            wrong = [(t.id, name, v.reward, v.dependence) for (t, name, _), v in zip(items, got)
                     if v.infrastructure or (v.reward > 0 and (reward == "binary" or name not in gated)) or v.reward == 1.0]
            assert not wrong, wrong


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_single_test_reference_of_other_seeds_depends_on_the_library(seed):
    tasks, lib = load_task_spec(f"builtin:{seed}", "single_test", None, progress=False)
    with Judge(lib, profile="strict", workers=2) as j:
        j._dependence_secret = SECRETS[0]
        got = j.judge_many([t.judge_item(block(t.library_solution)) for t in tasks])
    wrong = [(t.id, v.status.value, v.dependence) for t, v in zip(tasks, got)
             if not v.passed or v.dependence.get("reference") != "used"
             or not any(c.startswith("match") for c in v.dependence["cases"])]
    assert not wrong, wrong


def test_honest_forms_pass_on_other_seeds_and_suites():
    forms = []
    for seed, split in SUITES[2::3] + SUITES[:1]:  # (multiple_test of each seed, and seed 1's train)
        tasks, lib = _picked(seed, split, 1)
        forms += [(lib, t, name, block(code)) for t in tasks for name, code in honest_forms(t.library_solution)[:3]]
    assert len(forms) >= 10
    for secret in SECRETS:
        for lib in {id(f[0]): f[0] for f in forms}.values():
            mine = [f for f in forms if f[0] is lib]
            with Judge(lib, profile="strict", workers=2) as j:
                j._dependence_secret = secret
                got = j.judge_many([t.judge_item(a) for _, t, _, a in mine])
            wrong = [(t.id, n, v.status.value, v.detail[:100]) for (_, t, n, _), v in zip(mine, got) if not v.passed]
            assert not wrong, wrong


def test_without_a_reference_a_counterfactual_server_out_of_cpu_stays_infrastructure(cumsum_task):
    """(The weaker rule takes any change for use, an error too: there a stopped run must not become the
    answer's "changed" result, which would pay the plain-Python answer.)"""
    t, lib = cumsum_task
    with Judge(lib, profile="strict", workers=1, limits=Limits(cpu_s=1.0, wall_s=6.0)) as j:
        j._dependence_secret = SECRETS[0]
        got = j.judge_many([(block(cpu_answer(lib, 10)), t.test_cases, t.function_name)])[0]
    assert not got.reward and got.infrastructure, (got.status, got.detail, got.dependence)


def test_the_verdicts_channels_earn_nothing_and_are_never_infrastructure():
    from _reward_redteam9_corpus import CHANNELS

    tasks, lib = load_task_spec("builtin:1", "train", None, progress=False)
    t = next(t for t in tasks if t.id == "builtin/s1/train/0007")
    assert t.function_name == "def solve(x):"
    base = dict(table_answers(t))[HOSTILE[0][0]]
    answers = [base.replace(old, new) for _, old, new in CHANNELS]
    for secret in SECRETS[:2]:
        with Judge(lib, profile="strict", workers=2) as j:
            j._dependence_secret = secret
            got = j.judge_many([t.judge_item(block(a)) for a in answers])
        wrong = [(name, v.status.value, v.reward, v.infrastructure) for (name, *_), v in zip(CHANNELS, got)
                 if v.reward or v.infrastructure]
        assert not wrong, wrong


# -- cases the perturbation leaves as they were -----------------------------------------------------
@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_a_case_world_star_leaves_alone_is_judged_in_a_redrawn_world(reward):
    """builtin/s2/multiple_test/0180: under ``"3c" * 32`` world * left 6 of its 8 reference results as
    they were (``independent``: they demanded nothing), and the answer using the library on its
    smallest inputs only (the 2 other cases) and a table of right values elsewhere earned 1.0
    (0.875 under ``"a7" * 32``).  Now such a case is judged in the first redrawn world that moves it."""
    tasks, lib = load_task_spec("builtin:2", "multiple_test", None, progress=False)
    t = next(t for t in tasks if t.id == "builtin/s2/multiple_test/0180")
    answers = dict(table_answers(t))
    gated = answers[HOSTILE[3][0]]
    items = [t.judge_item(block(gated)), t.judge_item(block(t.library_solution)),
             *(t.judge_item(block(code)) for _, code in honest_forms(t.library_solution)[:3])]
    for secret in SECRETS[:2]:
        with Judge(lib, profile="strict", workers=2, reward=reward) as j:
            j._dependence_secret = secret
            got, *honest = j.judge_many(items)
        assert got.reward <= (0.75 if reward == "fraction" else 0.0), (got.reward, got.dependence)  # (before: 1.0 and 0.875)
        assert all(v.passed for v in honest), [(v.status.value, v.dependence) for v in honest]
