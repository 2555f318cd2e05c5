"""Strict's library returns NumPy-like scalars (se_gym/library/scalars.py).

The official library hands out NumPy's own scalars for a 0-d result, so honest NumPy code calls
``.item()``, ``.tolist()``, ``.ndim`` or ``.dtype`` on a reduction.  Strict returned plain Python
numbers and scored such answers ``runtime_error`` (official tasks 60 and 162's own references
among them): a wall that forbids normal code.  These tests fail before the scalar classes.
"""
from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from se_gym.judge import Judge
from se_gym.library import mint, writer
from se_gym.library.scalars import make_types

LIB = mint(0)
PKG = LIB.package
SUM, ARRAY, MEAN = LIB.qualified("sum"), LIB.qualified("array"), LIB.qualified("mean")
CASES = [{"input": "[1,2,3]", "output": "6"}, {"input": "[4,5]", "output": "9"}, {"input": "[7]", "output": "7"}]
MEAN_CASES = [{"input": "[1,2,3]", "output": "2.0"}, {"input": "[4,5]", "output": "4.5"}, {"input": "[7]", "output": "7.0"}]


def _answer(body: str) -> str:
    return f"```python\nimport {PKG}\n\ndef total(x):\n{body}\n```"


HONEST = {
    "item": (f"    return {SUM}({ARRAY}(x)).item()", CASES),
    "tolist": (f"    return {SUM}({ARRAY}(x)).tolist()", CASES),
    "queries": (f"    r = {SUM}({ARRAY}(x))\n    assert r.ndim == 0 and r.shape == () and r.size == 1\n"
                f"    assert r.dtype == 'int64'\n    return int(r)", CASES),
    "arithmetic then item": (f"    return ({MEAN}({ARRAY}(x)) * 2 / 2).item()", MEAN_CASES),
    "int division is a float64": (f"    r = {SUM}({ARRAY}(x)) / len(x)\n    assert r.dtype == 'float64'\n"
                                  f"    return r.item()", MEAN_CASES),
    "returned as it is": (f"    return {SUM}({ARRAY}(x))", CASES),
    "inside a list": (f"    return [{MEAN}({ARRAY}(x))][0]", MEAN_CASES),
}
HOSTILE = {
    # the scalar class taken from a library call on a constant, filled with a plain-Python result
    "forged scalar": (f"    T = type({SUM}({ARRAY}([1])))\n    return T(sum(x))", CASES),
    "scalar of a thrown-away call": (f"    {SUM}({ARRAY}(x)).item()\n    return sum(x)", CASES),
}


@pytest.fixture(scope="module")
def judge():
    with Judge(LIB, profile="strict") as j:
        yield j


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_numpy_scalar_code_passes_strict(judge, name):
    body, cases = HONEST[name]
    v = judge.judge(_answer(body), cases, "total")
    assert v.reward == 1.0, (name, v.status, v.detail)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_scalar_does_not_carry_a_plain_python_result(judge, name):
    body, cases = HOSTILE[name]
    v = judge.judge(_answer(body), cases, "total")
    assert v.reward == 0.0 and v.status.value == "library_unused", (name, v.status, v.detail)


def test_indexing_and_iteration_still_give_python_scalars(judge):
    # the official array's indexing gives Python scalars: only library functions give NumPy's
    body = (f"    a = {ARRAY}(x)\n    assert type(a[0]) is int and all(type(v) is int for v in a)\n"
            f"    return int({SUM}(a))")
    v = judge.judge(_answer(body), CASES, "total")
    assert v.reward == 1.0, (v.status, v.detail)


def test_scalar_classes_behave_like_numpy_scalars():
    class DType(str):
        pass

    types = make_types(DType)
    i, f = types["int64"](7), types["float64"](2.5)
    assert (i.item(), f.tolist()) == (7, 2.5) and type(i.item()) is int and type(f.item()) is float
    assert (i.ndim, i.shape, i.size, f.dtype) == (0, (), 1, "float64")
    assert type(i + 1).__name__ == "int64" and type(i / 2).__name__ == "float64"
    assert type(1 - f).__name__ == "float64" and type(-i).__name__ == "int64" and type(i + f).__name__ == "float64"
    assert type(i < 3) is bool and repr(f) == "2.5" and str(i) == "7"
    assert type(pickle.loads(pickle.dumps(f))) is float


def test_the_in_process_strict_library_returns_them_too(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "STRICT_SERVER", False)
    out = LIB.write(tmp_path / "lib", profile="strict", with_docs=False)
    assert (out / PKG / "_core.py").exists()
    code = (f"import {PKG}\nr = {SUM}({ARRAY}([1, 2, 3]))\n"
            "print(type(r).__name__, r.item(), type(r.item()).__name__, r.ndim, r.dtype)")
    got = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, timeout=60)
    assert got.stdout.split() == ["int64", "6", "int", "0", "int64"], got.stderr[-500:]


def test_scalars_in_docker(docker_daemon):
    """The same in a container: the library written there carries its ``_scalars.py``."""
    from conftest import started_docker_judge

    with started_docker_judge(LIB) as judge:
        honest = judge.judge(_answer(HONEST["item"][0]), CASES, "total")
        forged = judge.judge(_answer(HOSTILE["forged scalar"][0]), CASES, "total")
    assert honest.reward == 1.0, (honest.status, honest.detail)
    assert forged.reward == 0.0 and forged.status.value == "library_unused", (forged.status, forged.detail)
