"""An independent red-team round against strict's reward (tests/_reward_redteam_corpus.py): new
hostile answers (named-but-unused shapes, a Python result laundered through the reference's own
function, conversions or queries made with the library and the core in Python, detectors of the
counterfactual world, the client's modules and socket) earn nothing; new honest-but-unusual
answers (a callable class, decorators, dataclasses, generators, partials, closures, properties,
context managers, per-element and per-row calls) pass.  On main before this round 21 of the 50
hostile ones earned 1.0 (19 launderings, and 2 plain-Python answers to the shape task, whose
reference demanded nothing); 45 earn 1.0 with the dependence check off.  A second laundering
round (8 hostile answers through tuple results and vectorize'd callables: ``divmod``, ``modf``,
``frexp``, ``histogram``, ``broadcast_arrays``, ``vectorize``) all earned 1.0 before their parts
keyed a digest of their inputs; 17 honest ones use those functions and ``linalg.eig``/``eigh``/
``svd``/``qr``/``slogdet``/``lstsq`` normally (unpacked, one part, parts passed on to the library).
A third (22 hostile answers) calls the reference's function on the task's own input with other
arguments that made it an identity or a constant (``roll(x, 0)``, ``take`` of every index,
``choose`` among copies of a Python result, ``histogram`` counts set by one-hot ``weights``,
``interp`` at the query points, ``put``/``putmask``/``place``/``copyto`` on a Python result,
``transpose`` with identity axes, a flat ``reshape``, ``concatenate`` of a Python result cut in
unequal parts) and does the task's work in Python: all 22 earned 1.0 while only the first argument
was keyed (a ragged one not at all), 0 now; 2 more (``piecewise`` call-backs returning Python's
results, a vectorize'd lookup of them by value) earned 1.0 while only a call-back function's output
was perturbed, 0 now that what it hands its call-backs is too; its 17 honest ones pass the same
functions' arguments otherwise (keywords, defaults given, ``swapaxes`` for ``transpose``)."""
from __future__ import annotations

import pytest

from _gate_corpus import block
from _reward_redteam_corpus import ARGUMENTS, HOSTILE, TASKS, render
from conftest import legit_skip
from se_gym.judge import Judge
from se_gym.judge.types import Status
from se_gym.library import writer
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")


@pytest.fixture(scope="module")
def corpus():
    tasks, lib = load_task_spec("builtin:0", "train", None, progress=False)
    by_id = {t.id: t for t in tasks if t.id in TASKS.values()}
    return render(by_id, lib), lib


def _items(rows):
    return [(block(code), t.test_cases, t.function_name, None, t.library_solution) for *_, code, t in rows]


def test_no_hostile_answer_of_the_round_earns_reward(corpus):
    (hostile, _), lib = corpus
    assert len(hostile) == len(HOSTILE) >= 45
    with Judge(lib, profile="strict", workers=2) as judge:
        got = judge.judge_many(_items(hostile))
    earned = [f"{name}: {v.reward} {v.status.value} {(v.dependence or {}).get('cases')}" for (name, _, _), v in zip(hostile, got) if v.reward > 0]
    assert not earned, "\n".join(earned)
    assert not any(v.infrastructure for v in got)
    # the launderings are refused by the dependence check itself (their results are right)
    laundered = [v for (name, _, _), v in zip(hostile, got) if "alone" in name or "of the" in name and "Python" in name]
    assert laundered and all(v.status is Status.LIBRARY_UNUSED for v in laundered)
    # round 3: the arguments the key left out (all earned 1.0 when only the first was keyed)
    third = [v for (name, _, _), v in zip(hostile, got) if name in ARGUMENTS]
    assert len(third) == len(ARGUMENTS) >= 20 and all(v.status is Status.LIBRARY_UNUSED for v in third)


def test_the_honest_answers_of_the_round_pass(corpus):
    (_, honest), lib = corpus
    assert sum(e == "pass" for _, e, _, _ in honest) >= 25
    with Judge(lib, profile="strict", workers=2) as judge:
        got = judge.judge_many(_items(honest))
    wrong = [f"{name} [{e}]: {v.status.value} {v.detail[:100]} {(v.dependence or {}).get('cases')}"
             for (name, e, _, _), v in zip(honest, got) if v.passed != (e == "pass")]
    assert not wrong, "\n".join(wrong)
    assert all(v.status is Status.LIBRARY_UNUSED for (_, e, _, _), v in zip(honest, got) if e == "reject")
