"""copy.copy and copy.deepcopy of the library's array under strict (se_gym/library/client.py, the
server's ``copy`` request).  Honest NumPy code copies arrays; strict's array refused to be pickled,
and the copy module goes through pickling's protocol, so such answers raised ``TypeError: cannot
pickle`` under strict and passed under sebench (found by red-team round 7).  These tests fail before
the array's ``__copy__``/``__deepcopy__``."""
from __future__ import annotations

import pytest

from conftest import legit_skip
from se_gym.judge import Judge
from se_gym.library import mint, writer

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: the array is NumPy's own there")

LIB = mint(0)
PKG = LIB.package
ARRAY, CUMSUM = LIB.qualified("array"), LIB.qualified("cumsum")
CASES = [{"input": "x=[1, 2, 3]", "output": "[1, 3, 6]"}, {"input": "x=[4, 5]", "output": "[4, 9]"},
         {"input": "x=[-2, 7, 1, 1]", "output": "[-2, 5, 6, 7]"}]
REFERENCE = f"import {PKG}\ndef solve(x):\n    return [int(v) for v in {CUMSUM}({ARRAY}(x))]"


def _item(body: str):
    return (f"```python\nimport copy\nimport {PKG}\ndef solve(x):\n{body}\n```", CASES, "def solve(x):", None, REFERENCE)


HONEST = {
    "deepcopy": f"    b = copy.deepcopy({ARRAY}(x))\n    return [int(v) for v in {CUMSUM}(b)]",
    "copy": f"    b = copy.copy({ARRAY}(x))\n    return [int(v) for v in {CUMSUM}(b)]",
    "deepcopy of a list of arrays": f"    b = copy.deepcopy([{ARRAY}(x)])\n    return [int(v) for v in {CUMSUM}(b[0])]",
    # NumPy's semantics: the copy has its own data
    "the copy is its own": (f"    a = {ARRAY}(x)\n    b = copy.copy(a)\n    b[0] = 100\n"
                            f"    return [int(v) for v in {CUMSUM}(a)]"),
    "a copy of a library result": f"    return [int(v) for v in copy.deepcopy({CUMSUM}({ARRAY}(x)))]",
}
HOSTILE = {
    # a Python result carried through a copy of an array built from it
    "a Python result, copied": ("    out, t = [], 0\n    for v in x:\n        t += v\n        out.append(t)\n"
                                f"    {CUMSUM}({ARRAY}([1]))\n    return [int(v) for v in copy.copy({ARRAY}(out))]"),
}


@pytest.fixture(scope="module")
def judge():
    with Judge(LIB, profile="strict") as j:
        yield j


def test_honest_copies_pass_strict_with_the_dependence_check(judge):
    verdicts = judge.judge_many([_item(body) for body in HONEST.values()])
    assert [(n, v.reward) for n, v in zip(HONEST, verdicts)] == [(n, 1.0) for n in HONEST], [v.detail for v in verdicts]


def test_a_copy_does_not_carry_a_python_result(judge):
    verdicts = judge.judge_many([_item(body) for body in HOSTILE.values()])
    assert all(v.reward == 0.0 for v in verdicts), [(v.status, v.detail) for v in verdicts]
