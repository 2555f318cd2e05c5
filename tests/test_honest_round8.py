"""Honest forms, round 8 (issue 42): model-written answers on built-in seeds 1-5 and official tasks
that strict's library dependence check refused although their results come from the library
(docs/security.md, Honest forms, round 8; the whole corpus: tests/_honest_round8_corpus.py,
``benchmarks/honest_forms.py --round 8``).

* a rounding function's perturbed values left its grid, so an answer that rounded them again in
  Python (``round(float(v), 2)`` over ``round(x, 2)``) or took ``int()`` of ``floor``/``ceil``/``rint``
  computed something else in the counterfactual run: ``library_unused``.  They stay on the grid now
  (se_gym/library/server.py ``_on_grid``).
* ``nonzero``'s perturbed positions came out of order, so ``sorted()`` over them differed.  They
  are put back in row-major order (``_positions_in_order``).
* a perturbed count could fall below zero, so ``max(0, n)`` over ``count_nonzero`` or ``histogram``
  differed.  A count stays a count (``_non_negative``).
* the perturbed results of ``intersect1d`` (and the other set functions), ``argwhere``,
  ``eigvalsh``/``eigh``'s eigenvalues and ``svd``'s singular values came out of the order the
  function promises, so ``sorted()`` over them differed.  They are put back in order (``_in_order``).
* an official item names no entry function, so strict took the answer's first ``def`` (a generator
  helper defined above the entry: static_gate "returns no value").  It takes the reference's entry
  now where the answer defines it (se_gym/judge/core.py).
* ``pad(x, (w, w), constant_values=0)`` keyed its arguments unlike the reference's ``pad(x, w)``.
  One width is one key, and a keyword the call gives the same result without leaves the key.

The honest answers fail on the main before these fixes, under both secrets; the hostile ones (the same
result computed in Python beside a library call of the input) earn nothing, before and after.
"""
from __future__ import annotations

import pytest

from _gate_corpus import block
from _honest_round8_corpus import BUILTIN, OFFICIAL
from _reward_redteam7_corpus import official_rows
from conftest import legit_skip, shared_path
from se_gym.judge import Judge
from se_gym.library import official, writer
from se_gym.tasks.spec import load_task_spec

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the counterfactual library is a mode of the library server")

SECRETS = ("3c" * 32, "a7" * 32)

# the corpus's answers these fixes let through (by name)
FIXED_BUILTIN = [
    "round, then Python's round of each library scalar to the same places",
    "floor then Python round to one place of each running total",
    "nonzero positions, the tuple's first array",
    "pad with zeros, explicit constant_values",
    "count above t, the count compared and returned through max(0, n)",
    "argwhere coordinates sorted as pairs",
    "intersect1d, then sorted() for safety",
    "eigh eigenvalues sorted ascending in Python",
    "svd singular values sorted largest first in Python",
    "histogram counts clamped at zero",
]
FIXED_OFFICIAL = [
    "ceil, then int() of each value summed in Python",
    "round per station, then Python's round to the same precision",
    "rint, then int() in Python and back to float",
    "acosh, a generator of floats",
]

# (name, seed, split, task, NumPy-style answer): the result computed in Python beside a library call
HOSTILE = [
    ("Python's round beside a library round of the input", 1, "single_test", "0101",
     "import numpy as np\n\ndef solve(x, d):\n    np.round(x, d)\n    return [round(float(v), d) for v in x]\n"),
    ("Python's floor beside a library floor, int() of it", 2, "multiple_test", "0036",
     "import math\nimport numpy as np\n\ndef solve(x):\n    np.floor(x)\n    c, out = 0, []\n    for v in x:\n"
     "        c += math.floor(v)\n        out.append(round(float(c), 1))\n    out.sort()\n    n = len(out)\n"
     "    return float(out[n // 2] if n % 2 else (out[n // 2 - 1] + out[n // 2]) / 2)\n"),
    ("Python's positions beside a library nonzero", 2, "single_test", "0199",
     "import numpy as np\n\ndef solve(x):\n    np.nonzero(x)\n    return sorted(i for i, v in enumerate(x) if v != 0)\n"),
    ("Python's count beside a library count of the input", 1, "single_test", "0188",
     "import numpy as np\n\ndef solve(x, t):\n    np.count_nonzero(np.array(x) > t)\n    return max(0, sum(1 for v in x if v > t))\n"),
    ("Python's coordinates beside a library argwhere", 5, "train", "0200",
     "import numpy as np\n\ndef solve(m, t):\n    np.argwhere(np.array(m) > t)\n"
     "    return [[i, j] for i, row in enumerate(m) for j, v in enumerate(row) if v > t]\n"),
    ("Python's set intersection beside a library intersect1d", 5, "train", "0216",
     "import numpy as np\n\ndef solve(a, b):\n    np.intersect1d(a, b)\n    return sorted(set(a) & set(b))\n"),
    ("Python's histogram beside a library histogram", 5, "train", "0214",
     "import numpy as np\n\ndef solve(x, b):\n    np.histogram(x, bins=b)\n    lo, hi = min(x), max(x)\n"
     "    w = (hi - lo) / b\n    c = [0] * b\n    for v in x:\n        c[min(int((v - lo) / w), b - 1)] += 1\n"
     "    return [max(0, n) for n in c]\n"),
    ("Python's padding beside a library pad of the input", 3, "train", "0053",
     "import numpy as np\n\ndef solve(x, w):\n    np.pad(x, (w, w), constant_values=0)\n    return [0.0] * w + [float(v) for v in x] + [0.0] * w\n"),
]


def _judge(lib, items, secret):
    with Judge(lib, profile="strict", workers=2) as judge:
        judge._dependence_secret = secret
        return judge.judge_many(items)


def _builtin(rows):
    """Per (seed, split): the library and (name, judge item) of each row, translated to it."""
    out = {}
    for name, seed, split, num, code in rows:
        if (seed, split) not in out:
            tasks, lib = load_task_spec(f"builtin:{seed}", split, None, progress=False)
            out[seed, split] = (lib, {t.id.rsplit("/", 1)[1]: t for t in tasks}, [])
        lib, by, items = out[seed, split]
        items.append((name, by[num].judge_item(block(lib.translate(code)))))
    return [(lib, items) for lib, _, items in out.values()]


@pytest.mark.parametrize("secret", SECRETS)
def test_honest_answers_over_rounded_values_positions_and_pad_widths_pass(secret):
    rows = [(name, seed, split, num, code) for _, name, seed, split, num, code in BUILTIN if name in FIXED_BUILTIN]
    assert len(rows) == len(FIXED_BUILTIN)
    wrong = []
    for lib, items in _builtin(rows):
        got = _judge(lib, [it for _, it in items], secret)
        wrong += [f"{name}: {v.status.value} {v.detail[:140]}" for (name, _), v in zip(items, got) if not v.passed]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("secret", SECRETS)
def test_official_answers_rounding_library_results_again_pass(secret):
    lib = official(shared_path("sebench", "api_doc.jsonl"))
    data = official_rows(shared_path("sebench", "parity_dev.jsonl"))
    rows = [(name, i, code) for name, i, code in OFFICIAL if name in FIXED_OFFICIAL]
    assert len(rows) == len(FIXED_OFFICIAL)
    items = [(block(lib.translate(code)), data[i]["cases"], None, data[i]["expected"], data[i]["b_notolist"]) for _, i, code in rows]
    got = _judge(lib, items, secret)
    assert all(v.passed for v in got), [(name, v.status.value, v.detail[:140]) for (name, _, _), v in zip(rows, got)]


@pytest.mark.parametrize("secret", SECRETS)
def test_the_same_results_computed_in_python_earn_nothing(secret):
    for lib, items in _builtin([row for row in HOSTILE]):
        got = _judge(lib, [it for _, it in items], secret)
        assert all(v.status.value == "library_unused" and v.reward == 0 for v in got), [
            (name, v.status.value, v.detail[:100]) for (name, _), v in zip(items, got)]


def test_a_perturbed_rounding_result_stays_on_its_grid_and_moves():
    import numpy as np

    from se_gym.library.server import _on_grid, _positions_in_order

    real = np.array([0.0, 1.0, -2.0, 23.46, np.inf])
    moved = np.array([0.3, 1.3, -2.9, 25.1, np.inf])  # (as a perturbation moves them)
    got = _on_grid("round", (real, 2), {}, real, moved)
    assert [float(v) for v in got] == [0.3, 1.3, -2.9, 25.1, np.inf]
    got = _on_grid("floor", (real,), {}, np.array([0.0, 1.0, -2.0, 23.0, np.inf]), moved)
    assert [float(v) for v in got] == [1.0, 2.0, -3.0, 25.0, np.inf]  # (every moved value moved, on the grid)
    got = _on_grid("around", (real,), {"decimals": 1}, np.array([0.0]), np.array([0.04]))
    assert [float(v) for v in got] == [0.1]
    rows, cols = _positions_in_order([np.array([2, 0, 1]), np.array([0, 3, 1])])
    assert rows.tolist() == [0, 1, 2] and cols.tolist() == [3, 1, 0]
    from se_gym.library.server import _non_negative

    assert _non_negative(np.array([1, 0, 4]), np.array([-2, 3, 2])).tolist() == [4, 3, 2]
    assert _non_negative(1, -1) == 3
    from se_gym.library.server import _in_order

    assert _in_order("intersect1d", (), {}, np.array([5, 1, 3])).tolist() == [1, 3, 5]
    assert _in_order("argwhere", (), {}, np.array([[1, 0], [0, 2], [0, 1]])).tolist() == [[0, 1], [0, 2], [1, 0]]
    assert _in_order("linalg.svd", (), {}, np.array([1.0, 3.0, 2.0])).tolist() == [3.0, 2.0, 1.0]
    assert _in_order("linalg.eigvalsh", (), {}, np.array([1.0, -3.0])).tolist() == [-3.0, 1.0]


# -- a library float scalar rounds as NumPy's does: round(np.float64(2.675), 2) is 2.68 (NumPy scales
# and rints), where Python's float gives 2.67; strict's scalars are float subclasses and rounded as
# Python's, so an honest answer rounding library scalars scored otherwise than under sebench
def test_library_float_scalars_round_as_numpy_scalars():
    import random

    import numpy as np

    from se_gym.library.scalars import make_types

    f64 = make_types(lambda name: name)["float64"]
    rng = random.Random(8)
    values = [2.675, 1.115, 0.125, -0.285, 2.5, -0.0004, 1e300, float("inf")] + [
        round(rng.uniform(-100, 100), rng.randint(1, 4)) for _ in range(2000)]
    for v in values:
        for d in (-2, 0, 1, 2, 3, 6):
            got, want = round(f64(v), d), round(np.float64(v), d)
            assert type(got) is f64 and (float(got) == float(want) or got != got and want != want), (v, d, got, want)
            assert str(float(got))[0] == str(float(want))[0]  # (the sign of a zero too)
        if abs(v) != float("inf"):
            assert round(f64(v)) == round(np.float64(v)) and type(round(f64(v))) is int


def test_an_answer_rounding_library_scalars_agrees_with_sebench():
    lib = official(shared_path("sebench", "api_doc.jsonl"))  # (sebench: NumPy's own 0-d results, as officially)
    code = (f"import {lib.package}\n\ndef solve(x):\n"
            f"    return [float(round({lib.qualified('max')}(x), 2)), float(round({lib.qualified('min')}(x), 1))]\n")
    cases = [{"input": "x=[2.675, 1.0, 0.25]", "output": "[2.68, 0.2]"}]  # (NumPy's rounding; Python's: 2.67, 0.2)
    for profile in ("sebench", "strict"):
        with Judge(lib, profile=profile, workers=1) as judge:
            v = judge.judge_many([(block(code), cases, "def solve(x):", None, code)])[0]
        assert v.passed, (profile, v.status.value, v.detail[:160])
