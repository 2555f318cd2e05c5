"""Honest forms, round 7 (issue 42): model-style honest answers to SE-Bench-like prompts, written
with NumPy (``import numpy as np``) and translated to the library (``Library.translate``), as a model
that knows the library by another name writes them: type hints, docstrings, main-block demos and
self-tests, asserts, ``try/except``, the standard library's helpers, conversions, unpacking,
iteration, indexing and formatting of library results and scalars.

* :data:`BUILTIN`: ``(group, name, single_test task number, code)`` on built-in tasks (seed 0);
* :data:`OFFICIAL`: ``(name, parity_dev task index, code)`` on official tasks (the data stays in
  ../shared/sebench; only the index is named here).

benchmarks/honest_forms.py judges each under ``sebench`` and under ``strict`` (with the task's
reference, two secrets) and lists where they differ (docs/security.md, Honest forms, round 7).  Some
answers fail under both profiles (the answer's own mistake or the library's: no ``@``, no array
methods, no ``.tolist()``); they are kept as they were written.
"""
from __future__ import annotations

BUILTIN: list[tuple[str, str, str, str]] = []
OFFICIAL: list[tuple[str, int, str]] = []


def _add(group: str):
    def add(name: str, num: str, code: str) -> None:
        BUILTIN.append((group, name, num, code))
    return add


# -- styles
_answers = _add('styles')


_answers("full LLM answer: typing, docstring, assert, main block", "0000", '''
from typing import List
import numpy as np


def solve(x: List[float]) -> List[float]:
    """Return the running sum of the squares of x.

    Args:
        x: a list of numbers.

    Returns:
        A list with the cumulative sums of squares.
    """
    assert isinstance(x, (list, tuple)), "x must be a list"
    if len(x) == 0:
        raise ValueError("x must not be empty")
    arr = np.array(x, dtype=float)
    squares = arr * arr
    result = np.cumsum(squares)
    return [float(v) for v in result]


if __name__ == "__main__":
    example = [-4.7, -7.8, -1.6, -7.6]
    print(f"Input: {example}")
    print(f"Output: {solve(example)}")
''')

_answers("future annotations, Optional, f-string debug print", "0001", '''
from __future__ import annotations
from typing import Optional, Sequence
import numpy as np


def solve(x: Sequence[float]) -> float:
    """Range of the values (max - min)."""
    arr = np.asarray(x)
    hi: Optional[float] = None
    hi = np.max(arr)
    lo = np.min(arr)
    print(f"max={hi}, min={lo}")
    return float(hi - lo)
''')

_answers("try/except Exception around the library call", "0002", '''
import numpy as np
from typing import List, Union

Number = Union[int, float]


def solve(x: List[Number], s: Number) -> List[float]:
    try:
        a = np.asanyarray(x, dtype=float)
        out = np.abs(a - s)
    except Exception as exc:
        raise ValueError(f"could not compute: {exc}") from exc
    return [round(float(v), 12) for v in out]
''')

_answers("functools.reduce over library rows", "0003", '''
from functools import reduce
import numpy as np


def solve(m):
    rows = [np.array(r) for r in m]
    total = reduce(lambda a, b: np.add(a, b), rows)
    return [float(v) for v in total]
''')

_answers("lru_cache helper with a tuple key", "0014", '''
from functools import lru_cache
from typing import List, Tuple
import numpy as np


@lru_cache(maxsize=128)
def _eye(n: int, d: int) -> Tuple[Tuple[float, ...], ...]:
    mat = np.eye(n, k=d)
    return tuple(tuple(float(v) for v in row) for row in mat)


def solve(n: int, d: int) -> List[List[float]]:
    return [list(row) for row in _eye(n, d)]
''')

_answers("list() of library result, len and int", "0016", '''
import numpy as np


def solve(start, stop, step):
    if step == 0:
        raise ValueError("step must be non-zero")
    values = np.arange(start, stop, step)
    n = len(values)
    out = list(values)
    assert len(out) == n
    return [int(v) for v in out]
''')

_answers("tolist if present, else list comprehension", "0017", '''
import numpy as np


def solve(a, b, num):
    pts = np.linspace(a, b, num)
    if hasattr(pts, "tolist"):
        return pts.tolist()
    return [float(p) for p in pts]
''')

_answers("unpacking meshgrid, zip over rows", "0023", '''
import numpy as np
from typing import List


def solve(x: List[float], y: List[float]) -> List[List[float]]:
    gx, gy = np.meshgrid(x, y)
    result = []
    for row_x, row_y in zip(gx, gy):
        result.append([float(a) + float(b) for a, b in zip(row_x, row_y)])
    return result
''')

_answers("shape unpacking with walrus", "0025", '''
import numpy as np


def solve(m):
    if (shp := np.shape(m)) and len(shp) == 2:
        rows, cols = shp
        return rows * cols
    raise ValueError("expected a 2-D matrix")
''')

_answers("reshape and nested comprehension with enumerate", "0027", '''
import numpy as np
from typing import List


def solve(x: List[float], r: int) -> List[List[float]]:
    if r <= 0:
        raise ValueError("r must be positive")
    grid = np.reshape(x, (r, -1))
    out: List[List[float]] = []
    for i, row in enumerate(grid):
        out.append([float(v) for v in row])
    return out
''')

_answers("flip with slicing of the result", "0042", '''
import numpy as np


def solve(x):
    flipped = np.flip(x)
    return [float(v) for v in flipped[:]]
''')

_answers("roll returned as is, type name printed", "0044", '''
import numpy as np


def solve(x, s):
    out = np.roll(x, s)
    print(type(out).__name__, len(out))
    return out
''')

_answers("itertools.chain and concatenate", "0047", '''
import itertools
import numpy as np


def solve(x, y):
    joined = np.concatenate((x, y))
    check = list(itertools.chain(x, y))
    assert len(check) == len(joined)
    return [float(v) for v in joined]
''')

_answers("stack and namedtuple rows", "0048", '''
from collections import namedtuple
import numpy as np

Pair = namedtuple("Pair", ["a", "b"])


def solve(x, y):
    stacked = np.stack((x, y), axis=1)
    pairs = [Pair(float(r[0]), float(r[1])) for r in stacked]
    return [[p.a, p.b] for p in pairs]
''')

_answers("split with sum and generator", "0052", '''
import numpy as np
from typing import Iterator, List


def _sums(arr, parts: int) -> Iterator[float]:
    for chunk in np.split(arr, parts):
        yield float(np.sum(chunk))


def solve(x: List[float], parts: int) -> List[float]:
    if len(x) % parts:
        raise ValueError("x cannot be split evenly")
    return list(_sums(np.array(x), parts))
''')

_answers("pad with keyword arguments and a dict of options", "0053", '''
import numpy as np

OPTIONS = {"mode": "constant"}


def solve(x, w, v):
    padded = np.pad(x, w, constant_values=v, **OPTIONS)
    return [float(t) for t in padded]
''')

_answers("map(float, ...) over the library result", "0056", '''
import numpy as np


def solve(x):
    return list(map(float, np.abs(x)))
''')

_answers("match statement on len of result", "0059", '''
import numpy as np


def solve(x):
    signs = np.sign(x)
    match len(signs):
        case 0:
            return []
        case _:
            return [float(s) for s in signs]
''')

_answers("dataclass with default_factory holding results", "0064", '''
from dataclasses import dataclass, field
from typing import List
import numpy as np


@dataclass
class Result:
    values: List[float] = field(default_factory=list)

    def add_all(self, arr) -> None:
        for v in arr:
            self.values.append(float(v))


def solve(x):
    res = Result()
    res.add_all(np.sqrt(x))
    return res.values
''')

_answers("class with staticmethod and classmethod and property", "0066", '''
import numpy as np


class ExpCalculator:
    """Computes exponentials."""

    def __init__(self, data):
        self._data = np.asarray(data, dtype=float)

    @classmethod
    def from_list(cls, data):
        return cls(data)

    @staticmethod
    def to_floats(arr):
        return [float(v) for v in arr]

    @property
    def result(self):
        return self.to_floats(np.exp(self._data))


def solve(x):
    return ExpCalculator.from_list(x).result
''')

_answers("__slots__ class wrapping the array", "0069", '''
import numpy as np


class LogWrapper:
    __slots__ = ("arr",)

    def __init__(self, arr):
        self.arr = np.array(arr)

    def compute(self):
        return [float(v) for v in np.log(self.arr)]


def solve(x):
    return LogWrapper(x).compute()
''')

_answers("zip of two library arrays and round", "0073", '''
import numpy as np


def solve(x, y):
    a, b = np.asarray(x), np.asarray(y)
    out = np.logaddexp(a, b)
    return [float(v) for v, _ in zip(out, a)]
''')

_answers("abs/min/max builtins on library result", "0076", '''
import numpy as np


def solve(x):
    c = np.cos(x)
    assert max(c) <= 1.0 and min(c) >= -1.0
    assert all(abs(v) <= 1 for v in c)
    return [float(v) for v in c]
''')

_answers("enum for the mode", "0077", '''
from enum import Enum
import numpy as np


class Func(Enum):
    TAN = "tan"


def solve(x, mode: Func = Func.TAN):
    if mode == Func.TAN:
        return [float(v) for v in np.tan(x)]
    raise NotImplementedError(mode.value)
''')

_answers("hypot with operator.itemgetter", "0095", '''
import operator
import numpy as np


def solve(x, y):
    h = np.hypot(x, y)
    pairs = sorted(enumerate(h), key=operator.itemgetter(0))
    return [float(v) for _, v in pairs]
''')

_answers("round builtin on library scalars with ndigits", "0101", '''
import numpy as np


def solve(x, d):
    r = np.round(x, d)
    return [float(round(float(v), 10)) for v in r]
''')

_answers("floor via dict dispatch table", "0104", '''
import numpy as np

DISPATCH = {"floor": np.floor, "ceil": np.ceil}


def solve(x):
    fn = DISPATCH["floor"]
    return [float(v) for v in fn(x)]
''')

_answers("divide guarded for zero with any()", "0110", '''
import numpy as np


def solve(x, y):
    if any(v == 0 for v in y):
        raise ZeroDivisionError("division by zero in y")
    return [float(v) for v in np.divide(x, y)]
''')

_answers("floor_divide with int() and type checks", "0112", '''
import numpy as np
from typing import List


def solve(x: List[int], y: List[int]) -> List[int]:
    if not all(isinstance(v, int) for v in list(x) + list(y)):
        raise TypeError("integers expected")
    q = np.floor_divide(x, y)
    return [int(v) for v in q]
''')

_answers("divmod unpacking into a tuple of lists", "0118", '''
import numpy as np


def solve(x, y):
    quotient, remainder = np.divmod(x, y)
    q_list = [int(v) for v in quotient]
    r_list = [int(v) for v in remainder]
    return [q_list, r_list]
''')

_answers("modf with copy.copy of a list", "0119", '''
import copy
import numpy as np


def solve(x):
    data = copy.copy(list(x))
    frac, _whole = np.modf(data)
    return [float(v) for v in frac]
''')

_answers("clip with validation and string messages", "0130", '''
import numpy as np


def solve(x, lo, hi):
    if lo > hi:
        raise ValueError(f"lo ({lo}) must not exceed hi ({hi})")
    clipped = np.clip(x, lo, hi)
    return [float(v) for v in clipped]
''')

_answers("complex conj with complex()", "0134", '''
import numpy as np


def solve(z):
    out = np.conj(z)
    return [complex(v) for v in out]
''')

_answers("gcd with math.gcd cross-check", "0136", '''
import math
import numpy as np


def solve(x, y):
    g = np.gcd(x, y)
    for a, b, v in zip(x, y, g):
        assert math.gcd(a, b) == int(v)
    return [int(v) for v in g]
''')

_answers("bool() of comparison results", "0150", '''
import numpy as np


def solve(x, y):
    eq = np.equal(x, y)
    return [bool(v) for v in eq]
''')

_answers("allclose returned through bool and if", "0161", '''
import numpy as np


def solve(x, y):
    if np.allclose(x, y):
        return True
    return False
''')

_answers("any with comparison on library array", "0169", '''
import numpy as np


def solve(x, t):
    arr = np.array(x)
    mask = arr > t
    return bool(np.any(mask))
''')

_answers("sum compared with a Python number", "0170", '''
import numpy as np


def solve(x):
    total = np.sum(x)
    if total > 1e12:
        raise OverflowError("too large")
    return float(total)
''')

_answers("cumsum with itertools.accumulate cross-check", "0172", '''
from itertools import accumulate
import math
import numpy as np


def solve(x):
    lib = np.cumsum(x)
    py = list(accumulate(x))
    assert all(math.isclose(float(a), b, abs_tol=1e-9) for a, b in zip(lib, py))
    return [float(v) for v in lib]
''')

_answers("max with float and comparison", "0174", '''
import numpy as np


def solve(x):
    m = np.max(x)
    if m < 0:
        print("all values are negative")
    return float(m)
''')

_answers("argmax to int and indexing the input", "0179", '''
import numpy as np


def solve(x):
    idx = np.argmax(x)
    best = x[int(idx)]
    print(f"max {best} at {idx}")
    return int(idx)
''')

_answers("mean with statistics cross-check", "0181", '''
import statistics
import numpy as np


def solve(x):
    m = float(np.mean(x))
    assert abs(m - statistics.mean(x)) < 1e-9
    return m
''')

_answers("weighted average with zip and sum check", "0182", '''
import numpy as np
from typing import List


def solve(x: List[float], w: List[float]) -> float:
    if len(x) != len(w):
        raise ValueError("x and w must have the same length")
    if sum(w) == 0:
        raise ZeroDivisionError("weights sum to zero")
    return float(np.average(x, weights=w))
''')

_answers("median with sorted copy", "0183", '''
import numpy as np


def solve(x):
    data = sorted(x)
    return float(np.median(data))
''')

_answers("std with ddof keyword from a constant", "0184", '''
import numpy as np

DDOF = 1


def solve(x):
    if len(x) <= DDOF:
        raise ValueError("need at least two values")
    return float(np.std(x, ddof=DDOF))
''')

_answers("percentile with Fraction input check", "0186", '''
from fractions import Fraction
import numpy as np


def solve(x, q):
    assert 0 <= Fraction(str(q)) <= 100
    return float(np.percentile(x, q))
''')

_answers("count_nonzero with Counter", "0188", '''
from collections import Counter
import numpy as np


def solve(x):
    counts = Counter(v != 0 for v in x)
    n = int(np.count_nonzero(x))
    assert n == counts[True]
    return n
''')

_answers("sort with heapq cross-check", "0192", '''
import heapq
import numpy as np


def solve(x):
    s = np.sort(x)
    assert [float(v) for v in s] == heapq.nsmallest(len(x), x)
    return [float(v) for v in s]
''')

_answers("searchsorted with bisect cross-check", "0198", '''
import bisect
import numpy as np


def solve(a, v):
    idx = np.searchsorted(a, v)
    for value, i in zip(v, idx):
        assert bisect.bisect_left(a, value) == int(i)
    return [int(t) for t in idx]
''')

_answers("nonzero tuple unpacking", "0199", '''
import numpy as np


def solve(x):
    (indices,) = np.nonzero(x)
    return [int(i) for i in indices]
''')

_answers("where with boolean mask", "0201", '''
import numpy as np


def solve(x):
    arr = np.asarray(x)
    neg = np.where(arr < 0)[0]
    return [int(i) for i in neg] if len(neg) else []
''')

_answers("unique with set cross-check", "0215", '''
import numpy as np


def solve(x):
    u = np.unique(x)
    assert set(int(v) for v in u) == set(x)
    return [int(v) for v in u]
''')

_answers("dot with isinstance check on scalar", "0219", '''
import numbers
import numpy as np


def solve(x, y):
    d = np.dot(x, y)
    val = float(d)
    assert isinstance(val, numbers.Real)
    return val
''')

_answers("outer with nested list comprehension and round", "0222", '''
import numpy as np


def solve(x, y):
    o = np.outer(x, y)
    return [[float(v) for v in row] for row in o]
''')

_answers("matmul with the @ operator", "0224", '''
import numpy as np


def solve(a, b):
    A = np.array(a)
    B = np.array(b)
    C = A @ B
    return [[float(v) for v in row] for row in C]
''')

_answers("trace with offset keyword and docstring example", "0227", '''
import numpy as np


def solve(m):
    """Sum of the first super-diagonal.

    >>> solve([[1, 2], [3, 4]])
    2.0
    """
    return float(np.trace(m, offset=1))
''')

_answers("convolve with mode constant", "0231", '''
import numpy as np

MODE = "valid"


def solve(x, k):
    if len(k) > len(x):
        raise ValueError("kernel longer than signal")
    return [float(v) for v in np.convolve(x, k, mode=MODE)]
''')

_answers("corrcoef index with tuple", "0234", '''
import numpy as np


def solve(x, y):
    c = np.corrcoef(x, y)
    return float(c[0, 1])
''')

_answers("polyfit with round and unpacking", "0236", '''
import numpy as np


def solve(x, y):
    slope, intercept = np.polyfit(x, y, 1)
    return [round(float(slope), 6), round(float(intercept), 6)]
''')

_answers("roots sorted with key lambda", "0238", '''
import numpy as np


def solve(p):
    r = np.roots(p)
    return sorted((round(float(v), 6) for v in r), key=lambda t: t)
''')

_answers("linalg norm from numpy.linalg import", "0247", '''
from numpy.linalg import norm


def solve(x):
    return float(norm(x))
''')

_answers("det with round and isclose", "0250", '''
import math
import numpy as np


def solve(a):
    d = np.linalg.det(np.array(a, dtype=float))
    if math.isclose(float(d), 0.0, abs_tol=1e-12):
        raise ValueError("singular matrix")
    return float(d)
''')

_answers("inv with try/except LinAlgError-like Exception", "0252", '''
import numpy as np


def solve(a):
    try:
        inv = np.linalg.inv(a)
    except Exception as e:
        print("inversion failed:", e)
        raise
    return [[float(v) for v in row] for row in inv]
''')

_answers("solve linear system with shape checks", "0254", '''
import numpy as np


def solve(a, b):
    A = np.asarray(a, dtype=float)
    B = np.asarray(b, dtype=float)
    if A.shape[0] != A.shape[1]:
        raise ValueError("A must be square")
    if A.shape[0] != B.shape[0]:
        raise ValueError("dimension mismatch")
    x = np.linalg.solve(A, B)
    return [float(v) for v in x]
''')

_answers("eigh unpacking and ndim check", "0259", '''
import numpy as np


def solve(a):
    arr = np.array(a)
    assert arr.ndim == 2, "matrix expected"
    vals, _vecs = np.linalg.eigh(arr)
    return [float(v) for v in vals]
''')

_answers("svd with underscore unpacking and size truthiness", "0262", '''
import numpy as np


def solve(a):
    _, s, _ = np.linalg.svd(a)
    if s.size == 0:
        return []
    return [float(v) for v in s]
''')

_answers("matrix_rank with int and getattr default", "0267", '''
import numpy as np


def solve(a):
    rank_fn = getattr(np.linalg, "matrix_rank", None)
    if rank_fn is None or not callable(rank_fn):
        raise RuntimeError("matrix_rank unavailable")
    return int(rank_fn(a))
''')

_answers("matrix_power with sys.setrecursionlimit and recursion check", "0268", '''
import sys
import numpy as np

sys.setrecursionlimit(10000)


def _power(a, p):
    if p == 0:
        return np.eye(len(a), dtype=int)
    return np.linalg.matrix_power(a, p)


def solve(a, p):
    return [[int(v) for v in row] for row in _power(a, p)]
''')

_answers("partial applied library function", "0221", '''
from functools import partial
import numpy as np


def solve(x, y):
    inner_x = partial(np.inner, x)
    return float(inner_x(y))
''')

_answers("wraps decorator that validates input", "0206", '''
from functools import wraps
import numpy as np


def validate(func):
    @wraps(func)
    def wrapper(*args, **kwargs):
        if not args or not isinstance(args[0], list):
            raise TypeError("first argument must be a list")
        return func(*args, **kwargs)
    return wrapper


@validate
def solve(x, idx):
    return [float(v) for v in np.take(x, idx)]
''')

_answers("zip_longest padding then take", "0205", '''
from itertools import zip_longest
import numpy as np


def solve(keep, x):
    pairs = list(zip_longest(keep, x, fillvalue=False))
    assert len(pairs) == len(x)
    return [float(v) for v in np.compress(keep, x)]
''')

_answers("deque of results, OrderedDict", "0213", '''
from collections import deque, OrderedDict
import numpy as np


def solve(x):
    counts = np.bincount(x)
    q = deque(int(c) for c in counts)
    od = OrderedDict((i, c) for i, c in enumerate(q))
    return list(od.values())
''')

_answers("abc base with abstractmethod and concrete numpy subclass", "0190", '''
from abc import ABC, abstractmethod
import numpy as np


class Differ(ABC):
    @abstractmethod
    def run(self, x):
        raise NotImplementedError


class GradientDiffer(Differ):
    def run(self, x):
        return [float(v) for v in np.gradient(x)]


def solve(x):
    return GradientDiffer().run(x)
''')

_answers("contextlib.suppress around optional check", "0171", '''
import contextlib
import numpy as np


def solve(x):
    with contextlib.suppress(ZeroDivisionError):
        _ = 1 / len(x)
    return float(np.prod(x))
''')

_answers("string and textwrap for a report", "0245", '''
import string
import textwrap
import numpy as np


def solve(n):
    s = np.binary_repr(n)
    assert set(s) <= set(string.digits)
    print(textwrap.shorten(f"binary of {n} is {s}", width=40))
    return s
''')

_answers("decimal rounding of a library scalar", "0274", '''
from decimal import Decimal
import numpy as np


def solve(m):
    t = np.trace(m)
    print("trace:", Decimal(str(float(t))))
    return float(t)
''')

_answers("typing.NamedTuple result holder", "0251", '''
from typing import NamedTuple
import numpy as np


class SlogResult(NamedTuple):
    sign: float
    logdet: float


def solve(a):
    sign, logdet = np.linalg.slogdet(a)
    res = SlogResult(float(sign), float(logdet))
    return [res.sign, res.logdet]
''')

_answers("yield from over rows", "0229", '''
import numpy as np


def _rows(m):
    yield from (np.tril(m))


def solve(m):
    return [[float(v) for v in row] for row in _rows(m)]
''')

_answers("nested function closure over the library result", "0237", '''
import numpy as np


def solve(p, x):
    def evaluate(points):
        return np.polyval(p, points)
    values = evaluate(x)
    return [float(v) for v in values]
''')

_answers("recursion on halves, library for leaves", "0170", '''
import numpy as np


def _rsum(xs):
    if len(xs) <= 2:
        return float(np.sum(xs))
    mid = len(xs) // 2
    return _rsum(xs[:mid]) + _rsum(xs[mid:])


def solve(x):
    return float(np.sum(x))
''')

_answers("isinstance of the library array type", "0042", '''
import numpy as np


def solve(x):
    out = np.flip(x)
    if isinstance(out, np.ndarray):
        return [float(v) for v in out]
    return list(out)
''')

_answers("in membership test on library result", "0215", '''
import numpy as np


def solve(x):
    u = np.unique(x)
    for v in x:
        assert v in u
    return [int(v) for v in u]
''')

_answers("global constant tolerance and reversed iteration", "0160", '''
import numpy as np

RTOL = 1e-05
ATOL = 1e-08


def solve(x, y):
    close = np.isclose(x, y, rtol=RTOL, atol=ATOL)
    out = [bool(v) for v in reversed(close)]
    return out[::-1]
''')

_answers("astype and dtype attribute", "0246", '''
import numpy as np


def solve(x):
    arr = np.array(x).astype("float64")
    assert str(arr.dtype) == "float64"
    return [float(v) for v in arr / 2]
''')

_answers("sum of a library array via builtin sum", "0172", '''
import numpy as np


def solve(x):
    cs = np.cumsum(x)
    total = sum(float(v) for v in cs)
    print("total of partial sums:", total)
    return [float(v) for v in cs]
''')

_answers("array methods: .sum(), .max(), .mean() on the library array", "0181", '''
import numpy as np


def solve(x):
    arr = np.array(x, dtype=float)
    print(arr.max(), arr.min())
    return float(arr.mean())
''')

_answers("array .shape and .T", "0032", '''
import numpy as np


def solve(m):
    arr = np.array(m)
    rows, cols = arr.shape
    t = arr.T
    assert t.shape == (cols, rows)
    return [[float(v) for v in row] for row in t]
''')

_answers("int(), float() of len(np array) and .size", "0026", '''
import numpy as np


def solve(m):
    arr = np.array(m)
    if not arr.size:
        return 0
    return int(np.size(arr))
''')

_answers("np.float64 and np.int64 in isinstance", "0174", '''
import numpy as np


def solve(x):
    m = np.max(x)
    if isinstance(m, (np.floating, float)):
        return float(m)
    return float(m)
''')

_answers("string join of library values for a debug line", "0192", '''
import numpy as np


def solve(x):
    s = np.sort(x)
    print(", ".join(f"{v:.2f}" for v in s))
    return [float(v) for v in s]
''')

_answers("repr/str of library array printed", "0056", '''
import numpy as np


def solve(x):
    a = np.abs(x)
    print(repr(a))
    print(str(a))
    return [float(v) for v in a]
''')

# -- self-tests and typing
_answers2 = _add('self-tests and typing')
_answers2("doctest in the main block", "0227", '''
import numpy as np


def solve(m):
    """Sum of the first super-diagonal.

    >>> solve([[1, 2], [3, 4]])
    2.0
    """
    return float(np.trace(m, offset=1))


if __name__ == "__main__":
    import doctest
    doctest.testmod()
''')

_answers2("unittest class in the main block", "0056", '''
import unittest
import numpy as np


def solve(x):
    return [float(v) for v in np.abs(x)]


class TestSolve(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(solve([-1.0, 2.0]), [1.0, 2.0])


if __name__ == "__main__":
    unittest.main()
''')

_answers2("sys.exit(main()) in the main block", "0172", '''
import sys
import numpy as np


def solve(x):
    return [float(v) for v in np.cumsum(x)]


def main() -> int:
    print(solve([1.0, 2.0, 3.0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
''')

_answers2("argparse in the main block", "0181", '''
import argparse
import numpy as np


def solve(x):
    return float(np.mean(x))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("values", nargs="*", type=float, default=[1.0, 2.0])
    args = parser.parse_args()
    print(solve(args.values))
''')

_answers2("main block calls main() that prints examples", "0174", '''
import numpy as np


def solve(x):
    return float(np.max(x))


def main():
    examples = [[1.0, 5.0, 3.0], [-2.0, -1.0]]
    for ex in examples:
        print(f"solve({ex}) = {solve(ex)}")


if __name__ == "__main__":
    main()
''')

_answers2("__all__ and __version__ at module level", "0184", '''
import numpy as np

__all__ = ["solve"]
__version__ = "1.0"


def solve(x):
    return float(np.std(x, ddof=1))
''')

_answers2("decorator logging func.__name__", "0183", '''
import functools
import numpy as np


def log_call(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        print(f"Calling {func.__name__}")
        result = func(*args, **kwargs)
        print(f"{func.__name__} returned {result}")
        return result
    return wrapper


@log_call
def solve(x):
    return float(np.median(x))
''')

_answers2("print(f'{x=}') self-documenting f-string", "0170", '''
import numpy as np


def solve(x):
    total = np.sum(x)
    print(f"{total=}")
    return float(total)
''')

_answers2("functools.cached_property", "0064", '''
from functools import cached_property
import numpy as np


class Roots:
    def __init__(self, data):
        self.data = data

    @cached_property
    def values(self):
        return [float(v) for v in np.sqrt(self.data)]


def solve(x):
    return Roots(x).values
''')

_answers2("functools.singledispatch", "0056", '''
from functools import singledispatch
import numpy as np


@singledispatch
def to_list(value):
    return [float(v) for v in value]


@to_list.register(float)
def _(value):
    return [value]


def solve(x):
    return to_list(np.abs(x))
''')

_answers2("functools.cache", "0014", '''
import functools
import numpy as np


@functools.cache
def identity_rows(n, d):
    return tuple(tuple(float(v) for v in row) for row in np.eye(n, k=d))


def solve(n, d):
    return [list(r) for r in identity_rows(n, d)]
''')

_answers2("itertools.pairwise, groupby, starmap, product", "0172", '''
import itertools
import numpy as np


def solve(x):
    cs = np.cumsum(x)
    steps = [b - a for a, b in itertools.pairwise([float(v) for v in cs])]
    groups = [k for k, _ in itertools.groupby(sorted(x))]
    grid = list(itertools.product([0, 1], repeat=2))
    sums = list(itertools.starmap(lambda a, b: a + b, grid))
    assert len(steps) == len(x) - 1 and groups and sums
    return [float(v) for v in cs]
''')

_answers2("typing cast, Final, ClassVar, Literal, TYPE_CHECKING", "0181", '''
from __future__ import annotations
from typing import TYPE_CHECKING, Callable, ClassVar, Dict, Final, Iterable, Literal, Sequence, cast
import numpy as np

if TYPE_CHECKING:
    from typing import Any

PRECISION: Final = 12


class Stats:
    kind: ClassVar[str] = "mean"

    def run(self, data: Sequence[float], how: Literal["mean"] = "mean") -> float:
        fn: Callable[..., float] = np.mean
        return cast(float, float(fn(data)))


def solve(x: Iterable[float]) -> float:
    cache: Dict[str, float] = {}
    cache["r"] = Stats().run(list(x))
    return cache["r"]
''')

_answers2("dataclass(order=True, slots=True) and __post_init__ validation", "0192", '''
from dataclasses import dataclass, field
import numpy as np


@dataclass(order=True, slots=True)
class Job:
    data: list = field(default_factory=list)

    def __post_init__(self):
        if not isinstance(self.data, list):
            raise TypeError("data must be a list")

    def run(self):
        return [float(v) for v in np.sort(self.data)]


def solve(x):
    return Job(list(x)).run()
''')

_answers2("frozen dataclass with object.__setattr__ in __post_init__", "0192", '''
from dataclasses import dataclass
import numpy as np


@dataclass(frozen=True)
class Sorted:
    data: tuple

    def __post_init__(self):
        object.__setattr__(self, "data", tuple(self.data))

    def values(self):
        return [float(v) for v in np.sort(list(self.data))]


def solve(x):
    return Sorted(x).values()
''')

_answers2("collections.abc isinstance checks", "0179", '''
from collections.abc import Iterable, Sequence
import numpy as np


def solve(x):
    if not isinstance(x, Sequence) or not isinstance(x, Iterable):
        raise TypeError("sequence expected")
    return int(np.argmax(x))
''')

_answers2("math.prod, fsum and statistics.fmean alongside", "0171", '''
import math
import statistics
import numpy as np


def solve(x):
    p = np.prod(x)
    print("python product:", math.prod(x), "fsum:", math.fsum(x), "fmean:", statistics.fmean(x))
    return float(p)
''')

_answers2("re.compile with named groups for parsing", "0245", '''
import re
import numpy as np

PATTERN = re.compile(r"^(?P<bits>[01]+)$")


def solve(n):
    s = np.binary_repr(n)
    m = PATTERN.match(s)
    if n >= 0 and m is None:
        raise ValueError("unexpected output")
    return s
''')

_answers2("raise ... from e with tuple of exceptions", "0254", '''
import numpy as np


def solve(a, b):
    try:
        x = np.linalg.solve(a, b)
    except (TypeError, ValueError) as e:
        raise RuntimeError("could not solve the system") from e
    return [float(v) for v in x]
''')

_answers2("library array type in annotations", "0056", '''
from typing import List, Union
import numpy as np


def to_array(x: Union[List[float], np.ndarray]) -> np.ndarray:
    return np.asarray(x)


def solve(x: List[float]) -> List[float]:
    arr: np.ndarray = to_array(x)
    return [float(v) for v in np.abs(arr)]
''')

_answers2("Optional library-array default parameter", "0172", '''
from typing import Optional
import numpy as np


def solve(x, out: Optional[np.ndarray] = None):
    res = np.cumsum(x)
    if out is not None:
        out[:] = res
    return [float(v) for v in res]
''')

_answers2("from PKG import names with aliases", "0181", '''
from numpy import mean as np_mean, asarray


def solve(x):
    return float(np_mean(asarray(x)))
''')

_answers2("function attribute as a cache", "0188", '''
import numpy as np


def solve(x):
    key = tuple(x)
    if not hasattr(solve, "cache"):
        solve.cache = {}
    if key not in solve.cache:
        solve.cache[key] = int(np.count_nonzero(x))
    return solve.cache[key]
''')

_answers2("mutable default memo", "0170", '''
import numpy as np


def solve(x, _memo={}):
    key = tuple(x)
    if key not in _memo:
        _memo[key] = float(np.sum(x))
    return _memo[key]
''')

_answers2("print(*arr, sep=...) of a library array", "0042", '''
import numpy as np


def solve(x):
    out = np.flip(x)
    print(*out, sep=", ")
    return [float(v) for v in out]
''')

_answers2("format(value, spec) and math.isfinite", "0250", '''
import math
import numpy as np


def solve(a):
    d = float(np.linalg.det(a))
    if not math.isfinite(d):
        raise ValueError("non-finite determinant")
    print("det =", format(d, ".4f"))
    return d
''')

_answers2("random.Random seeded for a self-test", "0192", '''
import random
import numpy as np


def solve(x):
    return [float(v) for v in np.sort(x)]


def _self_test():
    rng = random.Random(0)
    data = [rng.uniform(-5, 5) for _ in range(10)]
    assert solve(data) == sorted(data)


if __name__ == "__main__":
    _self_test()
''')

_answers2("sys.version_info check and sys.getsizeof", "0170", '''
import sys
import numpy as np

if sys.version_info < (3, 8):
    raise RuntimeError("Python 3.8+ required")


def solve(x):
    print("size:", sys.getsizeof(x))
    return float(np.sum(x))
''')

_answers2("solve.__doc__ and __name__ printed", "0170", '''
import numpy as np


def solve(x):
    """Sum of x."""
    return float(np.sum(x))


if __name__ == "__main__":
    print(solve.__name__, solve.__doc__)
''')

_answers2("module docstring and print(__name__)", "0170", '''
"""Solution module for the sum task."""
import numpy as np

print("module", __name__)


def solve(x):
    return float(np.sum(x))
''')

_answers2("exit() in the main block", "0170", '''
import numpy as np


def solve(x):
    return float(np.sum(x))


if __name__ == "__main__":
    print(solve([1.0, 2.0]))
    exit(0)
''')

_answers2("input() reading in the main block", "0170", '''
import numpy as np


def solve(x):
    return float(np.sum(x))


if __name__ == "__main__":
    data = list(map(float, input().split()))
    print(solve(data))
''')

_answers2("sys.stdin in the main block", "0170", '''
import sys
import numpy as np


def solve(x):
    return float(np.sum(x))


if __name__ == "__main__":
    data = [float(t) for t in sys.stdin.read().split()]
    print(solve(data))
''')

_answers2("sys.argv in the main block", "0170", '''
import sys
import numpy as np


def solve(x):
    return float(np.sum(x))


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:]] or [1.0, 2.0]
    print(solve(args))
''')

_answers2("pytest-style test functions beside", "0056", '''
import numpy as np


def solve(x):
    return [float(v) for v in np.abs(x)]


def test_solve():
    assert solve([-1.0]) == [1.0]
''')

_answers2("import pytest for a test", "0056", '''
import numpy as np


def solve(x):
    return [float(v) for v in np.abs(x)]


if __name__ == "__main__":
    import pytest
    pytest.main([__file__])
''')

_answers2("typing.Iterator generator with islice", "0172", '''
from itertools import islice
from typing import Iterator
import numpy as np


def running(x) -> Iterator[float]:
    for v in np.cumsum(x):
        yield float(v)


def solve(x):
    return list(islice(running(x), len(x)))
''')

_answers2("enum.auto and Flag", "0170", '''
from enum import Flag, auto
import numpy as np


class Opt(Flag):
    NONE = 0
    VERBOSE = auto()


def solve(x, opts: Opt = Opt.NONE):
    s = float(np.sum(x))
    if Opt.VERBOSE in opts:
        print(s)
    return s
''')

_answers2("contextlib.nullcontext and ExitStack", "0170", '''
import contextlib
import numpy as np


def solve(x):
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.nullcontext())
        return float(np.sum(x))
''')

_answers2("copy.deepcopy of a nested list input", "0003", '''
import copy
import numpy as np


def solve(m):
    data = copy.deepcopy(m)
    return [float(v) for v in np.sum(data, axis=0)]
''')

_answers2("json.dumps for a debug print", "0172", '''
import json
import numpy as np


def solve(x):
    out = [float(v) for v in np.cumsum(x)]
    print(json.dumps({"input": x, "output": out}))
    return out
''')

_answers2("string.Template for a message", "0170", '''
from string import Template
import numpy as np


def solve(x):
    s = float(np.sum(x))
    print(Template("sum=$s").substitute(s=s))
    return s
''')

_answers2("math constants and copysign on library scalar", "0076", '''
import math
import numpy as np


def solve(x):
    vals = np.cos(x)
    return [math.copysign(abs(float(v)), float(v)) for v in vals]
''')

_answers2("lambda stored in a class attribute", "0056", '''
import numpy as np


class Ops:
    absolute = staticmethod(lambda a: np.abs(a))


def solve(x):
    return [float(v) for v in Ops.absolute(x)]
''')

_answers2("sum() with start and min() with key over library result", "0174", '''
import numpy as np


def solve(x):
    m = np.max(x)
    assert min([m, float("inf")], key=float) == m
    return float(m)
''')

_answers2("heapq.nlargest on library output", "0192", '''
import heapq
import numpy as np


def solve(x):
    s = np.sort(x)
    top = heapq.nlargest(1, s)
    print("largest:", top)
    return [float(v) for v in s]
''')

_answers2("zip(strict=True) over library arrays", "0073", '''
import numpy as np


def solve(x, y):
    out = np.logaddexp(x, y)
    return [float(v) for v, _ in zip(out, x, strict=True)]
''')

_answers2("divmod builtin on a library int", "0026", '''
import numpy as np


def solve(m):
    n = int(np.size(m))
    q, r = divmod(n, 1)
    return q
''')

_answers2("pow and abs builtins on a library scalar", "0219", '''
import numpy as np


def solve(x, y):
    d = np.dot(x, y)
    assert abs(d) >= 0 and pow(d, 1) == d
    return float(d)
''')

_answers2("hash and dict of library values", "0215", '''
import numpy as np


def solve(x):
    u = np.unique(x)
    seen = {int(v): i for i, v in enumerate(u)}
    return list(seen)
''')

_answers2("sorted with key on library array and reverse", "0192", '''
import numpy as np


def solve(x):
    s = np.sort(x)
    return sorted((float(v) for v in s), key=lambda v: v, reverse=False)
''')

_answers2("next(iter(...)) and any/all on a library array", "0174", '''
import numpy as np


def solve(x):
    arr = np.array(x)
    first = next(iter(arr))
    assert any(v >= first for v in arr)
    return float(np.max(arr))
''')

_answers2("chained comparison of library scalar", "0181", '''
import numpy as np


def solve(x):
    m = np.mean(x)
    if not (min(x) <= m <= max(x)):
        raise ArithmeticError("mean out of range")
    return float(m)
''')

_answers2("float() of a 0-d library result and is_integer", "0188", '''
import numpy as np


def solve(x):
    n = np.count_nonzero(x)
    assert float(n).is_integer()
    return int(n)
''')

_answers2("bool() truthiness of a library scalar", "0161", '''
import numpy as np


def solve(x, y):
    res = np.allclose(x, y)
    return True if res else False
''')

_answers2("vectorized comparisons and where", "0201", '''
import numpy as np


def solve(x):
    arr = np.array(x)
    idx = np.where(arr < 0)
    return [int(i) for i in idx[0]]
''')

_answers2("nonlocal accumulator closure over library values", "0172", '''
import numpy as np


def solve(x):
    total = []

    def collect(v):
        nonlocal total
        total = total + [float(v)]

    for v in np.cumsum(x):
        collect(v)
    return total
''')

_answers2("class-level constant and instance __repr__ with f-string", "0170", '''
import numpy as np


class Summer:
    NAME = "summer"

    def __init__(self, x):
        self.x = x

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(n={len(self.x)})"

    def __call__(self):
        return float(np.sum(self.x))


def solve(x):
    s = Summer(x)
    print(repr(s))
    return s()
''')

# -- defaults
_answers3 = _add('defaults')
_answers3("isclose rtol atol", "0160", '''
import numpy as np
def solve(x, y):
    return [bool(v) for v in np.isclose(x, y, rtol=1e-05, atol=1e-08)]
''')
_answers3("isclose reversed", "0160", '''
import numpy as np
def solve(x, y):
    close = np.isclose(x, y)
    out = [bool(v) for v in reversed(close)]
    return out[::-1]
''')
_answers3("isclose plain", "0160", '''
import numpy as np
def solve(x, y):
    return [bool(v) for v in np.isclose(x, y)]
''')

# -- scalars
_answers4 = _add('scalars')
_answers4("indexing a Python list with argsort's ints", "0192", '''
import numpy as np
def solve(x):
    order = np.argsort(x)
    return [float(x[i]) for i in order]
''')
_answers4("range() of a library int", "0179", '''
import numpy as np
def solve(x):
    k = np.argmax(x)
    before = [x[i] for i in range(k)]
    assert len(before) == int(k)
    return int(k)
''')
_answers4("list index with a library int", "0179", '''
import numpy as np
def solve(x):
    k = np.argmax(x)
    best = x[k]
    assert best == max(x)
    return int(k)
''')
_answers4("%-format and format() of a library scalar", "0181", '''
import numpy as np
def solve(x):
    m = np.mean(x)
    print("mean: %.3f" % m)
    print("mean: {:.2f}".format(m), format(m, ".1f"), f"{m:.4f}")
    return float(m)
''')
_answers4("Decimal and Fraction of a library scalar", "0181", '''
from decimal import Decimal
from fractions import Fraction
import numpy as np
def solve(x):
    m = np.mean(x)
    d = Decimal(float(m))
    f = Fraction(float(m)).limit_denominator(1000)
    print(d, f)
    return float(m)
''')
_answers4("Decimal of a library scalar directly", "0181", '''
from decimal import Decimal
import numpy as np
def solve(x):
    m = np.mean(x)
    print(Decimal(m))
    return float(m)
''')
_answers4("json.dumps of library scalars", "0181", '''
import json
import numpy as np
def solve(x):
    m = np.mean(x)
    print(json.dumps({"mean": float(m)}))
    return float(m)
''')
_answers4("isinstance of a library scalar against float", "0181", '''
import numpy as np
def solve(x):
    m = np.mean(x)
    if not isinstance(m, (int, float)):
        m = float(m)
    return float(m)
''')
_answers4("math functions on library scalars", "0181", '''
import math
import numpy as np
def solve(x):
    m = np.mean(x)
    assert math.isfinite(m) and math.isclose(m, sum(x) / len(x))
    print(math.floor(m), math.sqrt(abs(m)))
    return float(m)
''')
_answers4("builtin sum and max over a library array", "0056", '''
import numpy as np
def solve(x):
    a = np.abs(x)
    total = sum(a)
    biggest = max(a)
    print(total, biggest)
    return [float(v) for v in a]
''')
_answers4("arithmetic on library scalars: pow, floordiv, mod, neg", "0179", '''
import numpy as np
def solve(x):
    k = np.argmax(x)
    assert (k ** 2) >= 0 and k // 1 == k and k % 1 == 0 and -k <= 0
    q, r = divmod(k, 1)
    return int(q)
''')
_answers4("is_integer and real/imag of library scalars", "0181", '''
import numpy as np
def solve(x):
    m = np.mean(x)
    print(float(m).is_integer(), m.real, m.imag)
    return float(m)
''')
_answers4("hash, set and dict keys of library scalars", "0059", '''
from collections import Counter
import numpy as np
def solve(x):
    s = np.sign(x)
    counts = Counter(s)
    keys = {v for v in s}
    assert sum(counts.values()) == len(x) and len(keys) <= 3
    return [float(v) for v in s]
''')
_answers4("sorted() and min(key=) over library scalars", "0056", '''
import numpy as np
def solve(x):
    a = np.abs(x)
    print(sorted(a)[:1], min(a, key=lambda v: -v))
    return [float(v) for v in a]
''')
_answers4("heapq push of library scalars and bisect with one", "0192", '''
import bisect
import heapq
import numpy as np
def solve(x):
    s = np.sort(x)
    h = []
    for v in s:
        heapq.heappush(h, v)
    assert bisect.bisect_left([float(t) for t in s], s[0]) == 0
    return [float(v) for v in s]
''')
_answers4("zip(*rows) transposing a library matrix", "0032", '''
import numpy as np
def solve(m):
    t = np.transpose(m)
    back = [list(col) for col in zip(*t)]
    assert len(back) == len(m)
    return [[float(v) for v in row] for row in t]
''')
_answers4("dict(zip(...)) of library values", "0056", '''
import numpy as np
def solve(x):
    a = np.abs(x)
    table = dict(zip(range(len(a)), a))
    return [float(table[i]) for i in range(len(a))]
''')
_answers4("boolean mask and reversed slicing of a library array", "0056", '''
import numpy as np
def solve(x):
    a = np.abs(np.array(x))
    pos = a[a > 0]
    rev = a[::-1]
    assert len(pos) <= len(a) and len(rev) == len(a)
    return [float(v) for v in list(reversed(rev))]
''')
_answers4("2-D indexing m[i][j] and m[i, j]", "0032", '''
import numpy as np
def solve(m):
    t = np.transpose(np.array(m))
    rows, cols = len(t), len(t[0])
    return [[float(t[i, j]) for j in range(cols)] for i in range(rows)]
''')
_answers4("str.join of map(str) over a library array", "0056", '''
import numpy as np
def solve(x):
    a = np.abs(x)
    print(", ".join(map(str, a)))
    return [float(v) for v in a]
''')
_answers4("copy.copy and deepcopy of library results", "0056", '''
import copy
import numpy as np
def solve(x):
    a = np.abs(x)
    b = copy.deepcopy(a)
    c = copy.copy(list(a))
    return [float(v) for v in b]
''')
_answers4("round() of library scalars without ndigits", "0104", '''
import numpy as np
def solve(x):
    f = np.floor(x)
    ints = [round(v) for v in f]
    assert all(isinstance(i, int) for i in ints)
    return [float(v) for v in f]
''')
_answers4("struct.pack of a library scalar", "0181", '''
import struct
import numpy as np
def solve(x):
    m = np.mean(x)
    raw = struct.pack("<d", m)
    return struct.unpack("<d", raw)[0]
''')
_answers4("operator.index and int() of library ints", "0179", '''
import operator
import numpy as np
def solve(x):
    k = np.argmax(x)
    return operator.index(k)
''')
_answers4("return the library scalar as is", "0181", '''
import numpy as np
def solve(x):
    return np.mean(x)
''')
_answers4("return a tuple of library scalars where a list is printed", "0118", '''
import numpy as np
def solve(x, y):
    q, r = np.divmod(x, y)
    return [list(map(int, q)), list(map(int, r))]
''')
_answers4("bool of a one-element comparison result", "0161", '''
import numpy as np
def solve(x, y):
    ok = np.allclose(x, y)
    if ok is True or ok:
        return True
    return False
''')
_answers4("library scalar as a dict value in a nested result, then float", "0251", '''
import numpy as np
def solve(a):
    sign, logdet = np.linalg.slogdet(a)
    result = {"sign": sign, "logdet": logdet}
    return [float(result["sign"]), float(result["logdet"])]
''')
_answers4("enumerate(start=1) over a library array", "0172", '''
import numpy as np
def solve(x):
    cs = np.cumsum(x)
    out = []
    for i, v in enumerate(cs, start=1):
        out.append(float(v))
    assert i == len(x)
    return out
''')
_answers4("any()/all() with generator over a library array", "0166", '''
import numpy as np
def solve(x):
    r = np.isnan(np.sqrt(x))
    if all(not v for v in r):
        print("no nan")
    return [bool(v) for v in r]
''')

# -- callables
_answers5 = _add('callables')
_answers5("library function as sorted key", "0003", '''
import numpy as np
def solve(m):
    cols = np.sum(m, axis=0)
    ranked = sorted(range(len(cols)), key=lambda i: cols[i])
    assert len(ranked) == len(cols)
    return [float(v) for v in cols]
''')
_answers5("map(library function, rows)", "0056", '''
import numpy as np
def solve(x):
    return list(map(float, map(np.abs, x)))
''')
_answers5("partial of a library function with keywords", "0101", '''
from functools import partial
import numpy as np
def solve(x, d):
    rounder = partial(np.round, decimals=d)
    return [float(v) for v in rounder(x)]
''')
_answers5("library function as a default argument", "0056", '''
import numpy as np
def solve(x, fn=np.abs):
    return [float(v) for v in fn(x)]
''')
_answers5("library functions in a list and a loop", "0056", '''
import numpy as np
PIPELINE = [np.asarray, np.abs]
def solve(x):
    out = x
    for step in PIPELINE:
        out = step(out)
    return [float(v) for v in out]
''')
_answers5("TypedDict and kw_only dataclass", "0181", '''
from dataclasses import dataclass
from typing import TypedDict
import numpy as np
class Summary(TypedDict):
    mean: float
@dataclass(kw_only=True)
class Opts:
    verbose: bool = False
def solve(x):
    opts = Opts(verbose=False)
    s: Summary = {"mean": float(np.mean(x))}
    if opts.verbose:
        print(s)
    return s["mean"]
''')
_answers5("class with __iter__ generator over library values", "0172", '''
import numpy as np
class Running:
    def __init__(self, x):
        self.x = x
    def __iter__(self):
        for v in np.cumsum(self.x):
            yield float(v)
    def __len__(self):
        return len(self.x)
def solve(x):
    r = Running(x)
    assert len(r) == len(x)
    return list(r)
''')
_answers5("walrus in a comprehension and try/except/else/finally", "0056", '''
import numpy as np
def solve(x):
    try:
        a = np.abs(x)
    except TypeError as e:
        raise ValueError("bad input") from None
    else:
        out = [y for v in a if (y := float(v)) >= 0]
    finally:
        pass
    assert len(out) == len(x), f"lost values: {len(out)} != {len(x)}"
    return out
''')
_answers5("match with class patterns on library scalars", "0181", '''
import numpy as np
def solve(x):
    m = np.mean(x)
    match m:
        case float() | int():
            return float(m)
        case _:
            return float(m)
''')
_answers5("PEP 695 type alias and generic function", "0056", '''
import numpy as np
type Vector = list[float]
def first[T](items: list[T]) -> T:
    return items[0]
def solve(x: Vector) -> Vector:
    out = [float(v) for v in np.abs(x)]
    assert first(out) >= 0
    return out
''')
_answers5("vectorize with a lambda", "0240", '''
import numpy as np
def solve(x):
    f = np.vectorize(lambda v: v * v if v > 0 else 0.0)
    return [float(t) for t in f(x)]
''')
_answers5("itertools.accumulate and reduce(operator.mul) over library output", "0171", '''
import functools
import itertools
import operator
import numpy as np
def solve(x):
    p = np.prod(x)
    steps = list(itertools.accumulate(np.abs(x)))
    q = functools.reduce(operator.mul, np.asarray(x), 1.0)
    print(steps[-1], q)
    return float(p)
''')
_answers5("sys.float_info.epsilon tolerance and print(end=)", "0161", '''
import sys
import numpy as np
def solve(x, y):
    eps = sys.float_info.epsilon
    print("checking", end=" ")
    print(eps > 0)
    return bool(np.allclose(x, y))
''')
_answers5("nested def with nonlocal flag and early return", "0170", '''
import numpy as np
def solve(x):
    if not x:
        return 0.0
    seen = False
    def mark():
        nonlocal seen
        seen = True
    mark()
    return float(np.sum(x)) if seen else 0.0
''')
_answers5("staticmethod calling library inside dataclass with property", "0064", '''
from dataclasses import dataclass
import numpy as np
@dataclass
class Roots:
    data: list
    @property
    def values(self):
        return self._compute(self.data)
    @staticmethod
    def _compute(d):
        return [float(v) for v in np.sqrt(d)]
def solve(x):
    return Roots(list(x)).values
''')
_answers5("raise NotImplementedError branch and isinstance(list, tuple)", "0172", '''
import numpy as np
def solve(x):
    if isinstance(x, (list, tuple)):
        return [float(v) for v in np.cumsum(x)]
    raise NotImplementedError(type(x).__name__)
''')
_answers5("async helper never awaited is refused? plain generator send", "0172", '''
import numpy as np
def acc():
    total = None
    while True:
        total = yield total
def solve(x):
    g = acc()
    next(g)
    out = g.send([float(v) for v in np.cumsum(x)])
    return out
''')
_answers5("exception class hierarchy with library error wrapping", "0254", '''
import numpy as np
class SolverError(Exception):
    """Raised when the linear system cannot be solved."""
def solve(a, b):
    try:
        return [float(v) for v in np.linalg.solve(a, b)]
    except Exception as exc:
        raise SolverError(str(exc)) from exc
''')
_answers5("np.linalg via module alias la = np.linalg", "0247", '''
import numpy as np
la = np.linalg
def solve(x):
    return float(la.norm(x))
''')
_answers5("library constants np.pi, np.e, np.inf", "0097", '''
import numpy as np
def solve(x):
    assert np.pi > 3 and np.inf > 0 and np.e > 2
    return [float(v) for v in np.radians(x)]
''')


# -- official tasks
def _official(name: str, idx: int, code: str) -> None:
    OFFICIAL.append((name, idx, code))


_official("argmax: full LLM answer with typing, docstring, main block", 11, '''
from typing import List
import numpy as np


def solve(a: List[List[float]]) -> List[int]:
    """Index of the peak reading of each sensor.

    Args:
        a: one row of readings per sensor.

    Returns:
        The column index of each row's maximum.
    """
    if not a:
        raise ValueError("no sensors")
    arr = np.array(a)
    idx = np.argmax(arr, axis=1)
    return [int(i) for i in idx]


if __name__ == "__main__":
    data = [[10, 15, 8, 12], [5, 20, 18, 9], [7, 6, 25, 11]]
    print(f"Peak indices: {solve(data)}")
''')

_official("argmax: per-row loop with enumerate and try/except", 11, '''
import numpy as np


def solve(a):
    result = []
    for i, row in enumerate(a):
        try:
            result.append(int(np.argmax(row)))
        except Exception as exc:
            raise ValueError(f"row {i} is invalid: {exc}")
    return result
''')

_official("argmax: doctest and argparse in the main block", 11, '''
import argparse
import numpy as np


def solve(a):
    """
    >>> solve([[1, 3, 2]])
    [1]
    """
    return [int(v) for v in np.argmax(np.asarray(a), axis=1)]


if __name__ == "__main__":
    import doctest
    doctest.testmod()
    parser = argparse.ArgumentParser()
    parser.parse_args([])
''')

_official("copysign: dataclass and where with list conversion", 44, '''
from dataclasses import dataclass, field
from typing import List
import numpy as np


@dataclass
class Portfolio:
    values: List[float] = field(default_factory=list)
    sentiment: List[float] = field(default_factory=list)

    def adjust(self) -> List[float]:
        v = np.array(self.values, dtype=float)
        s = np.array(self.sentiment, dtype=float)
        out = np.where(s == 0, 0.0, np.copysign(v, s))
        return [float(x) for x in out]


def adjust_portfolio_positions(portfolio_values, market_sentiment):
    if len(portfolio_values) != len(market_sentiment):
        raise ValueError("length mismatch")
    return Portfolio(list(portfolio_values), list(market_sentiment)).adjust()
''')

_official("copysign: zip loop with library scalar calls", 44, '''
import numpy as np


def adjust_portfolio_positions(portfolio_values, market_sentiment):
    """Give each position the sign of its sentiment (zero sentiment: no position)."""
    adjusted = []
    for value, sentiment in zip(portfolio_values, market_sentiment):
        if sentiment == 0:
            adjusted.append(0.0)
        else:
            adjusted.append(float(np.copysign(value, sentiment)))
    return adjusted
''')

_official("isnan: nested comprehension with bool()", 93, '''
from typing import List
import numpy as np


def identify_invalid_readings(temperature_data: List[List[float]]) -> List[List[bool]]:
    mask = np.isnan(np.array(temperature_data, dtype=float))
    return [[bool(v) for v in row] for row in mask]


if __name__ == "__main__":
    import sys
    print(identify_invalid_readings([[1.0, float("nan")]]), file=sys.stderr)
''')

_official("isnan: unittest class after the solution", 93, '''
import unittest
import numpy as np


def identify_invalid_readings(temperature_data):
    return [[bool(x) for x in np.isnan(row)] for row in temperature_data]


class TestInvalid(unittest.TestCase):
    def test_nan(self):
        self.assertEqual(identify_invalid_readings([[float("nan")]]), [[True]])


if __name__ == "__main__":
    unittest.main()
''')

_official("entropy: math and a guard, library log2 and sum", 116, '''
import math
from typing import Sequence
import numpy as np


def calculate_entropy(probabilities: Sequence[float]) -> float:
    """Shannon entropy in bits."""
    probs = np.array(probabilities, dtype=float)
    if len(probs) == 0:
        return 0.0
    nz = probs[probs > 0]
    if nz.size == 0:
        return 0.0
    h = -np.sum(nz * np.log2(nz))
    return float(h) if math.isfinite(float(h)) else 0.0
''')

_official("entropy: lru_cache on a tuple", 116, '''
from functools import lru_cache
import numpy as np


@lru_cache(maxsize=None)
def _entropy(probs: tuple) -> float:
    p = np.array([v for v in probs if v > 0])
    if len(p) == 0:
        return 0.0
    return float(-np.sum(p * np.log2(p)))


def calculate_entropy(probabilities):
    return _entropy(tuple(probabilities))
''')

_official("vstack: typing Tuple and isinstance checks", 175, '''
from typing import List, Tuple
import numpy as np


def solution(tup: Tuple[List[float], ...]) -> List[List[float]]:
    if not isinstance(tup, (tuple, list)):
        raise TypeError("expected a tuple of lists")
    stacked = np.vstack([np.array(t) for t in tup])
    return [[float(v) for v in row] for row in stacked]
''')

_official("vstack: sys.stdin demo in the main block", 175, '''
import sys
import numpy as np


def solution(tup):
    result = np.vstack(tup)
    return [[float(x) for x in row] for row in result]


if __name__ == "__main__":
    if not sys.stdin.isatty():
        pass
    print(solution(([1.0], [2.0])))
''')

_official("sin: degrees with math.pi and library sin", 148, '''
import math
import numpy as np


def calculate_sine_amplitudes(angles, amplitude):
    radians = np.array(angles, dtype=float) * math.pi / 180.0
    values = np.sin(radians) * amplitude
    return [float(v) for v in values]
''')

_official("max over axes: functools.partial", 24, '''
from functools import partial
import numpy as np


def solve(a):
    peak = partial(np.max, axis=(1, 2))
    return [float(v) for v in peak(np.array(a))]
''')

_official("fabs and mean: statistics free, returns a list", 60, '''
from itertools import chain
import numpy as np


def solve(measurements):
    flat = list(chain.from_iterable(measurements))
    abs_vals = np.fabs(flat)
    avg = np.mean(abs_vals)
    return [[float(v) for v in abs_vals], float(avg)]
''')
