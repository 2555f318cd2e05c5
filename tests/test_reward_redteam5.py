"""Red-team round 5 against strict's reward (tests/_reward_redteam5_corpus.py).

Three classes the earlier rounds lacked, every answer computing its results in Python:

* ``fraction``: under ``reward="fraction"`` the cases the check demands nothing of (the reference's
  own result did not change in the counterfactual world) were credited to a plain-Python answer
  (0.125-0.375 on built-in tasks, 0.75 on official task 50), and an answer passing only such cases
  kept its share;
* ``exception``: where the reference raises in the counterfactual world, any exception (or a value
  the harness refuses, or a crash) matched it: detectors that raise when the library's ``ix_`` is
  not the one they computed in Python earned 1.0;
* ``fed``: a computation fed by a perturbed value was keyed by its value alone, so a Python count or
  index passed through the reference's last function (``count_nonzero``, ``argmax``, ``argmin``) on
  a run of ones or a one-hot row cut from a perturbed array got the reference's perturbation: 5 of
  6 earned 1.0.

On main before this round: 7 of the 14 built-in hostile answers earn 1.0 under the binary reward
and all 14 earn reward under ``fraction`` (the plain-Python answer to official task 50: 0.75; it
earns 1.0 under the binary reward too, where world "*" changes none of its reference's results,
e.g. the judge secret "0a" * 32).  Now none earns anything; the honest answers of the round pass.
"""
from __future__ import annotations

import json

import pytest

from _gate_corpus import block
from _reward_redteam5_corpus import DEGENERATE, HOSTILE, OFFICIAL_HONEST, OFFICIAL_HOSTILE, render, render_honest
from conftest import legit_skip, shared_path
from se_gym.judge import Judge
from se_gym.judge.extract import extract_code
from se_gym.judge.types import Status
from se_gym.library import official, writer
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")


@pytest.fixture(scope="module")
def corpus():
    by_id = {}
    for split in ("train", "multiple_test"):
        tasks, lib = load_task_spec("builtin:0", split, None, progress=False)
        by_id.update({t.id: t for t in tasks})
    return render(lib, by_id), render_honest(lib, by_id), lib


@pytest.fixture(scope="module")
def task50():
    """Official task 50 (parity_dev row 570): its answer's item maker and the official library."""
    row = json.loads(shared_path("sebench", "parity_dev.jsonl").read_text().splitlines()[570])
    lib = official(shared_path("sebench", "api_doc.jsonl"))
    ref = extract_code(row["response"])
    return (lambda text: (text, row["test_cases"], None, row["right_exe_result"].split("#"), ref)), lib


@pytest.mark.parametrize("reward", ["binary", "fraction"])
def test_no_hostile_answer_of_round_5_earns_reward(corpus, reward):
    hostile, _, lib = corpus
    assert len(hostile) == len(HOSTILE) >= 14
    with Judge(lib, profile="strict", workers=2, reward=reward) as judge:
        got = judge.judge_many([t.judge_item(block(code)) for _, _, code, t in hostile])
    def credited(name, v):  # (a degenerate case, where the answer calls the reference's function on its very values)
        k = DEGENERATE.get(name)
        codes = (v.dependence or {}).get("cases") or []
        # (there it is credited, and with it the cases that demand nothing: nothing else)
        free = sum(c in ("independent", "raised") for c in codes)
        return reward == "fraction" and k is not None and v.reward <= (1 + free) / len(codes) and all(
            c in ("unchanged", "differs", "failed", "independent", "raised") for i, c in enumerate(codes) if i != k)

    earned = [f"{name} ({cls}, {t.id}): {v.reward} {v.status.value} {(v.dependence or {}).get('cases')}"
              for (name, cls, _, t), v in zip(hostile, got) if v.reward > 0 and not credited(name, v)]
    assert not earned, "\n".join(earned)
    assert not any(v.infrastructure for v in got)
    # every one the check's own doing: passing (or, under fraction, partly right) answers refused by it
    assert all((v.dependence or {}).get("ran") for (_, cls, _, _), v in zip(hostile, got) if cls != "fraction" or reward == "fraction")


def test_the_honest_answers_of_round_5_pass(corpus):
    _, honest, lib = corpus
    with Judge(lib, profile="strict", workers=2) as judge:
        got = judge.judge_many([t.judge_item(block(code)) for _, code, t in honest])
    wrong = [f"{name} ({t.id}): {v.status.value} {v.detail[:120]} {(v.dependence or {}).get('cases')}"
             for (name, _, t), v in zip(honest, got) if not v.passed]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("secret", ["0a" * 32, "05" * 32, None])
def test_official_task_50_pays_the_library_not_python_whatever_the_secret(task50, secret):
    """With secret "0a"*32 world "*" changes none of the reference's results (the perturbed spreads
    keep their order): the check demanded nothing and the plain-Python answer earned 1.0; now world
    "*" is drawn again under derived secrets ("*2"...) until some result changes.  With "05"*32 the
    reference's only changed case raises (an IndexError): the honest answer matched it by raising
    too, and only that; the redrawn world gives it values to match."""
    item, lib = task50
    for reward in ("binary", "fraction"):
        with Judge(lib, profile="strict", reward=reward) as j:
            if secret is not None:
                j._dependence_secret = secret
            bad, good = j.judge_many([item(OFFICIAL_HOSTILE), item(OFFICIAL_HONEST)])
        assert bad.reward == 0 and bad.status is Status.LIBRARY_UNUSED, (reward, bad.dependence)
        assert good.passed and good.reward == 1.0, (reward, good.status, good.detail, good.dependence)
        if secret == "0a" * 32:
            assert good.dependence.get("redrawn") == "*2"


def test_a_python_answer_passing_only_the_cases_that_demand_nothing_earns_nothing(corpus):
    """Under fraction: ``return []`` passes extract's empty case only (independent: the reference's
    result stays empty in every world); it kept 1/8 with the check, now 0.  An honest answer that
    fails some cases keeps its share."""
    hostile, _, lib = corpus
    t = next(t for name, _, _, t in hostile if name == "only the empty results")
    honest_part = block(f"import {lib.package}\n\ndef solve(x, t):\n    got = [float(v) for v in {lib.qualified('extract')}("
                        f"{lib.qualified('asarray')}(x) > t, x)]\n    return got[:2]\n")
    with Judge(lib, profile="strict", workers=2, reward="fraction") as j:
        v, part = j.judge_many([t.judge_item(block(f"import {lib.package}\n\ndef solve(x, t):\n    {lib.qualified('extract')}([], [])\n    return []\n")),
                                t.judge_item(honest_part)])
    assert v.reward == 0 and v.dependence["no_value_matched"]
    assert 0 < part.reward < 1 and part.dependence["ran"] and not part.dependence.get("no_value_matched"), part.dependence


def test_a_list_between_the_library_steps_passes():
    """An honest pipeline that turns its first step's output into a Python list (``a = [float(v)
    for v in f(x)]``, then the library's next steps) absorbs part of the perturbation and its next
    step, fed Python's values, is not the reference's fed one: on main 270 of 302 such multiple_test
    answers passed (two secrets), and these 10 were among the refused; now they pass (302/302)."""
    import re

    tasks, lib = load_task_spec("builtin:0", "multiple_test", None, progress=False)
    wanted = {f"builtin/s0/multiple_test/{n}" for n in ("0004", "0010", "0044", "0048", "0049", "0059", "0076", "0078", "0084", "0086")}
    items = []
    for t in tasks:
        if t.id in wanted:
            m = re.search(r"\n    a = (zwc\.[a-z.]+\([^()]*\))\n", t.library_solution)
            assert m, t.library_solution
            items.append((t.id, t.judge_item(block(t.library_solution.replace(m.group(0), f"\n    a = [float(v) for v in {m.group(1)}]\n")))))
    assert len(items) == len(wanted)
    with Judge(lib, profile="strict", workers=2) as j:
        j._dependence_secret = "0b" * 32  # (a secret under which main refused all 10)
        got = j.judge_many([it for _, it in items])
    wrong = [f"{i}: {v.status.value} {(v.dependence or {}).get('cases')}" for (i, _), v in zip(items, got) if not v.passed]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("secret", ["00" * 32, "01" * 32])
def test_an_ix_reference_returned_another_way_passes_whatever_the_secret(secret):
    """The full suite found it after round 5's merge: built-in single_test/0024's only computation is
    ``ix_``; its mesh was moved by +-1..3 as plain ints, so under these secrets every case raised in
    world "*" and in the redrawn ones, and its own reference, returning its list from a variable,
    was ``library_unused`` (4 of 48 secrets). ``ix_``'s parts are indices now (a permutation of
    their own range): the reference matches a value."""
    tasks, lib = load_task_spec("builtin:0", "single_test", None, progress=False)
    t = next(x for x in tasks if x.id == "builtin/s0/single_test/0024")
    code = t.library_solution.replace("return [[float(v) for v in row] for row in", "out = [[float(v) for v in row] for row in")
    assert code != t.library_solution
    with Judge(lib, profile="strict") as j:
        j._dependence_secret = secret
        v = j.judge_many([t.judge_item(block(code + "\n    return out\n"))])[0]
    assert v.passed, (v.status.value, v.detail, v.dependence)
    assert "match" in v.dependence["cases"], v.dependence
