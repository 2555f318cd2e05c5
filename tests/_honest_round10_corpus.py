"""Honest forms, round 10: model-style honest answers on built-in seeds 6-9 (single_test,
multiple_test, train) and on official parity_dev tasks rounds 7-8 did not answer.

Each answer is written with NumPy (``import numpy as np``) and translated to its task's library
(``Library.translate``), computing its results with the *same* library functions as the task's
reference, in unusual but ordinary Python forms (classes, dataclasses, decorators, closures,
generators, recursion, functools/itertools/collections/operator, enum, typing, match, context
managers, a dict of library functions...).

Placeholders are expanded by benchmarks/honest_forms.py after translation (for spellings the
translator does not write: a library name inside a string, the package's own name):
* ``LIBNAME("cumsum")`` -> the string of the library's name for that NumPy function (for getattr);
* ``LIBATTR("cumsum")`` -> that name, bare; ``LIBSUB`` -> the linalg submodule's name;
* ``LIBPKG`` -> the library's package name (for ``import LIBPKG`` / ``importlib``).

* :data:`BUILTIN`: ``(group, name, seed, split, task number, code)``;
* :data:`OFFICIAL`: ``(name, parity_dev task index, code)``.
"""
from __future__ import annotations

BUILTIN: list[tuple[str, str, int, str, str, str]] = []
OFFICIAL: list[tuple[str, int, str]] = []


def _add(group: str, seed: int, split: str):
    def add(name: str, num: str, code: str) -> None:
        BUILTIN.append((group, name, seed, split, num, code))
    return add


def _official(name: str, idx: int, code: str) -> None:
    OFFICIAL.append((name, idx, code))


# ---------------------------------------------------------------- seed 6, single_test
_s6 = _add("seed 6 single_test", 6, "single_test")

_s6("empty_like buffer filled by cumsum inside a class with __slots__", "0007", '''
import numpy as np


def solve(x):
    return list(RunningTotal(x, np.cumsum(x)))


class RunningTotal:
    __slots__ = ("buf",)

    def __init__(self, x, totals):
        self.buf = np.empty_like(x)
        self.buf[:] = totals

    def __iter__(self):
        yield from (float(v) for v in self.buf)
''')

_s6("linspace via a frozen dataclass and a property", "0017", '''
from dataclasses import dataclass
import numpy as np


def solve(a, b, num):
    g = Grid(a, b, num, np.linspace(a, b, num))
    return g.points


@dataclass(frozen=True)
class Grid:
    a: float
    b: float
    num: int
    values: object

    @property
    def points(self) -> list[float]:
        return [float(v) for v in self.values]
''')

_s6("ceil through a dict of library functions chosen by an Enum", "0105", '''
import enum
import numpy as np


def solve(x):
    ops = {Mode.UP: lambda v: np.ceil(v), Mode.DOWN: lambda v: np.floor(v)}
    return [float(v) for v in ops[Mode("up")](x)]


class Mode(enum.Enum):
    UP = "up"
    DOWN = "down"
''')

_s6("bitwise_not with a decorator converting to ints (functools.wraps)", "0142", '''
import functools
import numpy as np


def solve(x):
    """Two's-complement inversion of each element."""
    return np.bitwise_not(x)


def as_ints(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return [int(v) for v in fn(*args, **kwargs)]
    return wrapper


solve = as_ints(solve)
''')

_s6("dot, rows through itertools.starmap and a namedtuple", "0219", '''
import itertools
from collections import namedtuple
import numpy as np


def solve(a, b):
    product = np.dot(a, b)
    s = Shape(len(a), len(b[0]))
    rows = list(itertools.starmap(_row, enumerate(product)))
    assert len(rows) == s.rows
    return rows


Shape = namedtuple("Shape", "rows cols")


def _row(i, row):
    return [float(v) for v in row]
''')

_s6("polyfit in a try/except/else/finally, round in a comprehension", "0236", '''
import numpy as np
import logging

log = logging.getLogger(__name__)


def solve(x, y):
    calls = []
    try:
        coeffs = np.polyfit(x, y, 1)
    except (ValueError, TypeError) as exc:
        raise ValueError("cannot fit") from exc
    else:
        out = [round(float(c), 6) for c in coeffs]
    finally:
        calls.append("fit")
    log.debug("fit %s", out)
    return out
''')

_s6("slogdet unpacked with a match statement on the result tuple", "0251", '''
import numpy as np


def solve(a):
    match np.linalg.slogdet(a):
        case (sign, logdet):
            return [float(sign), float(logdet)]
''')

_s6("cond through lru_cache on a tuple of tuples", "0266", '''
from functools import lru_cache
import numpy as np


def solve(a):
    @lru_cache(maxsize=None)
    def cond(key):
        return float(np.linalg.cond([list(r) for r in key]))
    return cond(tuple(tuple(r) for r in a))
''')

# ---------------------------------------------------------------- seed 6, multiple_test
_m6 = _add("seed 6 multiple_test", 6, "multiple_test")

_m6("clip, sin, min as a functools.reduce over a pipeline of partials", "0022", '''
from functools import partial, reduce
import numpy as np


def solve(x):
    pipeline = (partial(np.clip, a_min=-5, a_max=5), np.sin)
    return float(np.min(reduce(lambda acc, f: f(acc), pipeline, x)))
''')

_m6("multiply, abs, matmul with transpose, norm in a class with a classmethod", "0038", '''
import numpy as np


def solve(m):
    return Gram(np.abs(np.multiply(m, 2))).norm()


class Gram:
    def __init__(self, b):
        self.b = b

    @classmethod
    def from_matrix(cls, m):
        return cls(m)

    def norm(self) -> float:
        c = np.matmul(self.b, np.transpose(self.b))
        return float(np.linalg.norm(c))
''')

_m6("maximum, roll, sqrt(abs), sum with walrus and a generator", "0071", '''
import numpy as np


def solve(x, y):
    *_, c = _steps(np.maximum(x, y))
    return float(np.sum(c))


def _steps(a):
    yield a
    yield (b := np.roll(a, 1))
    yield np.sqrt(np.abs(b))
''')

_m6("cumsum, floor, repeat, var as a closure factory", "0127", '''
import numpy as np


def solve(x):
    stat = make_stat(2)
    return stat(np.cumsum(x))


def make_stat(times):
    def stat(a):
        b = np.floor(a)
        c = np.repeat(b, times)
        return float(np.var(c))
    return stat
''')

_m6("triu, multiply, column sums, returned through a deque", "0145", '''
from collections import deque
import numpy as np


def solve(m):
    a = np.triu(m)
    b = np.multiply(a, 2)
    q = deque()
    for t in np.sum(b, axis=0):
        q.append(float(t))
    return list(q)
''')

_m6("matmul with transpose, add eye, abs, diagonal; a contextmanager timing block", "0167", '''
import contextlib
import time
import numpy as np


def solve(m):
    times = {}
    with timed("gram", times):
        a = np.matmul(m, np.transpose(m))
        b = np.add(a, np.eye(len(a)))
        c = np.abs(b)
    return [float(t) for t in np.diagonal(c)]


@contextlib.contextmanager
def timed(label, sink):
    t0 = time.perf_counter()
    try:
        yield
    finally:
        sink[label] = time.perf_counter() - t0
''')

_m6("add, radians, argmax with operator.methodcaller-free itemgetter on a tuple", "0195", '''
import operator
import numpy as np

first = operator.itemgetter(0)


def solve(x):
    pair = (np.radians(np.add(x, 1)), "deg->rad")
    return int(np.argmax(first(pair)))
''')

_m6("abs, cumsum, arctan; results through itertools.chain of two halves", "0381", '''
import itertools
import numpy as np


def solve(x):
    c = np.arctan(np.cumsum(np.abs(x)))
    n = len(c)
    half = n // 2
    return [float(t) for t in itertools.chain(c[:half], c[half:])]
''')

# ---------------------------------------------------------------- seed 6, train
_t6 = _add("seed 6 train", 6, "train")

_t6("gcd with `from numpy import gcd as g` and builtin generic type hints", "0136", '''
from numpy import gcd as g


def solve(x: list[int], y: list[int]):
    return g(x, y)
''')

_t6("matrix_power, rows converted by a Protocol-typed helper with a staticmethod", "0268", '''
from typing import Protocol
import numpy as np


def solve(a, p):
    return _run(IntRows(), np.linalg.matrix_power(a, p))


class Converter(Protocol):
    def convert(self, m): ...


class IntRows:
    @staticmethod
    def convert(m):
        return [[int(v) for v in row] for row in m]


def _run(conv: Converter, m):
    return conv.convert(m)
''')

_t6("diff with getattr(lib, name, None) from a module-level string constant, a lambda fallback", "0467", '''
import numpy as np

FUNC = LIBNAME("diff")


def solve(x):
    f = getattr(LIBPKG, FUNC, None) or (lambda v: np.diff(v))
    return [float(v) for v in f(x)]
''')

_t6("ldexp with zip_longest check of lengths and map(float)", "0677", '''
import itertools
import numpy as np


def solve(x, e):
    for a, b in itertools.zip_longest(x, e):
        if a is None or b is None:
            raise ValueError("length mismatch")
    return list(map(float, np.ldexp(x, e)))
''')

_t6("conjugate, converted by a __call__ class", "0691", '''
import numpy as np


def solve(z):
    return Conj()(np.conjugate(z))


class Conj:
    def __call__(self, conj):
        return [complex(v) for v in conj]
''')

_t6("left_shift with a module-level constant table and assert isinstance", "0702", '''
import numpy as np

MAX_SHIFT = 62


def solve(x, s):
    assert isinstance(x, list) and isinstance(s, list)
    if any(v > MAX_SHIFT for v in s):
        raise ValueError("shift too large")
    out = np.left_shift(x, s)
    return [int(v) for v in out]
''')

_t6("transpose rows collected with copy.deepcopy of the list", "0310", '''
import copy
import numpy as np


def solve(m):
    rows = [[float(v) for v in row] for row in np.transpose(m)]
    return copy.deepcopy(rows)
''')

# ---------------------------------------------------------------- seed 7, single_test
_s7 = _add("seed 7 single_test", 7, "single_test")

_s7("asanyarray and abs of the shift, in a generator with yield from", "0002", '''
import numpy as np


def solve(x, s):
    a = np.asanyarray(x)
    return [float(v) for v in _values(np.abs(a - s))]


def _values(arr):
    yield from arr
''')

_s7("diagflat rows through a recursive helper", "0022", '''
import sys
import numpy as np

sys.setrecursionlimit(max(sys.getrecursionlimit(), 2000))


def solve(x):
    return _rows(np.diagflat(x))


def _rows(m, i=0):
    if i == len(m):
        return []
    return [[int(v) for v in m[i]]] + _rows(m, i + 1)
''')

_s7("frexp parts into a dict via dataclasses.asdict", "0120", '''
from dataclasses import dataclass, asdict, field
import numpy as np


@dataclass
class Decomp:
    mantissa: list = field(default_factory=list)
    exponent: list = field(default_factory=list)


def solve(x):
    m, e = np.frexp(x)
    d = Decomp([float(v) for v in m], [int(v) for v in e])
    return asdict(d)["mantissa"]
''')

_s7("greater_equal with a Counter kept for a debug print to stderr", "0155", '''
import sys
from collections import Counter
import numpy as np


def solve(x, y):
    flags = [bool(v) for v in np.greater_equal(x, y)]
    print(Counter(flags), file=sys.stderr)
    return flags
''')

_s7("isclose through `from numpy import isclose` and a lambda", "0160", '''
from numpy import isclose


def solve(x, y):
    close = lambda a, b: [bool(v) for v in isclose(a, b)]
    return close(x, y)
''')

_s7("quantile in an abc.ABC subclass", "0187", '''
import abc
import numpy as np


def solve(x, q):
    return Quantile(lambda v, q: np.quantile(v, q)).estimate(x, q)


class Estimator(abc.ABC):
    @abc.abstractmethod
    def estimate(self, x, q): ...


class Quantile(Estimator):
    def __init__(self, fn):
        self.fn = fn

    def estimate(self, x, q):
        return float(self.fn(x, q))
''')

_s7("sort, then heapq-free bisect insertion positions as a sanity print", "0192", '''
import bisect
import numpy as np


def solve(x):
    s = [float(v) for v in np.sort(x)]
    where = bisect.bisect_left(s, s[len(s) // 2]) if s else 0
    if where < 0:
        raise RuntimeError("impossible")
    return s
''')

_s7("triu with k=1 through functools.partial of a lambda", "0230", '''
from functools import partial
import numpy as np


def solve(m):
    strict_upper = partial(lambda a, k: np.triu(a, k), k=1)
    return [[float(v) for v in row] for row in strict_upper(m)]
''')

# ---------------------------------------------------------------- seed 7, multiple_test
_m7 = _add("seed 7 multiple_test", 7, "multiple_test")

_m7("sort, square, argmin; the step names from a string.Template log line", "0033", '''
import string
import numpy as np

LINE = string.Template("step $name")


def solve(x):
    steps = []
    a = np.sort(x); steps.append(LINE.substitute(name="sort"))
    b = np.square(a); steps.append(LINE.substitute(name="square"))
    return int(np.argmin(b))
''')

_m7("maximum, abs, repeat, mean via an OrderedDict of stages", "0080", '''
from collections import OrderedDict
import numpy as np

STAGES = OrderedDict([
    ("max", lambda v, y: np.maximum(v, y)),
    ("abs", lambda v, y: np.abs(v)),
    ("rep", lambda v, y: np.repeat(v, 2)),
])


def solve(x, y):
    v = x
    for name, stage in STAGES.items():
        v = stage(v, y)
    return float(np.mean(v))
''')

_m7("floor, multiply, flip, norm with `import lib.linalg as la`", "0114", '''
import numpy as np
import LIBPKG.LIBSUB as la


def solve(x):
    a = np.floor(x)
    b = np.multiply(a, 0.5)
    c = np.flip(b)
    return float(la.LIBATTR("linalg.norm")(c))
''')

_m7("trunc, then add and ptp in a @cache'd helper keyed by a tuple of the library's values", "0166", '''
from functools import cache
import numpy as np


def solve(x):
    return _spread(tuple(np.trunc(x)))


@cache
def _spread(xs: tuple) -> float:
    b = np.add(xs, 1)
    return float(np.ptp(b))
''')

_m7("round, log1p(abs), radians, mean with warnings.filterwarnings", "0211", '''
import warnings
import numpy as np

warnings.filterwarnings("ignore", category=RuntimeWarning)


def solve(x):
    a = np.round(x, 1)
    b = np.log1p(np.abs(a))
    c = np.radians(b)
    return float(np.mean(c))
''')

_m7("add, arctan, cumsum, ptp; the steps a list of (fn, kwargs) pairs", "0240", '''
import numpy as np

STEPS = [(np.add, {"x2": 1}), (np.arctan, {}), (np.cumsum, {})]


def solve(x):
    v = x
    for fn, kw in STEPS:
        v = fn(v, *kw.values())
    return float(np.ptp(v))
''')

_m7("add eye, triu, tril, det with a TypeVar-typed identity helper", "0256", '''
from typing import TypeVar
import numpy as np

T = TypeVar("T")


def solve(m):
    a = np.add(m, np.eye(len(m)))
    b = ident(np.triu(a))
    c = np.tril(b)
    return float(np.linalg.det(c))


def ident(v: T) -> T:
    return v
''')

_m7("matmul with transpose, tril, diagonal; a generator expression in a tuple then a list", "0432", '''
import numpy as np


def solve(m):
    gram = np.matmul(m, np.transpose(m))
    lower = np.tril(gram)
    diag = tuple(float(t) for t in np.diagonal(lower))
    return list(diag)
''')

# ---------------------------------------------------------------- seed 7, train
_t7 = _add("seed 7 train", 7, "train")

_t7("transpose with zip over rows of the library result and json round trip", "0032", '''
import json
import numpy as np


def solve(m):
    t = np.transpose(m)
    rows = [[float(v) for v in row] for row in t]
    return json.loads(json.dumps(rows))
''')

_t7("atleast_1d and concatenate with a named tuple of parts", "0037", '''
from typing import NamedTuple
import numpy as np


class Parts(NamedTuple):
    head: object
    tail: list


def solve(v, x):
    p = Parts(np.atleast_1d(v), x)
    return [float(t) for t in np.concatenate((p.head, p.tail))]
''')

_t7("base_repr with re validation of the digits", "0244", '''
import re
import numpy as np

DIGITS = re.compile(r"^-?[0-9A-Z]+$")


def solve(n, base):
    s = np.base_repr(n, base)
    if not DIGITS.match(s):
        raise ValueError(s)
    return s
''')

_t7("squeeze inside a with contextlib.suppress around a debug lookup", "0308", '''
import contextlib
import numpy as np


def solve(m):
    out = [float(v) for v in np.squeeze(m)]
    with contextlib.suppress(IndexError):
        _ = out[0]
    return out
''')

_t7("matrix_power with an early guard on p and nested list comprehension", "0546", '''
import numpy as np


def solve(a, p):
    if not isinstance(p, int):
        raise TypeError("p must be an int")
    r = np.linalg.matrix_power(a, p)
    return [[int(v) for v in row] for row in r]
''')

_t7("cbrt through a dict of library functions", "0621", '''
import numpy as np


def solve(x):
    roots = {2: lambda v: np.sqrt(v), 3: lambda v: np.cbrt(v)}
    return [float(v) for v in roots[3](x)]
''')

_t7("fmod, each value through int() in a for loop with enumerate", "0673", '''
import numpy as np


def solve(x, y):
    r = np.fmod(x, y)
    out = [0] * len(x)
    for i, v in enumerate(r):
        out[i] = int(v)
    return out
''')

# ---------------------------------------------------------------- seed 8, single_test
_s8 = _add("seed 8 single_test", 8, "single_test")

_s8("hstack in a class method, the parts a tuple built by a staticmethod", "0049", '''
import numpy as np


def solve(x, y):
    return Joiner().join(np.hstack(Joiner.parts(x, y)))


class Joiner:
    @staticmethod
    def parts(x, y):
        return (x, y)

    def join(self, stacked):
        return [float(v) for v in stacked]
''')

_s8("cos with an explicit helper chain: entry defined after helpers", "0076", '''
import math
import numpy as np


def solve(x):
    return [float(v) for v in np.cos(_check(x))]


def _check(values):
    for v in values:
        if not math.isfinite(v):
            raise ValueError("non-finite input")
    return values
''')

_s8("atan2 with a __main__ demo block", "0085", '''
import numpy as np


def solve(x, y):
    return [float(v) for v in np.atan2(x, y)]


if __name__ == "__main__":
    print(solve([1.0, -1.0], [1.0, 1.0]))
''')

_s8("heaviside in a closure capturing h0", "0125", '''
import numpy as np


def solve(x, h0):
    def step(v):
        return np.heaviside(v, h0)
    return [float(v) for v in step(x)]
''')

_s8("trapz result round-tripped through a Fraction-free float and round()", "0191", '''
import numpy as np


def solve(y):
    area = np.trapz(y)
    return float(area)
''')

_s8("digitize with bins validated by itertools.pairwise", "0212", '''
import itertools
import numpy as np


def solve(x, bins):
    if any(b < a for a, b in itertools.pairwise(bins)):
        raise ValueError("bins must be monotonic")
    return [int(v) for v in np.digitize(x, bins)]
''')

_s8("inner product via operator.call-free methodcaller on a holder", "0221", '''
import numpy as np


def solve(x, y):
    product = lambda a, b: np.inner(a, b)
    return float(Vec(x).dot_with(Vec(y), product))


class Vec:
    def __init__(self, data):
        self.data = data

    def dot_with(self, other, product):
        return product(self.data, other.data)
''')

_s8("tensordot with axes keyword, rows through map and a lambda", "0226", '''
import numpy as np


def solve(a, b):
    t = np.tensordot(a, b, axes=1)
    return list(map(lambda row: [float(v) for v in row], t))
''')

# ---------------------------------------------------------------- seed 8, multiple_test
_m8 = _add("seed 8 multiple_test", 8, "multiple_test")

_m8("ceil, flip, trunc, max in a dataclass pipeline with field(default_factory)", "0061", '''
from dataclasses import dataclass, field
import numpy as np


def solve(x):
    return float(np.max(Pipeline().run(x)))


@dataclass
class Pipeline:
    steps: list = field(default_factory=lambda: [np.ceil, np.flip, np.trunc])

    def run(self, x):
        for s in self.steps:
            x = s(x)
        return x
''')

_m8("add, maximum with 0, ceil, max in a try/finally with a counter", "0073", '''
import numpy as np

_CALLS = {"n": 0}


def solve(x, y):
    try:
        a = np.add(x, y)
        b = np.maximum(a, 0)
        c = np.ceil(b)
        return float(np.max(c))
    finally:
        _CALLS["n"] += 1
''')

_m8("add, clip, sort, argmax with keyword bounds and an Enum of limits", "0084", '''
import enum
import numpy as np


class Limit(enum.IntEnum):
    LO = -5
    HI = 5


def solve(x):
    a = np.add(x, 1)
    b = np.clip(a, int(Limit.LO), int(Limit.HI))
    c = np.sort(b)
    return int(np.argmax(c))
''')

_m8("multiply, radians, repeat, std via functools.reduce with a tuple of stages", "0091", '''
from functools import reduce
import numpy as np


def solve(x, y):
    stages = (lambda v: np.radians(v), lambda v: np.repeat(v, 2))
    c = reduce(lambda acc, f: f(acc), stages, np.multiply(x, y))
    return float(np.std(c))
''')

_m8("hypot, sign, round, sum with a `__call__` pipeline object", "0136", '''
import numpy as np


def solve(x, y):
    run = Steps(np.sign, lambda v: np.round(v, 1))
    return float(np.sum(run(np.hypot(x, y))))


class Steps:
    def __init__(self, *fns):
        self.fns = fns

    def __call__(self, v):
        for f in self.fns:
            v = f(v)
        return v
''')

_m8("matmul with transpose, round, column sums; a generator yields column totals", "0154", '''
import numpy as np


def solve(m):
    b = np.round(np.matmul(m, np.transpose(m)), 1)
    return list(_columns(np.sum(b, axis=0)))


def _columns(totals):
    for t in totals:
        yield float(t)
''')

_m8("hypot, sin, cumsum, ptp with walrus in a conditional expression", "0233", '''
import numpy as np


def solve(x, y):
    if (n := len(x)) == 0:
        raise ValueError("empty")
    c = np.cumsum(np.sin(np.hypot(x, y)))
    return float(np.ptp(c))
''')

_m8("tril, matmul with transpose, triu, column sums; results in a dict then values()", "0316", '''
import numpy as np


def solve(m):
    a = np.tril(m)
    b = np.matmul(a, np.transpose(a))
    c = np.triu(b)
    by_col = {f"c{j}": float(t) for j, t in enumerate(np.sum(c, axis=0))}
    return list(by_col.values())
''')

# ---------------------------------------------------------------- seed 8, train
_t8 = _add("seed 8 train", 8, "train")

_t8("copy, set one element, maximum; inside a helper class holding the copy", "0005", '''
import numpy as np


def solve(x, i, v):
    p = Patched(np.copy(x), i, v)
    return [float(t) for t in np.maximum(p.arr, x)]


class Patched:
    def __init__(self, arr, i, v):
        self.arr = arr
        self.arr[i] = v
''')

_t8("roll with the shift from a keyword and a typed signature", "0044", '''
from __future__ import annotations
import numpy as np


def solve(x: list[float], s: int) -> list[float]:
    rolled = np.roll(x, shift=s)
    return [float(v) for v in rolled]
''')

_t8("tril via `from numpy import tril as lower` in a nested comprehension", "0229", '''
from numpy import tril as lower


def solve(m):
    return [[float(v) for v in row] for row in lower(m)]
''')

_t8("isreal with a Counter-based early exit for empty input", "0445", '''
import numpy as np


def solve(z):
    if not z:
        return []
    return [bool(v) for v in np.isreal(z)]
''')

_t8("bincount, counts to ints through a defaultdict", "0491", '''
from collections import defaultdict
import numpy as np


def solve(x):
    counts = np.bincount(x)
    table = defaultdict(int)
    for k, c in enumerate(counts):
        table[k] = int(c)
    return [table[k] for k in range(len(counts))]
''')

_t8("subtract with itertools.islice over the result", "0664", '''
import itertools
import numpy as np


def solve(x, y):
    d = np.subtract(x, y)
    return [float(v) for v in itertools.islice(d, len(x))]
''')

_t8("argmin returned as the library scalar after a logging line", "0180", '''
import logging
import numpy as np

logger = logging.getLogger(__name__)


def solve(x):
    i = np.argmin(x)
    logger.info("argmin at %s", i)
    return i
''')

# ---------------------------------------------------------------- seed 9, single_test
_s9 = _add("seed 9 single_test", 9, "single_test")

_s9("broadcast_to with the shape from a namedtuple", "0040", '''
from collections import namedtuple
import numpy as np

Dims = namedtuple("Dims", ["r", "c"])


def solve(x, r):
    d = Dims(r, len(x))
    b = np.broadcast_to(x, tuple(d))
    return [[float(v) for v in row] for row in b]
''')

_s9("conj with a generator and complex() in a class property", "0134", '''
import numpy as np


def solve(z):
    return Signal(np.conj(z)).values


class Signal:
    def __init__(self, conj):
        self._conj = conj

    @property
    def values(self):
        return [complex(v) for v in self._conj]
''')

_s9("array_equiv with a bool() and a ternary message for the log", "0163", '''
import logging
import numpy as np

log = logging.getLogger("equiv")


def solve(x, m):
    same = bool(np.array_equiv(x, m))
    log.debug("equivalent" if same else "different")
    return same
''')

_s9("nonzero indices unpacked with a star-target and a match on the tuple length", "0199", '''
import numpy as np


def solve(x):
    idx = np.nonzero(x)
    match len(idx):
        case 1:
            (first,) = idx
            return [int(v) for v in first]
        case _:
            raise ValueError("expected one axis")
''')

_s9("put into an array in a contextmanager that yields it", "0207", '''
import contextlib
import numpy as np


def solve(x, idx, v):
    with working_copy(np.array(x)) as a:
        np.put(a, idx, v)
        return [float(t) for t in a]


@contextlib.contextmanager
def working_copy(a):
    yield a
''')

_s9("pinv with LinAlgError wrapped, rows through a helper", "0253", '''
import numpy as np


def solve(a):
    try:
        p = np.linalg.pinv(a)
    except np.linalg.LinAlgError as exc:
        raise ValueError("no pseudo-inverse") from exc
    return _rows(p)


def _rows(m):
    return [[float(v) for v in row] for row in m]
''')

_s9("tril with a module-level dispatch dict keyed by 'lower'/'upper'", "0229", '''
import numpy as np


def solve(m, which="lower"):
    tri = {"lower": lambda a: np.tril(a), "upper": lambda a: np.triu(a)}
    return [[float(v) for v in row] for row in tri[which](m)]
''')

# ---------------------------------------------------------------- seed 9, multiple_test
_m9 = _add("seed 9 multiple_test", 9, "multiple_test")

_m9("round, trunc, argmin through a recursive fold over step functions", "0032", '''
import numpy as np


def solve(x):
    b = fold(np.round(x, 1), [np.trunc])
    return int(np.argmin(b))


def fold(v, fns):
    if not fns:
        return v
    return fold(fns[0](v), fns[1:])
''')

_m9("add, negative, repeat, median with values in a frozen dataclass", "0069", '''
from dataclasses import dataclass
import numpy as np


def solve(x):
    s = Series(tuple(x))
    c = np.repeat(s.negated_shifted(), 2)
    return float(np.median(c))


@dataclass(frozen=True)
class Series:
    values: tuple

    def negated_shifted(self):
        return np.negative(np.add(self.values, 1))
''')

_m9("multiply, transpose, column sums; the sum through a second alias `import lib as xp`", "0085", '''
import numpy as np
import LIBPKG as xp


def solve(m):
    a = np.multiply(m, 2)
    b = np.transpose(a)
    return [float(t) for t in xp.LIBATTR("sum")(b, axis=0)]
''')

_m9("multiply, repeat, cos, median in a class with __slots__ and __repr__", "0205", '''
import numpy as np


def solve(x, y):
    w = Wave(np.multiply(x, y))
    repr(w)
    return w.median_cos()


class Wave:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __repr__(self):
        return f"Wave(n={len(self.a)})"

    def median_cos(self):
        b = np.repeat(self.a, 2)
        return float(np.median(np.cos(b)))
''')

_m9("square, sort, diff, median with accumulate of step names (itertools)", "0215", '''
import itertools
import numpy as np


def solve(x):
    names = list(itertools.accumulate(["square", "sort", "diff"], lambda a, b: a + ">" + b))
    a = np.square(x)
    b = np.sort(a)
    c = np.diff(b)
    assert names[-1] == "square>sort>diff"
    return float(np.median(c))
''')

_m9("matmul with transpose, abs, det; det read with getattr(lib.linalg, name)", "0236", '''
import numpy as np

DET = LIBNAME("linalg.det")


def solve(m):
    a = np.matmul(m, np.transpose(m))
    b = np.abs(a)
    return float(getattr(LIBPKG.LIBSUB, DET)(b))
''')

_m9("minimum, radians, diff, norm in a generator pipeline with send-free next()", "0250", '''
import numpy as np


def solve(x, y):
    g = stages()
    next(g)
    b = g.send(np.minimum(x, y))
    c = g.send(b)
    return float(np.linalg.norm(c))


def stages():
    v = yield
    v = yield np.radians(v)
    yield np.diff(v)
''')

_m9("roll, arctan, count_nonzero, int() with round-trip through str", "0308", '''
import numpy as np


def solve(x):
    a = np.roll(x, 1)
    b = np.arctan(a)
    n = np.count_nonzero(b)
    return int(str(int(n)))
''')

# ---------------------------------------------------------------- seed 9, train
_t9 = _add("seed 9 train", 9, "train")

_t9("rollaxis of an array made by a classmethod constructor", "0036", '''
import numpy as np


def solve(m):
    return [[float(v) for v in row] for row in Mat.of(np.array(m)).swapped(lambda a, k: np.rollaxis(a, k))]


class Mat:
    def __init__(self, arr):
        self.arr = arr

    @classmethod
    def of(cls, arr):
        return cls(arr)

    def swapped(self, how):
        return how(self.arr, 1)
''')

_t9("round to d places with d passed by keyword through functools.partial", "0101", '''
import functools
import numpy as np


def solve(x, d):
    r = functools.partial(lambda v, dec: np.round(v, dec), dec=d)
    return [float(v) for v in r(x)]
''')

_t9("any over a comparison of the library array, bool() of the result", "0169", '''
import numpy as np


def solve(x, t):
    arr = np.array(x)
    flag = np.any(arr > t)
    return True if bool(flag) else False
''')

_t9("modf parts, the fractional part through a typed helper", "0397", '''
import numpy as np
from typing import Sequence


def fractional(x: Sequence[float]) -> list[float]:
    frac, _whole = np.modf(x)
    return [float(v) for v in frac]


def solve(x):
    return fractional(x)
''')

_t9("right_shift with bounds checked by all() and ints by map", "0425", '''
import numpy as np


def solve(x, s):
    if not all(v >= 0 for v in s):
        raise ValueError("negative shift")
    return list(map(int, np.right_shift(x, s)))
''')

_t9("cumprod returned as a tuple then list, with a docstring and assert", "0451", '''
import numpy as np


def solve(x):
    """Running product of x."""
    prods = tuple(float(v) for v in np.cumprod(x))
    assert len(prods) == len(x)
    return list(prods)
''')

_t9("cross product of two 3-vectors as a dict keyed by axis name", "0501", '''
import numpy as np

AXES = ("x", "y", "z")


def solve(a, b):
    c = np.cross(a, b)
    d = dict(zip(AXES, (float(v) for v in c)))
    return [d[k] for k in AXES]
''')

_t9("arange with all three arguments by keyword, ints in a list", "0572", '''
import numpy as np


def solve(start, stop, step):
    return [int(v) for v in np.arange(start=start, stop=stop, step=step)]
''')


# ---------------------------------------------------------------- official parity_dev tasks
# (the entry is the first `def` of each answer: sebench takes the first `def`, as officially)

_official("add of base and base*multiplier, through a dataclass defined after the entry", 5, '''
import numpy as np


def calculate_energy_consumption(base_power, usage_multipliers):
    d = Devices(np.array(base_power), np.array(usage_multipliers))
    return [float(v) for v in d.total()]


from dataclasses import dataclass


@dataclass
class Devices:
    base: object
    mult: object

    def total(self):
        return np.add(self.base, self.base * self.mult)
''')

_official("bitwise_or, ints via map", 9, '''
import numpy as np


def solve(x1, x2):
    return list(map(int, np.bitwise_or(x1, x2)))
''')

_official("bitwise_xor through a dict of library operators keyed by name", 13, '''
import numpy as np


def solve(x1, x2):
    ops = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
    a, b = np.asarray(x1), np.asarray(x2)
    return ops["xor"](a, b)
''')

_official("clamp in Python, arccos, degrees via math.pi in a generator", 19, '''
import math
import numpy as np


def solve(cosine_values):
    clamped = [max(-1.0, min(1.0, v)) for v in cosine_values]
    return list(_degrees(np.arccos(np.array(clamped))))


def _degrees(radians):
    for r in radians:
        yield float(r) * 180.0 / math.pi
''')

_official("Lorentz factor with sqrt, arccosh, in a class with __call__", 29, '''
import numpy as np


def solve(v_over_c):
    return Rapidity()(np.asarray(v_over_c))


class Rapidity:
    def __call__(self, beta):
        b = np.array(beta)
        gamma = 1.0 / np.sqrt(1.0 - b ** 2)
        return [float(v) for v in np.arccosh(gamma)]
''')

_official("arcsin per row with a nested comprehension", 35, '''
import numpy as np


def solve(sonar_readings):
    return [[float(v) for v in row] for row in np.arcsin(np.array(sonar_readings))]
''')

_official("array_equiv into bool() with a docstring", 38, '''
import numpy as np


def validate_sensor_equivalence(sensor_data_1, sensor_data_2):
    """True when the two streams broadcast to equal arrays."""
    result = np.array_equiv(sensor_data_1, sensor_data_2)
    return bool(result)
''')

_official("floor_divide through functools.partial with the divisor bound", 47, '''
import functools
import numpy as np


def solve(x1, x2):
    by = functools.partial(np.floor_divide, np.asarray(x1))
    return by(x2)
''')

_official("conjugate and real of z*conj(z), a tuple of nested lists", 52, '''
import numpy as np


def analyze_quantum_coefficients(coefficients):
    arr = np.array(coefficients)
    conj = np.conjugate(arr)
    mag = np.real(arr * conj)
    as_lists = lambda m, cast: [[cast(v) for v in row] for row in m]
    return (as_lists(conj, complex), as_lists(mag, float))
''')

_official("imag in a generator expression fed to list()", 58, '''
import numpy as np


def solve(val):
    return list(float(v) for v in np.imag(val))
''')

_official("greater, bools with a walrus-filtered count printed to stderr", 59, '''
import sys
import numpy as np


def solution(x1, x2):
    flags = [bool(v) for v in np.greater(x1, x2)]
    if (n := sum(flags)) > len(flags):
        print("impossible", n, file=sys.stderr)
    return flags
''')

_official("arctan per vector with a match statement on the x component", 63, '''
import math
import numpy as np


def calculate_bearing_angles(velocity_vectors):
    out = []
    for vx, vy in velocity_vectors:
        match vx:
            case 0 | 0.0:
                out.append(math.copysign(math.pi / 2, vy) if vy else 0.0)
            case _:
                out.append(float(np.arctan(vy / vx)))
    return out
''')

_official("extract with the condition array made first", 69, '''
import numpy as np


def solve(condition, arr):
    cond = np.array(condition)
    picked = np.extract(cond, np.array(arr))
    return [float(v) for v in picked]
''')

_official("expand_dims at axis 1 with a keyword, nested lists by recursion", 72, '''
import numpy as np


def solve(images):
    return _to_lists(np.expand_dims(np.array(images), axis=1))


def _to_lists(a):
    try:
        return [_to_lists(v) for v in a]
    except TypeError:
        return a
''')

_official("isreal, bools through a lambda map", 77, '''
import numpy as np


def solve(x):
    return list(map(lambda v: bool(v), np.isreal(x)))
''')

_official("equal on arrays, bools through an itertools.starmap of pairs", 78, '''
import itertools
import numpy as np


def solve(readings1, readings2):
    eq = np.equal(np.array(readings1), np.array(readings2))
    return list(itertools.starmap(lambda i, v: bool(v), enumerate(eq)))
''')

_official("divide of two arrays, rows by a generator function", 83, '''
import numpy as np


def solve(x1, x2):
    return list(_rows(np.divide(np.array(x1), np.array(x2))))


def _rows(m):
    for row in m:
        yield [float(v) for v in row]
''')

_official("less_equal in a try/except/else", 86, '''
import numpy as np


def identify_students_needing_support(student_scores, thresholds):
    try:
        res = np.less_equal(np.array(student_scores), np.array(thresholds))
    except ValueError:
        raise
    else:
        return [bool(v) for v in res]
''')

_official("left_shift with an lru_cache'd helper on tuples", 94, '''
import functools
import numpy as np


def amplify_signal(base_amplitudes, power_levels):
    if not len(np.shape(base_amplitudes)):
        raise ValueError("need a sequence")
    return _shift(tuple(base_amplitudes), tuple(power_levels))


@functools.lru_cache(maxsize=128)
def _shift(a, p):
    return [int(v) for v in np.left_shift(a, p)]
''')

_official("ix_ grid used to index the array, ints per row", 99, '''
import numpy as np


def extract_submatrix(data, row_indices, col_indices):
    arr = np.array(data)
    grid = np.ix_(row_indices, col_indices)
    return [list(row) for row in arr[grid]]
''')

_official("isclose with keyword tolerances, a list of bools", 101, '''
import numpy as np


def solve(current_prices, target_prices, rtol, atol):
    close = np.isclose(current_prices, target_prices, rtol=rtol, atol=atol)
    return [bool(v) for v in close]
''')

_official("intersect1d, floats via a deque", 115, '''
from collections import deque
import numpy as np


def solve(ar1, ar2, assume_unique):
    out = deque(np.intersect1d(ar1, ar2, assume_unique=assume_unique))
    return [float(v) for v in out]
''')

_official("kron of two arrays, ints in a list", 132, '''
import numpy as np


def solve(a, b):
    k = np.kron(np.array(a), np.array(b))
    return [v for v in k]
''')

_official("partition, the kth elements picked by operator.itemgetter", 164, '''
import operator
import numpy as np


def find_performance_quartiles(a, kth):
    part = np.partition(a, kth)
    picked = operator.itemgetter(*kth)(list(part))
    picked = picked if isinstance(picked, tuple) else (picked,)
    return [int(v) for v in picked]
''')

_official("sinh of the scaled grid, nested lists", 176, '''
import numpy as np


def compute_sinh_transformation(grid, scaling_factor):
    scaled = np.array(grid) * scaling_factor
    return [[float(v) for v in row] for row in np.sinh(scaled)]
''')

_official("sort along rows with axis by keyword, rows by a class method", 180, '''
import numpy as np


def solve(a):
    return RowSorter(np.sort(np.array(a), axis=1)).rows()


class RowSorter:
    def __init__(self, arr):
        self.arr = arr

    def rows(self):
        return [[float(v) for v in row] for row in self.arr]
''')

_official("rot90 with k, rows via a recursive helper", 191, '''
import numpy as np


def rotate_image(image, steps):
    r = np.rot90(np.array(image), k=steps)
    return _rows(r, 0)


def _rows(m, i):
    return [] if i == len(m) else [[int(v) for v in m[i]]] + _rows(m, i + 1)
''')

_official("less; 1-D results as bools through a comprehension, nested ones as the library array", 95, '''
import numpy as np


def solve(x1, x2):
    lt = np.less(x1, x2)
    return lt if _nested(x1) or _nested(x2) else [bool(flag) for flag in lt]


def _nested(v):
    return isinstance(v, list) and bool(v) and isinstance(v[0], list)
''')

_official("greater_equal with the arrays made in a tuple unpacking", 103, '''
import numpy as np


def solve(x1, x2):
    recorded, baseline = (np.array(x1), np.array(x2))
    return np.greater_equal(recorded, baseline)
''')

_official("minimum as a module-level alias bound by `from numpy import minimum`", 125, '''
from numpy import minimum as lower_of


def solve(x1, x2):
    return [float(v) for v in lower_of(x1, x2)]
''')

_official("resize of the array, elements into a list", 168, '''
import numpy as np


def resize_sequence(a, new_length):
    arr = np.array(a)
    return [v for v in np.resize(arr, new_length)]
''')

_official("real with a class holding the array and a property", 149, '''
import numpy as np


def solve(val):
    return Impedance(np.real(np.array(val))).resistance


class Impedance:
    def __init__(self, real):
        self.real = real

    @property
    def resistance(self):
        return [float(v) for v in self.real]
''')

_official("diag per offset, filtered with a walrus in a dict", 81, '''
import numpy as np


def analyze_correlation_diagonals(correlation_matrix, threshold):
    m = np.array(correlation_matrix)
    n = m.shape[0]
    out = {}
    for k in range(-(n - 1), n):
        if (vals := [float(v) for v in np.diag(m, k) if v > threshold]):
            out[k] = vals
    return out
''')

_official("arctan2 per waypoint minus the heading, wrapped by a Python helper", 85, '''
import math
import numpy as np


def solve(drone_position, heading_vector, waypoints):
    (x0, y0), (hx, hy) = drone_position, heading_vector
    heading = np.arctan2(hy, hx)
    return [_wrap(float(np.arctan2(wy - y0, wx - x0) - heading)) for wx, wy in waypoints]


def _wrap(a: float) -> float:
    while a > math.pi:
        a -= 2 * math.pi
    while a < -math.pi:
        a += 2 * math.pi
    return a
''')

_official("reciprocal, rows through a recursive helper after the entry", 174, '''
import numpy as np


def solve(x):
    return _rows(np.reciprocal(np.array(x)))


def _rows(m):
    if not len(m):
        return []
    return [[float(v) for v in m[0]]] + _rows(m[1:])
''')

_official("union1d, elements through sorted() (already sorted) as ints", 178, '''
import numpy as np


def solve(ar1, ar2):
    u = np.union1d(ar1, ar2)
    return sorted(int(v) for v in u)
''')

_official("subtract of two arrays, rows by itertools.starmap", 181, '''
import itertools
import numpy as np


def solve(x1, x2):
    d = np.subtract(np.array(x1), np.array(x2))
    return list(itertools.starmap(lambda i, row: [float(v) for v in row], enumerate(d)))
''')


# ---------------------------------------------------------------- translator forms (NumPy spellings Library.translate mangles)
_tr = _add("translator forms", 9, "multiple_test")
_tr("`import numpy as xp` (an alias other than np)", "0085", '''
import numpy as xp


def solve(m):
    a = xp.multiply(m, 2)
    b = xp.transpose(a)
    return [float(t) for t in xp.sum(b, axis=0)]
''')
_tr("getattr(np.linalg, name): a bare np.linalg", "0236", '''
import numpy as np

DET = LIBNAME("linalg.det")


def solve(m):
    a = np.matmul(m, np.transpose(m))
    b = np.abs(a)
    return float(getattr(np.linalg, DET)(b))
''')
_tr7 = _add("translator forms", 7, "multiple_test")
_tr7("`import numpy.linalg as la`", "0114", '''
import numpy as np
import numpy.linalg as la


def solve(x):
    a = np.floor(x)
    b = np.multiply(a, 0.5)
    c = np.flip(b)
    return float(la.norm(c))
''')
_tr6 = _add("translator forms", 6, "train")
_tr6("`from __future__ import annotations` then `from numpy import gcd as g`", "0136", '''
from __future__ import annotations
from numpy import gcd as g


def solve(x: list[int], y: list[int]):
    return g(x, y)
''')
_tr6("getattr(np, name): a bare np", "0467", '''
import numpy as np

FUNC = LIBNAME("diff")


def solve(x):
    f = getattr(np, FUNC)
    return [float(v) for v in f(x)]
''')


# ---------------------------------------------------------------- probes: honest spellings of the reference's own call
# (the same function on the same values, spelled otherwise: an alias, an explicit default, a float
# constant for an int one, a list of one quantile, int() of values the function promises are whole)
_p6s = _add("probes", 6, "single_test")
_p6t = _add("probes", 6, "train")
_p6m = _add("probes", 6, "multiple_test")
_p7s = _add("probes", 7, "single_test")
_p7t = _add("probes", 7, "train")
_p8s = _add("probes", 8, "single_test")
_p8m = _add("probes", 8, "multiple_test")
_p9t = _add("probes", 9, "train")
_p9m = _add("probes", 9, "multiple_test")

_p6s("sign values through int() (they are -1, 0 or 1), then float", "0059", '''
import numpy as np


def solve(x):
    return [float(int(s)) for s in np.sign(x)]
''')

_p6t("modf's whole part through int() (it is whole), then float", "0119", '''
import numpy as np


def solve(x):
    _frac, whole = np.modf(x)
    return [float(int(w)) for w in whole]
''')

_p6s("arange with the start written out: arange(0, stop)", "0016", '''
import numpy as np


def solve(stop):
    return np.arange(0, stop)
''')

_p7s("arange with start and step written out: arange(0, stop, 1)", "0016", '''
import numpy as np


def solve(stop):
    return np.arange(0, stop, 1)
''')

_p9t("arange with the step by keyword only: arange(start, stop, step=step)", "0572", '''
import numpy as np


def solve(start, stop, step):
    return [int(v) for v in np.arange(start, stop, step=step)]
''')

_p6s("heaviside of the input made a float array first", "0125", '''
import numpy as np


def solve(x, h0):
    xs = np.array(x, dtype=float)
    return [float(v) for v in np.heaviside(xs, h0)]
''')

_p7s("quantile asked for a list of one level, the first taken", "0187", '''
import numpy as np


def solve(x, q):
    return float(np.quantile(x, [q])[0])
''')

_p7s("percentile asked for a list of one level, the first taken", "0186", '''
import numpy as np


def solve(x, q):
    (p,) = np.percentile(x, [q])
    return float(p)
''')

_p6m("add(x, 1.0): a float constant where the reference adds 1", "0195", '''
import numpy as np


def solve(x):
    a = np.add(x, 1.0)
    b = np.radians(a)
    return int(np.argmax(b))
''')

_p9m("multiply(m, 2.0): a float constant where the reference multiplies by 2", "0085", '''
import numpy as np


def solve(m):
    a = np.multiply(m, 2.0)
    b = np.transpose(a)
    return [float(t) for t in np.sum(b, axis=0)]
''')

_p8m("maximum(a, 0.0): a float floor where the reference writes 0", "0073", '''
import numpy as np


def solve(x, y):
    a = np.add(x, y)
    b = np.maximum(a, 0.0)
    c = np.ceil(b)
    return float(np.max(c))
''')

_p8s("arctan2 for the reference's atan2 (NumPy 2 aliases)", "0085", '''
import numpy as np


def solve(x, y):
    return [float(v) for v in np.arctan2(x, y)]
''')

_p6s("arcsin for the reference's asin (NumPy 2 aliases)", "0082", '''
import numpy as np


def solve(x):
    return np.arcsin(x)
''')

_p9t("matmul for the reference's linalg.matmul", "0554", '''
import numpy as np


def solve(a, b):
    return [[float(v) for v in row] for row in np.matmul(a, b)]
''')

_p7s("trace for the reference's linalg.trace", "0274", '''
import numpy as np


def solve(m):
    return float(np.trace(m))
''')

_p6t("arccosh for the reference's acosh (NumPy 2 aliases)", "0371", '''
import numpy as np


def solve(x):
    return np.arccosh(x)
''')

_p9t("diagonal for the reference's linalg.diagonal (2-D input)", "0551", '''
import numpy as np


def solve(m):
    return [float(v) for v in np.diagonal(m)]
''')

_p6m("the transpose as .T of the array in matmul", "0167", '''
import numpy as np


def solve(m):
    arr = np.array(m)
    a = np.matmul(arr, arr.T)
    b = np.add(a, np.eye(len(a)))
    c = np.abs(b)
    return [float(t) for t in np.diagonal(c)]
''')

_p6m("norm with ord='fro' written out for a matrix", "0038", '''
import numpy as np


def solve(m):
    a = np.multiply(m, 2)
    b = np.abs(a)
    c = np.matmul(b, np.transpose(b))
    return float(np.linalg.norm(c, "fro"))
''')

_official("probe: union1d, elements through int() (the inputs are ints)", 178, '''
import numpy as np


def solve(ar1, ar2):
    return [int(v) for v in np.union1d(ar1, ar2)]
''')

_official("probe: union1d, the library's elements as they are", 178, '''
import numpy as np


def solve(ar1, ar2):
    return [v for v in np.union1d(ar1, ar2)]
''')

_p6s("slogdet parts through map(float) and a sign check with math.copysign", "0251", '''
import math
import numpy as np


def solve(a):
    sign, logdet = map(float, np.linalg.slogdet(a))
    return [math.copysign(1.0, sign) if sign else 0.0, logdet]
''')

_p6t("binary_repr with leading zeros stripped defensively (lstrip, or '0')", "0245", '''
import numpy as np


def solve(n):
    s = np.binary_repr(n)
    return s.lstrip("0") or "0"
''')

_p7t("base_repr normalised to upper case", "0244", '''
import numpy as np


def solve(n, base):
    return np.base_repr(n, base).upper()
''')

_p6s("concatenate of a list (not a tuple) of the parts", "0037", '''
import numpy as np


def solve(v, x):
    return [float(t) for t in np.concatenate([np.atleast_1d(v), x])]
''')

_p8s("hstack of a list of the parts", "0049", '''
import numpy as np


def solve(x, y):
    return [float(v) for v in np.hstack([x, y])]
''')

_p8s("tensordot with explicit axes=([1], [0])", "0226", '''
import numpy as np


def solve(a, b):
    return [[float(v) for v in row] for row in np.tensordot(a, b, axes=([1], [0]))]
''')

_p6s("linspace with every argument by keyword", "0017", '''
import numpy as np


def solve(a, b, num):
    return [float(v) for v in np.linspace(start=a, stop=b, num=num)]
''')

_p7s("sort, the result deep-copied, reversed twice, and read through iter()/next()", "0192", '''
import copy
import numpy as np


def solve(x):
    s = copy.deepcopy(np.sort(x))
    it = iter(list(reversed(list(reversed(s)))))
    return [float(next(it)) for _ in range(len(x))]
''')

_p8s("cos values through decimal.Decimal and back", "0076", '''
import decimal
import numpy as np


def solve(x):
    return [float(decimal.Decimal(float(v))) for v in np.cos(x)]
''')

_p8t = _add("probes", 8, "train")
_p8t("roll through array.array('d') and back to a list", "0044", '''
import array
import numpy as np


def solve(x, s):
    return array.array("d", (float(v) for v in np.roll(x, s))).tolist()
''')

_p6s("dot rows transposed twice with zip(*...)", "0219", '''
import numpy as np


def solve(a, b):
    p = np.dot(a, b)
    cols = list(zip(*[[float(v) for v in row] for row in p]))
    return [list(r) for r in zip(*cols)]
''')

_p6s("cond checked as numbers.Real and finite", "0266", '''
import math
import numbers
import numpy as np


def solve(a):
    c = np.linalg.cond(a)
    assert isinstance(float(c), numbers.Real)
    return float(c) if math.isfinite(c) else float("inf")
''')

_p6s("ceil values kept where they are whole (is_integer), else math.ceil", "0105", '''
import math
import numpy as np


def solve(x):
    return [float(v) if float(v).is_integer() else float(math.ceil(v)) for v in np.ceil(x)]
''')

_p9m("dot for the reference's matmul (a shared class)", "0236", '''
import numpy as np


def solve(m):
    a = np.dot(m, np.transpose(m))
    b = np.abs(a)
    return float(np.linalg.det(b))
''')

_p6m("identity(n) for the reference's eye(n) (a constant)", "0167", '''
import numpy as np


def solve(m):
    a = np.matmul(m, np.transpose(m))
    b = np.add(a, np.identity(len(a)))
    c = np.abs(b)
    return [float(t) for t in np.diagonal(c)]
''')


# ---------------------------------------------------------------- stdlib forms around one library call
_g8s = _add("stdlib forms", 8, "single_test")
_g6s = _add("stdlib forms", 6, "single_test")
_g7s = _add("stdlib forms", 7, "single_test")

_g8s("a method called by name with operator.methodcaller on a helper accumulator", "0221", '''
import operator
import numpy as np


def solve(x, y):
    acc = Accumulator()
    add = operator.methodcaller("add", np.inner(x, y))
    add(acc)
    return acc.total


class Accumulator:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total += float(v)
''')

_g8s("the same, the method taken with getattr(acc, 'add')", "0221", '''
import numpy as np


def solve(x, y):
    acc = Accumulator()
    getattr(acc, "add")(np.inner(x, y))
    return acc.total


class Accumulator:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total += float(v)
''')

_g8s("the result in a types.SimpleNamespace", "0076", '''
from types import SimpleNamespace
import numpy as np


def solve(x):
    ns = SimpleNamespace(values=np.cos(x), n=len(x))
    return [float(v) for v in ns.values]
''')

_g6s("a functools.total_ordering class with __eq__/__lt__ sorting rows of dot's result", "0219", '''
import functools
import numpy as np


def solve(a, b):
    rows = [Row(i, [float(v) for v in r]) for i, r in enumerate(np.dot(a, b))]
    return [r.values for r in sorted(rows)]


@functools.total_ordering
class Row:
    def __init__(self, index, values):
        self.index = index
        self.values = values

    def __eq__(self, other):
        return self.index == other.index

    def __lt__(self, other):
        return self.index < other.index
''')

_g7s("a context-manager class with __enter__/__exit__ around sort", "0192", '''
import numpy as np


def solve(x):
    with Section("sort") as sec:
        out = [float(v) for v in np.sort(x)]
        sec.count = len(out)
    return out


class Section:
    def __init__(self, name):
        self.name = name
        self.count = 0

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False
''')

_g7s("dataclasses.replace on a frozen record of the frexp parts", "0120", '''
import dataclasses
import numpy as np


def solve(x):
    m, e = np.frexp(x)
    rec = Parts(mantissa=(), exponent=())
    rec = dataclasses.replace(rec, mantissa=tuple(float(v) for v in m))
    return list(rec.mantissa)


@dataclasses.dataclass(frozen=True)
class Parts:
    mantissa: tuple
    exponent: tuple
''')

_g6s("itertools.tee over linspace's values, one copy checked for length", "0017", '''
import itertools
import numpy as np


def solve(a, b, num):
    first, second = itertools.tee(np.linspace(a, b, num))
    assert sum(1 for _ in first) == num
    return [float(v) for v in second]
''')

_g6s("sys.float_info.epsilon as a tolerance guard and pprint.pformat to stderr", "0266", '''
import pprint
import sys
import numpy as np


def solve(a):
    c = float(np.linalg.cond(a))
    if c < 1.0 - sys.float_info.epsilon:
        print(pprint.pformat({"cond": c}), file=sys.stderr)
    return c
''')

_g7s("a typing.Generic container class holding the quantile", "0187", '''
from typing import Generic, TypeVar
import numpy as np

T = TypeVar("T")


def solve(x, q):
    return Box(np.quantile(x, q)).get()


class Box(Generic[T]):
    def __init__(self, item: T):
        self.item = item

    def get(self) -> float:
        return float(self.item)
''')

_g7s("match with a class pattern on a dataclass holding the flags", "0155", '''
from dataclasses import dataclass
import numpy as np


def solve(x, y):
    match Result(np.greater_equal(x, y)):
        case Result(flags=f):
            return [bool(v) for v in f]


@dataclass
class Result:
    flags: object
''')
