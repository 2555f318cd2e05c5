"""Honest forms, round 7 (issue 42): model-written answers that strict's library dependence check
refused although their results come from the library.

* ``sort``/``unique``: the counterfactual library perturbed their values out of order (and
  ``unique``'s ints into each other), so an answer relying on the order or the distinctness the
  function promises (``sorted`` or ``bisect`` over ``sort``'s output, a dict of ``unique``'s
  values, an assert that the output is sorted) computed something else in that run:
  ``library_unused``.  The perturbed values are put back in order now (se_gym/library/server.py
  ``_in_order``).
* an argument spelled out at its default (``isclose(x, y, rtol=1e-05, atol=1e-08)``) changed the
  digest of an elementwise function's inputs, so the answer's call was not the reference's
  ``isclose(x, y)``: ``library_unused``.  Defaults leave the digest now (``_without_defaults``).
* ``where(c, 0.0, y)``'s elements taken from the Python constant were perturbed, so an answer that
  wrote that branch in Python (``0.0 if s == 0 else copysign(v, s)``, official task 44) was
  ``unchanged`` there: ``library_unused``.  They keep their value now (``_chosen_constants_kept``);
  the other branch stays perturbed.

The honest answers fail on the main before these fixes, under both secrets; the hostile ones (the
same result computed in Python beside a library call) earn nothing, before and after.
"""
from __future__ import annotations

import pytest

from _gate_corpus import block
from _reward_redteam7_corpus import official_rows
from conftest import legit_skip, shared_path
from se_gym.judge import Judge
from se_gym.library import official, writer
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32)

# (name, single_test task, answer with {sort}-style fields: the library's qualified names)
HONEST = [
    ("sorted() over the library's sort", "0192",
     "import {P}\n\ndef solve(x):\n    s = {sort}(x)\n    return sorted((float(v) for v in s), key=lambda v: v)\n"),
    ("an assert that sort's output is in order", "0192",
     "import {P}\n\ndef solve(x):\n    s = {sort}(x)\n    assert all(s[i] <= s[i + 1] for i in range(len(s) - 1)), 'not sorted'\n"
     "    return [float(v) for v in s]\n"),
    ("bisect over the library's sort", "0192",
     "import bisect\nimport {P}\n\ndef solve(x):\n    s = [float(v) for v in {sort}(x)]\n    out = []\n"
     "    for v in s:\n        out.insert(bisect.bisect(out, v), v)\n    return out\n"),
    ("a dict of unique's values", "0215",
     "import {P}\n\ndef solve(x):\n    u = {unique}(x)\n    seen = {{int(v): i for i, v in enumerate(u)}}\n    return list(seen)\n"),
    ("an assert that unique's values are distinct", "0215",
     "import {P}\n\ndef solve(x):\n    u = [int(v) for v in {unique}(x)]\n    assert len(set(u)) == len(u)\n    return sorted(u)\n"),
    ("isclose with its defaults spelled out", "0160",
     "import {P}\n\ndef solve(x, y):\n    return [bool(v) for v in {isclose}(x, y, rtol=1e-05, atol=1e-08, equal_nan=False)]\n"),
]
HOSTILE = [
    ("Python's sort beside a library sort of the input", "0192",
     "import {P}\n\ndef solve(x):\n    s = {sort}(x)\n    assert len(s) == len(x)\n    return sorted(float(v) for v in x)\n"),
    ("Python's set beside a library unique of the input", "0215",
     "import {P}\n\ndef solve(x):\n    u = {unique}(x)\n    assert len(u) <= len(x)\n    return sorted(set(int(v) for v in x))\n"),
    ("Python's isclose beside the library's, at the defaults", "0160",
     "import math\nimport {P}\n\ndef solve(x, y):\n    {isclose}(x, y, rtol=1e-05)\n"
     "    return [abs(a - b) <= 1e-08 + 1e-05 * abs(b) for a, b in zip(x, y)]\n"),
]


@pytest.fixture(scope="module")
def suite():
    tasks, lib = load_task_spec("builtin:0", "single_test", None, progress=False)
    by = {t.id.rsplit("/", 1)[1]: t for t in tasks}
    names = {n: lib.qualified(n) for n in ("sort", "unique", "isclose")}

    def render(rows):
        return [(name, by[num], code.format(P=lib.package, **names)) for name, num, code in rows]

    return render(HONEST), render(HOSTILE), lib


def _judge(lib, rows, secret):
    with Judge(lib, profile="strict", workers=2) as judge:
        judge._dependence_secret = secret
        return judge.judge_many([t.judge_item(block(code)) for _, t, code in rows])


def test_honest_answers_relying_on_sorted_or_default_calls_pass(suite):
    honest, _, lib = suite
    wrong = []
    for secret in SECRETS:
        got = _judge(lib, honest, secret)
        wrong += [f"{name} ({t.id}, {secret[:2]}): {v.status.value} {v.detail[:120]} {(v.dependence or {}).get('cases')}"
                  for (name, t, _), v in zip(honest, got) if not v.passed]
    assert not wrong, "\n".join(wrong)


def test_the_same_results_computed_in_python_earn_nothing(suite):
    _, hostile, lib = suite
    for secret in SECRETS:
        got = _judge(lib, hostile, secret)
        assert all(v.status.value == "library_unused" and v.reward == 0 for v in got), [
            (name, v.status.value, v.detail[:100]) for (name, _, _), v in zip(hostile, got)]


# official task 44 (parity_dev): the reference is where(s == 0, 0.0, copysign(v, s)); {q}: the package
OFFICIAL_44 = [
    ("the zero branch in Python, copysign from the library", True,
     "import {q}\n\ndef adjust_portfolio_positions(portfolio_values, market_sentiment):\n    out = []\n"
     "    for v, s in zip(portfolio_values, market_sentiment):\n"
     "        out.append(0.0 if s == 0 else float({copysign}(v, s)))\n    return out\n"),
    ("every branch in Python, the library on a constant", False,
     "import math\nimport {q}\n\ndef adjust_portfolio_positions(portfolio_values, market_sentiment):\n"
     "    {where}([True], 0.0, {copysign}(1.0, -1.0))\n"
     "    return [0.0 if s == 0 else math.copysign(v, s) for v, s in zip(portfolio_values, market_sentiment)]\n"),
]


def test_a_python_branch_for_where_s_constant_passes_and_python_alone_does_not():
    lib = official(shared_path("sebench", "api_doc.jsonl"))
    d = official_rows(shared_path("sebench", "parity_dev.jsonl"))[44]
    names = {n: lib.qualified(n) for n in ("where", "copysign")}
    items = [(block(code.format(q=lib.package, **names)), d["cases"], None, d["expected"], d["b_notolist"]) for _, _, code in OFFICIAL_44]
    for secret in SECRETS:
        got = _judge_items(lib, items, secret)
        for (name, honest, _), v in zip(OFFICIAL_44, got):
            assert v.passed == honest and (v.reward > 0) == honest, (name, secret[:2], v.status.value, v.detail[:160])


def _judge_items(lib, items, secret):
    with Judge(lib, profile="strict", workers=2) as judge:
        judge._dependence_secret = secret
        return judge.judge_many(items)


# -- the main block's skip (gates.without_refused_demo): what it skips never runs, so nothing refused
# can help an answer; refused code anywhere else keeps the answer forbidden, with a one-line reason
def test_skipped_demo_code_never_runs_and_refusals_elsewhere_stay():
    from _gate_corpus import CASES
    from se_gym.library import mint

    lib = mint(7)
    P, ABS = lib.package, lib.qualified("abs")
    honest_tail = f"def solve(x):\n    return [float(v) for v in {ABS}(x)]\n"
    answers = {
        # the right result only if the main block ran: it does not
        "a main block the answer needs": (
            f"import {P}\nSCALE = 2\ndef solve(x):\n    return [float(v) / SCALE for v in {ABS}(x)]\n"
            "if __name__ == '__main__':\n    import inspect\n    SCALE = len(inspect.stack()) and 1\n", "runtime", None),
        "a refused helper the entry calls": (
            f"import inspect\nimport {P}\ndef helper():\n    return inspect.stack()\n"
            f"def solve(x):\n    helper()\n    return [float(v) for v in {ABS}(x)]\n", "forbidden", "inspect"),
        "a refused decorator on the entry": (
            f"import inspect\nimport {P}\ndef deco(f):\n    inspect.stack()\n    return f\n@deco\n" + honest_tail, "forbidden", "inspect"),
        "an import nothing uses": (f"import inspect\nimport {P}\n" + honest_tail, "forbidden", "inspect"),
        "refused code in the entry itself": (
            f"import {P}\ndef solve(x):\n    import sys\n    sys.argv\n    return [float(v) for v in {ABS}(x)]\n", "forbidden", "sys.argv"),
        "a refused main block beside the honest entry": (
            f"import argparse\nimport {P}\n" + honest_tail + "if __name__ == '__main__':\n    argparse.ArgumentParser().parse_args()\n",
            "passed", None),
    }
    with Judge(lib, profile="strict", workers=2) as judge:
        got = judge.judge_many([(block(code), CASES, "def solve(x):") for code, _, _ in answers.values()])
    for (name, (_, want, word)), v in zip(answers.items(), got):
        if want == "passed":
            assert v.passed, (name, v.detail)
            continue
        assert v.reward == 0 and not v.passed, (name, v.status.value)
        if want == "forbidden":
            assert v.status.value == "forbidden" and word in v.detail and "\n" not in v.detail, (name, v.detail)
            assert "not allowed" in v.detail, (name, v.detail)
        else:
            assert v.status.value in ("runtime_error", "wrong_answer"), (name, v.status.value, v.detail)
