"""Honest forms, round 8 (issue 42): model-style honest answers on the seeds, suites and libraries
rounds 5-7 did not use (built-in seeds 1-5, whose ``mint(SEED)`` renames every function, and the
``multiple_test`` and ``train`` suites) and on official single_test_dev tasks rounds 5-7 did not
answer.  Written with NumPy (``import numpy as np``) and translated to each task's library
(``Library.translate``), as a model that read the library's docs writes them: lists made early and
finished in Python after a library step, library scalars in Python arithmetic, f-strings, dict keys,
``sorted``, ``max(key=)``, ``round`` and ``math``; tuples, dicts and nested lists of library results;
helper classes holding library arrays; generators; library errors caught, wrapped or re-raised;
aliases of the reference's function and two-step forms.

* :data:`BUILTIN`: ``(group, name, seed, split, task number, code)``;
* :data:`OFFICIAL`: ``(name, parity_dev task index, code)`` (the data stays in ../shared/sebench).

benchmarks/honest_forms.py judges each under ``sebench`` and under ``strict`` (with the task's
reference, two secrets) and lists where they differ (docs/security.md, Honest forms, round 8).
"""
from __future__ import annotations

BUILTIN: list[tuple[str, str, int, str, str, str]] = []
OFFICIAL: list[tuple[str, int, str]] = []


def _add(group: str, seed: int, split: str):
    def add(name: str, num: str, code: str) -> None:
        BUILTIN.append((group, name, seed, split, num, code))
    return add


# -- seed 1, single_test: Python after one library step, scalars in Python's hands
_s1 = _add("seed 1 single_test", 1, "single_test")

_s1("column sums as a dict keyed by column, then a list", "0170", '''
import numpy as np


def solve(m):
    sums = np.sum(np.array(m, dtype=float), axis=0)
    by_col = {j: float(s) for j, s in enumerate(sums)}
    return [by_col[j] for j in sorted(by_col)]
''')

_s1("column sums through tolist-free conversion and zip", "0170", '''
import numpy as np
from typing import List


def solve(m: List[List[float]]) -> List[float]:
    """Sum of each column."""
    totals = np.sum(m, axis=0)
    names = [f"col{j}" for j in range(len(m[0]))]
    table = dict(zip(names, (float(t) for t in totals)))
    return list(table.values())
''')

_s1("weighted average with validation and a library scalar in an f-string", "0182", '''
import numpy as np


def solve(x, w):
    if len(x) != len(w):
        raise ValueError(f"lengths differ: {len(x)} != {len(w)}")
    avg = np.average(x, weights=w)
    msg = f"weighted average = {avg:.4f}"
    assert msg.startswith("weighted")
    return float(avg)
''')

_s1("weighted average wrapped in try/except ZeroDivisionError re-raised as ValueError", "0182", '''
import numpy as np


def solve(x, w):
    try:
        result = np.average(np.asarray(x, dtype=float), weights=np.asarray(w, dtype=float))
    except ZeroDivisionError as exc:
        raise ValueError("weights sum to zero") from exc
    return round(float(result), 12)
''')

_s1("range with amax and amin instead of ptp", "0178", '''
import numpy as np


def solve(x):
    arr = np.asarray(x)
    return float(np.amax(arr) - np.amin(arr))
''')

_s1("range with ptp, the scalar through math.fsum and abs", "0178", '''
import math
import numpy as np


def solve(x):
    spread = np.ptp(x)
    return math.fsum([abs(float(spread))])
''')

_s1("percentile in a helper class holding the array", "0186", '''
import numpy as np


class Sample:
    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    def percentile(self, q):
        return float(np.percentile(self.values, q))


def solve(x, q):
    return Sample(x).percentile(q)
''')

_s1("percentile through a dataclass with a property", "0186", '''
from dataclasses import dataclass, field
import numpy as np


@dataclass
class Stats:
    data: list
    arr: object = field(init=False, repr=False)

    def __post_init__(self):
        self.arr = np.array(self.data)

    @property
    def size(self) -> int:
        return len(self.data)

    def pct(self, q: float) -> float:
        return float(np.percentile(self.arr, q))


def solve(x, q):
    s = Stats(list(x))
    assert s.size == len(x)
    return s.pct(q)
''')

_s1("searchsorted results as a generator of ints", "0198", '''
import numpy as np


def _positions(a, v):
    idx = np.searchsorted(a, v)
    for i in idx:
        yield int(i)


def solve(a, v):
    return list(_positions(a, v))
''')

_s1("searchsorted, then Python checks the sortedness of a (input validation)", "0198", '''
import numpy as np


def solve(a, v):
    if any(a[i] > a[i + 1] for i in range(len(a) - 1)):
        raise ValueError("a must be sorted")
    return [int(p) for p in np.searchsorted(np.array(a), np.array(v), side="left")]
''')

_s1("gcd with map over the library result", "0136", '''
import numpy as np


def solve(x, y):
    return list(map(int, np.gcd(np.array(x), np.array(y))))
''')

_s1("gcd with a type check and a ValueError for non-integers", "0136", '''
import numpy as np
from typing import List


def solve(x: List[int], y: List[int]) -> List[int]:
    for v in list(x) + list(y):
        if not isinstance(v, int):
            raise TypeError(f"expected int, got {type(v).__name__}")
    g = np.gcd(x, y)
    return [int(v) for v in g]
''')

_s1("divmod returning a tuple unpacked into nested lists", "0118", '''
import numpy as np


def solve(x, y):
    result = np.divmod(np.array(x), np.array(y))
    quotients, remainders = result
    return [list(map(int, quotients)), list(map(int, remainders))]
''')

_s1("divmod parts in a dict, then returned in order", "0118", '''
import numpy as np


def solve(x, y):
    q, r = np.divmod(x, y)
    parts = {"q": [int(v) for v in q], "r": [int(v) for v in r]}
    return [parts["q"], parts["r"]]
''')

_s1("frexp with the exponent unused and a comprehension over zip", "0120", '''
import numpy as np


def solve(x):
    m, e = np.frexp(np.asarray(x, dtype=float))
    return [float(mv) for mv, ev in zip(m, e)]
''')

_s1("round with around (the alias)", "0101", '''
import numpy as np


def solve(x, d):
    return [float(v) for v in np.around(np.array(x), decimals=d)]
''')

_s1("round, then Python's round of each library scalar to the same places", "0101", '''
import numpy as np


def solve(x, d):
    r = np.round(x, d)
    return [round(float(v), int(d)) for v in r]
''')

_s1("split into pieces, sums in Python after the library split", "0052", '''
import numpy as np


def solve(x, parts):
    pieces = np.split(np.array(x), parts)
    return [float(np.sum(p)) for p in pieces]
''')

_s1("split, each piece to a list, the sum with the library", "0052", '''
import numpy as np


def solve(x, parts):
    out = []
    for piece in np.split(np.asarray(x, dtype=float), parts):
        values = [float(v) for v in piece]
        out.append(float(np.sum(values)))
    return out
''')

_s1("meshgrid grid, the sum written as a nested comprehension over both grids", "0023", '''
import numpy as np


def solve(x, y):
    gx, gy = np.meshgrid(x, y)
    return [[float(gx[i][j] + gy[i][j]) for j in range(len(x))] for i in range(len(y))]
''')

_s1("shape unpacked, the count in Python", "0025", '''
import numpy as np


def solve(m):
    shape = np.shape(np.array(m))
    rows, cols = shape
    print(f"matrix is {rows}x{cols}")
    return int(rows) * int(cols)
''')

_s1("shape through the array's .shape attribute", "0025", '''
import numpy as np


def solve(m):
    arr = np.array(m)
    r, c = arr.shape
    return r * c
''')

_s1("size with a guard for an empty matrix", "0026", '''
import numpy as np


def solve(m):
    if not m:
        return 0
    return int(np.size(np.asarray(m)))
''')

# -- seed 2, single_test
_s2 = _add("seed 2 single_test", 2, "single_test")

_s2("gradient, values rounded in Python for a printout", "0190", '''
import numpy as np


def solve(x):
    g = np.gradient(np.array(x, dtype=float))
    print("slopes:", ", ".join(f"{v:+.2f}" for v in g))
    return [float(v) for v in g]
''')

_s2("gradient yielded from a generator function", "0190", '''
import numpy as np
from typing import Iterator


def slopes(x) -> Iterator[float]:
    yield from (float(v) for v in np.gradient(x))


def solve(x):
    return list(slopes(x))
''')

_s2("nonzero positions, the tuple's first array", "0199", '''
import numpy as np


def solve(x):
    (idx,) = np.nonzero(np.array(x))
    return sorted(int(i) for i in idx)
''')

_s2("tile, then len() of the result checked in Python", "0045", '''
import numpy as np


def solve(x, t):
    tiled = np.tile(np.array(x, dtype=float), t)
    assert len(tiled) == len(x) * t
    return [float(v) for v in tiled]
''')

_s2("diff of a list, then int() of each rounded value kept as floats", "0189", '''
import numpy as np


def solve(x):
    d = np.diff(np.asarray(x, dtype=float))
    return [float(v) for v in d]
''')

# -- seed 2, multiple_test: pipelines with a Python tail or head
_m2 = _add("seed 2 multiple_test", 2, "multiple_test")

_m2("pipeline, std with math.sqrt of the library var", "0000", '''
import math
import numpy as np


def solve(x, y):
    a = np.subtract(x, y)
    b = np.cos(a)
    c = np.cumsum(b)
    return math.sqrt(float(np.var(c)))
''')

_m2("pipeline in one expression with intermediate names in a dict", "0000", '''
import numpy as np


def solve(x, y):
    steps = {}
    steps["diff"] = np.subtract(np.array(x), np.array(y))
    steps["cos"] = np.cos(steps["diff"])
    steps["cum"] = np.cumsum(steps["cos"])
    return float(np.std(steps["cum"]))
''')

_m2("count of non-zero in Python over sort's output", "0018", '''
import numpy as np


def solve(x):
    a = np.add(x, 1)
    b = np.diff(a)
    c = np.sort(b)
    return sum(1 for v in c if v != 0)
''')

_m2("floor, cumsum, round, median with int() of the floors", "0036", '''
import numpy as np


def solve(x):
    floors = np.floor(np.array(x))
    totals = np.cumsum(floors)
    rounded = np.round(totals, 1)
    return float(np.median(rounded))
''')

_m2("floor then Python round to one place of each running total", "0036", '''
import numpy as np


def solve(x):
    a = np.floor(x)
    b = np.cumsum(a)
    c = np.round(b, 1)
    vals = sorted(round(float(v), 1) for v in c)
    return float(np.median(vals))
''')

_m2("halve, unique, trunc; total with math.fsum", "0045", '''
import math
import numpy as np


def solve(x):
    halves = np.multiply(x, 0.5)
    distinct = np.unique(halves)
    truncated = np.trunc(distinct)
    return float(math.fsum(float(v) for v in truncated) if False else np.sum(truncated))
''')

_m2("trunc's values to int() in a generator, summed by the library", "0045", '''
import numpy as np


def solve(x):
    a = np.multiply(x, 0.5)
    b = np.unique(a)
    c = np.trunc(b)
    ints = [int(v) for v in c]
    return float(np.sum(ints))
''')

_m2("round, M @ M.T with dot and .T, trace", "0081", '''
import numpy as np


def solve(m):
    a = np.round(np.array(m, dtype=float), 1)
    b = np.matmul(a, np.transpose(a))
    t = np.trace(b)
    return float(t)
''')

_m2("tril, triu, det rounded to 6 places in Python", "0144", '''
import numpy as np


def solve(m):
    lower = np.tril(m)
    diag_only = np.triu(lower)
    det = np.linalg.det(diag_only)
    return float(det)
''')

_m2("tanh, radians, unique; count with len of a filtered list", "0186", '''
import numpy as np


def solve(x):
    a = np.tanh(x)
    b = np.radians(a)
    c = np.unique(b)
    return int(np.count_nonzero(c))
''')

_m2("floor, ceil, round, mean; statistics of library values", "0066", '''
import numpy as np


def solve(x):
    a = np.floor(x)
    b = np.ceil(a)
    c = np.round(b, 1)
    return float(np.mean(c))
''')

_m2("diff, flip, sqrt(abs), argmax with max(key=) over library values", "0005", '''
import numpy as np


def solve(x):
    a = np.diff(x)
    b = np.flip(a)
    c = np.sqrt(np.abs(b))
    return int(np.argmax(c))
''')

_m2("argmax in Python with max(range, key=) over library values", "0005", '''
import numpy as np


def solve(x):
    a = np.diff(x)
    b = np.flip(a)
    c = np.sqrt(np.abs(b))
    vals = [float(v) for v in c]
    return max(range(len(vals)), key=lambda i: (vals[i], -i))
''')

# -- seed 3, multiple_test and train
_m3 = _add("seed 3 multiple_test", 3, "multiple_test")

_m3("hypot, diff, add 1, a list of rounded-free floats", "0010", '''
import numpy as np


def solve(x, y):
    h = np.hypot(np.array(x), np.array(y))
    d = np.diff(h)
    return [float(v) for v in np.add(d, 1)]
''')

_m3("cos, cumsum, norm via a helper class", "0020", '''
import numpy as np


class Pipeline:
    def __init__(self, data):
        self.data = np.asarray(data, dtype=float)

    def run(self):
        self.data = np.cos(self.data)
        self.data = np.cumsum(self.data)
        return self

    def norm(self):
        return float(np.linalg.norm(self.data))


def solve(x):
    return Pipeline(x).run().norm()
''')

_m3("subtract, arctan, cumsum, mean; steps as a list of callables", "0030", '''
import numpy as np


def solve(x, y):
    value = np.subtract(x, y)
    for step in (np.arctan, np.cumsum):
        value = step(value)
    return float(np.mean(value))
''')

_t3 = _add("seed 3 train", 3, "train")

_t3("row means, a list of (row, mean) pairs sorted back by row", "0181", '''
import numpy as np


def solve(m):
    means = np.mean(np.array(m), axis=1)
    pairs = sorted(enumerate(means), key=lambda p: p[0])
    return [float(mu) for _, mu in pairs]
''')

_t3("row means one row at a time", "0181", '''
import numpy as np


def solve(m):
    return [float(np.mean(row)) for row in m]
''')

_t3("trapz with dx as keyword, a try/except TypeError fallback", "0191", '''
import numpy as np


def solve(y, dx):
    try:
        area = np.trapz(y, dx=dx)
    except TypeError as err:
        raise ValueError(f"bad input: {err}") from None
    return float(area)
''')

_t3("pad with zeros, explicit constant_values", "0053", '''
import numpy as np


def solve(x, w):
    return [float(v) for v in np.pad(np.array(x, dtype=float), (w, w), mode="constant", constant_values=0)]
''')

_t3("weighted total with dot instead of sum of products", "0000", '''
import numpy as np


def solve(x, w):
    return float(np.dot(np.array(x), np.array(w)))
''')

_t3("weighted total: product in the library, sum with the library per element list", "0000", '''
import numpy as np


def solve(x, w):
    prods = np.multiply(x, w)
    return float(np.sum(prods))
''')

_t3("corrcoef matrix unpacked by rows", "0234", '''
import numpy as np


def solve(x, y):
    (a, b), (c, d) = np.corrcoef(x, y)
    return float(b)
''')

_t3("lstsq, the solution only, with a shape check on the input", "0533", '''
import numpy as np


def solve(a, b):
    A = np.array(a, dtype=float)
    if A.shape[0] != len(b):
        raise ValueError("one b per row")
    sol = np.linalg.lstsq(A, np.array(b, dtype=float), rcond=None)[0]
    return [float(v) for v in sol]
''')

_t3("percentile, the result in a dict keyed by q", "0464", '''
import numpy as np


def solve(x, q):
    results = {q: np.percentile(x, q)}
    return float(results[q])
''')

# -- seeds 4 and 5 (other mints)
_s4 = _add("seed 4 single_test", 4, "single_test")

_s4("argmax returned as a Python int after a comparison", "0179", '''
import numpy as np


def solve(x):
    i = np.argmax(x)
    assert 0 <= i < len(x)
    return int(i)
''')

_s4("argsort, then the order used to index x (a check that it sorts)", "0193", '''
import numpy as np


def solve(x):
    order = np.argsort(np.array(x))
    ranked = [x[i] for i in order]
    assert ranked == sorted(ranked)
    return [int(i) for i in order]
''')

_s4("argsort as a list comprehension with enumerate", "0193", '''
import numpy as np


def solve(x):
    order = np.argsort(x, kind="stable")
    return [int(idx) for _, idx in enumerate(order)]
''')

_s4("median scalar in an f-string and returned", "0183", '''
import numpy as np


def solve(x):
    med = np.median(np.asarray(x))
    label = f"{med:.3f}"
    return float(med) if label else None
''')

_s4("median via percentile 50", "0183", '''
import numpy as np


def solve(x):
    return float(np.percentile(x, 50))
''')

_s5 = _add("seed 5 single_test", 5, "single_test")

_s5("sample std with ddof, a math.isfinite guard", "0184", '''
import math
import numpy as np


def solve(x):
    s = np.std(np.array(x, dtype=float), ddof=1)
    if not math.isfinite(s):
        raise ValueError("need at least two values")
    return float(s)
''')

_s5("sample std as sqrt of var(ddof=1)", "0184", '''
import numpy as np


def solve(x):
    return float(np.sqrt(np.var(x, ddof=1)))
''')

_s5("diff values zipped with their positions into a dict, returned in order", "0189", '''
import numpy as np


def solve(x):
    d = np.diff(x)
    table = {i: float(v) for i, v in enumerate(d)}
    return [table[i] for i in range(len(table))]
''')

_t5 = _add("seed 5 train", 5, "train")

_t5("diagflat of ints, nested lists by a double loop", "0300", '''
import numpy as np


def solve(x):
    m = np.diagflat(np.array(x))
    out = []
    for row in m:
        out.append([int(v) for v in row])
    return out
''')

_t4 = _add("seed 4 train", 4, "train")

_t4("sinc with a library array made by asarray", "0100", '''
import numpy as np


def solve(x):
    arr = np.asarray(x, dtype=np.float64)
    return [float(v) for v in np.sinc(arr)]
''')

_m5 = _add("seed 5 multiple_test", 5, "multiple_test")

_m5("log1p(abs), abs, count; count with sum of bools", "0007", '''
import numpy as np


def solve(x):
    a = np.log1p(np.abs(x))
    b = np.abs(a)
    return int(np.count_nonzero(b))
''')


# -- official single_test_dev tasks rounds 5-7 did not answer (parity_dev's cases and references)
def _official(name: str, idx: int, code: str) -> None:
    OFFICIAL.append((name, idx, code))


_official("ceil per period, int() of the library sum", 12, '''
import numpy as np
from typing import List


def calculate_vm_instances(workloads: List[List[float]]) -> List[int]:
    """VMs needed per period: every workload rounded up, then summed."""
    return [int(np.sum(np.ceil(period))) for period in workloads]
''')

_official("ceil, then int() of each value summed in Python", 12, '''
import numpy as np


def calculate_vm_instances(workloads):
    result = []
    for period in workloads:
        needed = np.ceil(np.array(period))
        result.append(sum(int(v) for v in needed))
    return result
''')

_official("around per station, nested comprehension with float()", 15, '''
import numpy as np


def solve(temperature_data, precision):
    return [[[float(v) for v in np.around(station, precision)] for station in region] for region in temperature_data]
''')

_official("round per station, then Python's round to the same precision", 15, '''
import numpy as np


def solve(temperature_data, precision):
    out = []
    for region in temperature_data:
        out.append([[round(float(v), precision) for v in np.round(np.array(s), precision)] for s in region])
    return out
''')

_official("bincount with weights, a list of floats", 16, '''
import numpy as np


def solve(customer_ids, purchase_amounts):
    totals = np.bincount(np.array(customer_ids), weights=np.array(purchase_amounts, dtype=float))
    return [float(t) for t in totals]
''')

_official("cumsum along rows and min of each row, returned as a tuple of lists", 48, '''
import numpy as np


def solve(cash_flows):
    arr = np.array(cash_flows)
    cum = np.cumsum(arr, axis=1)
    lows = np.min(cum, axis=1)
    return ([[int(v) for v in row] for row in cum], [int(v) for v in lows])
''')

_official("cumsum per row, min per row with min() of the library row", 48, '''
import numpy as np


def solve(cash_flows):
    running = [np.cumsum(row) for row in cash_flows]
    return ([[int(v) for v in r] for r in running], [int(np.min(r)) for r in running])
''')

_official("expm1 then round to 15 places, nested lists", 54, '''
import numpy as np


def calculate_growth_factors(rates):
    g = np.round(np.expm1(np.array(rates, dtype=float)), 15)
    return [[float(v) for v in row] for row in g]
''')

_official("dot of the matrix with the coefficients, total with sum()", 57, '''
import numpy as np


def solve(power_data, efficiency_coeffs):
    per_device = np.dot(np.array(power_data), np.array(efficiency_coeffs))
    return float(np.sum(per_device))
''')

_official("mod with a scalar divisor, a map(int) list", 102, '''
import numpy as np


def solve(x1, x2):
    return list(map(int, np.mod(x1, x2))) if isinstance(x1, list) and not isinstance(x1[0], list) else [[int(v) for v in row] for row in np.mod(x1, x2)]
''')

_official("logical_not and logical_or, bool() per element", 111, '''
import numpy as np


def monitor_servers(x1, x2):
    down = np.logical_not(np.array(x1))
    unhealthy = np.logical_not(np.array(x2))
    return [bool(v) for v in np.logical_or(down, unhealthy)]
''')

_official("max over the last two axes with a tuple axis", 127, '''
import numpy as np


def solve(data):
    return [float(v) for v in np.max(np.array(data), axis=(1, 2))]
''')

_official("max per block, one library max per 2-D block", 127, '''
import numpy as np


def solve(data):
    return [float(np.max(np.array(block))) for block in data]
''')

_official("nonzero of the grid, pairs by zip", 136, '''
import numpy as np


def solve(grid):
    rows, cols = np.nonzero(np.array(grid))
    return [[int(r), int(c)] for r, c in zip(rows, cols)]
''')

_official("mean with where= per line, the scalar converted", 138, '''
import numpy as np


def solve(measurements, quality_flags):
    return [float(np.mean(np.array(m), where=np.array(f))) for m, f in zip(measurements, quality_flags)]
''')

_official("power of 1 + rate, products in Python", 144, '''
import numpy as np


def calculate_compound_interest(principals, rates, years):
    growth = np.power(1 + np.array(rates), years)
    return [float(p) * float(g) for p, g in zip(principals, growth)]
''')

_official("matmul of stacks, triple-nested lists", 163, '''
import numpy as np


def solve(layer1_weights, layer2_weights):
    out = np.matmul(np.array(layer1_weights), np.array(layer2_weights))
    return [[[float(v) for v in row] for row in mat] for mat in out]
''')

_official("trace with axis1/axis2, ints", 167, '''
import numpy as np


def solve(a):
    return [int(t) for t in np.trace(np.array(a), axis1=1, axis2=2)]
''')

_official("trace of each matrix in a loop", 167, '''
import numpy as np


def solve(a):
    return [int(np.trace(np.array(m))) for m in a]
''')

_official("rint, float() of each value", 183, '''
import numpy as np


def round_stock_prices(prices):
    return [float(p) for p in np.rint(np.array(prices, dtype=float))]
''')

_official("rint, then int() in Python and back to float", 183, '''
import numpy as np


def round_stock_prices(prices):
    return [float(int(p)) for p in np.rint(prices)]
''')

_official("take along the last axis, nested lists of ints", 186, '''
import numpy as np


def solve(a, indices):
    t = np.take(np.array(a), np.array(indices), axis=2)
    return [[[int(v) for v in row] for row in block] for block in t]
''')

_official("trunc, floats", 195, '''
import numpy as np


def solve(x):
    return [float(v) for v in np.trunc(np.array(x))]
''')

_official("signbit, bools, a guard for the empty list", 207, '''
import numpy as np


def identify_negative_values(x):
    if not x:
        return []
    return [bool(b) for b in np.signbit(np.array(x, dtype=float))]
''')

_official("linalg.solve, a LinAlgError caught and re-raised as ValueError", 236, '''
import numpy as np


def solve_circuit_voltages(a, b):
    try:
        v = np.linalg.solve(np.array(a, dtype=float), np.array(b, dtype=float))
    except np.linalg.LinAlgError as exc:
        raise ValueError("singular conductance matrix") from exc
    return [float(x) for x in v]
''')


# -- more styles on seeds 1-3: library errors for validation, per-element calls, generators, stacks
_more = _add("seed 3 train, more styles", 3, "train")

_more("reshape with the library's ValueError turned into a clear message", "0027", '''
import numpy as np


def solve(x, r):
    try:
        m = np.reshape(np.array(x), (r, -1))
    except ValueError as err:
        raise ValueError(f"cannot make {r} rows of {len(x)} values") from err
    return [[float(v) for v in row] for row in m]
''')

_more("reshape with an explicit column count from len()", "0027", '''
import numpy as np


def solve(x, r):
    cols = len(x) // r
    return [[float(v) for v in row] for row in np.reshape(x, (r, cols))]
''')

_more("vstack, rows as tuples converted back to lists", "0050", '''
import numpy as np


def solve(x, y):
    stacked = np.vstack([x, y])
    return [list(map(float, row)) for row in stacked]
''')

_more("stack along axis 0 instead of vstack", "0050", '''
import numpy as np


def solve(x, y):
    return [[float(v) for v in row] for row in np.stack([np.array(x), np.array(y)])]
''')

_s1b = _add("seed 1 single_test, more styles", 1, "single_test")

_s1b("sqrt per element in a generator of library scalars", "0064", '''
import numpy as np


def _roots(values):
    for v in values:
        yield np.sqrt(v)


def solve(x):
    return [float(r) for r in _roots(x)]
''')

_s1b("sqrt with a ValueError for negative input checked first", "0064", '''
import numpy as np


def solve(x):
    if any(v < 0 for v in x):
        raise ValueError("square root of a negative value")
    return [float(v) for v in np.sqrt(np.asarray(x, dtype=float))]
''')

_s1b("abs with absolute (the alias) and map", "0056", '''
import numpy as np


def solve(x):
    return list(map(float, np.absolute(x)))
''')

_s1b("abs per element with the library on each scalar, in a dict of inputs", "0056", '''
import numpy as np


def solve(x):
    cache = {}
    for v in x:
        if v not in cache:
            cache[v] = float(np.abs(v))
    return [cache[v] for v in x]
''')

_s2b = _add("seed 2 single_test, more styles", 2, "single_test")

_s2b("cumsum returned as the library's array after a type check", "0172", '''
import numpy as np


def solve(x):
    out = np.cumsum(np.asarray(x, dtype=float))
    assert len(out) == len(x)
    return out
''')

_s3b = _add("seed 3 single_test, more styles", 3, "single_test")

_s3b("floor returned as ints turned back into floats", "0104", '''
import numpy as np


def solve(x):
    return np.array([float(int(v)) for v in np.floor(x)])
''')

_s3b("floor, the result checked to be whole numbers", "0104", '''
import math
import numpy as np


def solve(x):
    f = np.floor(np.array(x))
    assert all(float(v).is_integer() for v in f)
    return f
''')


# -- more official tasks: tuple results, linear algebra, per-element loops, Python rounding
_official("bitwise_and with a shape check that raises ValueError", 0, '''
import numpy as np


def solve(x1, x2):
    a, b = np.asarray(x1), np.asarray(x2)
    if len(a) != len(b):
        raise ValueError("inputs must have the same length")
    return [int(v) for v in np.bitwise_and(a, b)]
''')

_official("arctanh per sample, float() of each library scalar", 3, '''
import numpy as np


def solve(compressed_samples):
    return [[float(np.arctanh(s)) for s in channel] for channel in compressed_samples]
''')

_official("arctan2 on Python-computed components", 4, '''
import numpy as np


def calculate_rotation_angles(robot_positions, target_positions):
    dx = [t[0] - r[0] for r, t in zip(robot_positions, target_positions)]
    dy = [t[1] - r[1] for r, t in zip(robot_positions, target_positions)]
    return [float(a) for a in np.arctan2(dy, dx)]
''')

_official("acosh, a generator of floats", 21, '''
import numpy as np
from typing import Iterator, List


def _skews(ratios) -> Iterator[float]:
    for v in np.acosh(np.array(ratios, dtype=float)):
        yield float(v)


def calculate_skew_parameters(moneyness_ratios: List[float]) -> List[float]:
    return list(_skews(moneyness_ratios))
''')

_official("exp of the scaled temperatures, Python's round to 4 places", 41, '''
import numpy as np


def calculate_bacterial_growth_rates(temperatures, time_intervals):
    rates = 0.1 * np.exp(np.array(temperatures, dtype=float) / 10.0)
    return [round(float(r), 4) for r in rates]
''')

_official("log1p difference with 1 / r computed in Python", 114, '''
import numpy as np


def solve(ratios):
    inverse = [1.0 / r for r in ratios]
    return [float(a - b) for a, b in zip(np.log1p(ratios), np.log1p(inverse))]
''')

_official("polyval, ints kept as the library's values", 131, '''
import numpy as np


def solve(p, x):
    return [v for v in np.polyval(p, x)]
''')

_official("prod per line, 1 - p in Python", 165, '''
import numpy as np


def calculate_defect_probabilities(defect_rates):
    out = []
    for line in defect_rates:
        survive = np.prod(1 - np.array(line))
        out.append(1 - float(survive))
    return out
''')

_official("tanh per layer with map and list", 170, '''
import numpy as np


def solve(network_outputs):
    return [list(map(float, np.tanh(layer))) for layer in network_outputs]
''')

_official("sqrt of squared distances, 0.0 on the diagonal in Python", 182, '''
import math
import numpy as np


def solve(points):
    n = len(points)
    dist = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i != j:
                dx, dy = points[j][0] - points[i][0], points[j][1] - points[i][1]
                dist[i][j] = float(np.sqrt(dx * dx + dy * dy))
    return dist
''')

_official("eigvals, real parts, a LinAlgError re-raised", 211, '''
import numpy as np


def solve(a):
    try:
        vals = np.linalg.eigvals(np.array(a, dtype=float))
    except np.linalg.LinAlgError:
        raise
    return [float(v.real) for v in vals]
''')

_official("cholesky, rows as lists of floats", 213, '''
import numpy as np


def solve(a):
    L = np.linalg.cholesky(np.array(a, dtype=float))
    return [[float(v) for v in row] for row in L]
''')

_official("slogdet per matrix, a tuple of two lists", 249, '''
import numpy as np
from typing import List, Tuple


def analyze_portfolio_stability(matrices: List[List[List[float]]]) -> Tuple[List[float], List[float]]:
    results = [np.linalg.slogdet(np.array(m, dtype=float)) for m in matrices]
    return ([float(s) for s, _ in results], [float(l) for _, l in results])
''')


# -- library scalars in Python's hands (seeds 1 and 4)
_sc = _add("seed 1 single_test, scalars", 1, "single_test")

_sc("row maxima through a dict keyed by the row's index", "0174", '''
import numpy as np


def solve(m):
    best = {i: np.max(row) for i, row in enumerate(m)}
    return [float(best[i]) for i in range(len(m))]
''')

_sc("mean returned after a math.isnan guard and a division-free check", "0181", '''
import math
import numpy as np


def solve(x):
    mu = np.mean(np.array(x, dtype=float))
    if math.isnan(mu):
        raise ValueError("empty input")
    return mu
''')

_sc("variance with the scalar in an f-string log line and abs()", "0185", '''
import logging
import numpy as np

log = logging.getLogger(__name__)


def solve(x):
    v = np.var(x)
    log.debug(f"variance={v:.6f}")
    return abs(float(v))
''')

_sc("product of ints, the scalar used in range() for a self-check", "0171", '''
import numpy as np


def solve(x):
    p = np.prod(np.array(x))
    return int(p)
''')

_sc("count above t, the count compared and returned through max(0, n)", "0188", '''
import numpy as np


def solve(x, t):
    n = np.count_nonzero(np.asarray(x) > t)
    return max(0, int(n))
''')

_sc("any above t in an if statement", "0169", '''
import numpy as np


def solve(x, t):
    if np.any(np.array(x) > t):
        return True
    return False
''')

_sc("all flags, the library bool negated twice", "0168", '''
import numpy as np


def solve(a):
    return not (not np.all(np.array(a, dtype=bool)))
''')

_sc("array_equal in a conditional expression", "0162", '''
import numpy as np


def solve(x, y):
    same = np.array_equal(np.array(x), np.array(y))
    return True if same else False
''')

_sc4 = _add("seed 4 single_test, scalars", 4, "single_test")

_sc4("running products with the last one checked against the library prod", "0173", '''
import numpy as np


def solve(x):
    c = np.cumprod(np.array(x, dtype=float))
    return [float(v) for v in c]
''')

_sc4("argmin used to index x and returned as an int", "0180", '''
import numpy as np


def solve(x):
    i = int(np.argmin(x))
    smallest = x[i]
    assert smallest == min(x) or True
    return i
''')

_sc4("argmin through sorted() of (value, index) pairs of the library's order", "0180", '''
import numpy as np


def solve(x):
    idx = np.argmin(np.array(x))
    pairs = sorted([(float(x[int(idx)]), int(idx))])
    return pairs[0][1]
''')


# -- one library step, the rest in Python (the design's "part of the work")
_one = _add("seed 2 multiple_test, one library step", 2, "multiple_test")

_one("subtract with the library, cos, running totals and std in Python", "0000", '''
import math
import numpy as np


def solve(x, y):
    d = [float(v) for v in np.subtract(x, y)]
    total, running = 0.0, []
    for v in d:
        total += math.cos(v)
        running.append(total)
    mu = sum(running) / len(running)
    return math.sqrt(sum((r - mu) ** 2 for r in running) / len(running))
''')

_one("floor with the library, the rest (running totals, rounding, median) in Python", "0036", '''
import statistics
import numpy as np


def solve(x):
    floors = [float(v) for v in np.floor(x)]
    running, acc = [], 0.0
    for f in floors:
        acc += f
        running.append(round(acc, 1))
    return float(statistics.median(running))
''')

_one("tril with the library, triu and det by Python's diagonal product", "0144", '''
import numpy as np


def solve(m):
    lower = np.tril(m)
    det = 1.0
    for i in range(len(m)):
        det *= float(lower[i][i])
    return det
''')

_one("diff with the library, flip/sqrt/argmax in Python", "0005", '''
import math
import numpy as np


def solve(x):
    d = [float(v) for v in np.diff(x)][::-1]
    roots = [math.sqrt(abs(v)) for v in d]
    return roots.index(max(roots))
''')


# -- seed 5 train: functions whose results come in an order (sets, eigenvalues, singular values,
# coordinates) or are counts, relied on in Python
_t5b = _add("seed 5 train, ordered results", 5, "train")

_t5b("argwhere coordinates sorted as pairs", "0200", '''
import numpy as np


def solve(m, t):
    coords = np.argwhere(np.array(m) > t)
    return sorted([int(r), int(c)] for r, c in coords)
''')

_t5b("intersect1d, then sorted() for safety", "0216", '''
import numpy as np


def solve(a, b):
    common = np.intersect1d(np.array(a), np.array(b))
    return sorted(int(v) for v in common)
''')

_t5b("eigh eigenvalues sorted ascending in Python", "0259", '''
import numpy as np


def solve(a):
    w, _ = np.linalg.eigh(np.array(a, dtype=float))
    return sorted(float(v) for v in w)
''')

_t5b("svd singular values sorted largest first in Python", "0262", '''
import numpy as np


def solve(a):
    _, s, _ = np.linalg.svd(np.array(a, dtype=float))
    return sorted((float(v) for v in s), reverse=True)
''')

_t5b("histogram counts clamped at zero", "0214", '''
import numpy as np


def solve(x, b):
    counts, _edges = np.histogram(x, bins=b)
    return [max(0, int(c)) for c in counts]
''')

_t5b("bincount converted, with a sum check on the counts", "0213", '''
import numpy as np


def solve(x):
    counts = np.bincount(np.array(x))
    return [int(c) for c in counts]
''')

_t5b("polyfit slope and intercept rounded in Python", "0236", '''
import numpy as np


def solve(x, y):
    slope, intercept = np.polyfit(np.array(x, dtype=float), np.array(y, dtype=float), 1)
    return [round(float(slope), 6), round(float(intercept), 6)]
''')

_t5b("roots rounded and sorted (the prompt's order)", "0238", '''
import numpy as np


def solve(p):
    r = np.roots(p)
    return sorted(round(float(np.real(v)), 6) for v in r)
''')

_t5b("inverse rows through a helper generator", "0252", '''
import numpy as np


def _rows(m):
    for row in m:
        yield [float(v) for v in row]


def solve(a):
    return list(_rows(np.linalg.inv(np.array(a, dtype=float))))
''')

_t5b("matrix_power with p = 0 handled by the library too", "0268", '''
import numpy as np


def solve(a, p):
    result = np.linalg.matrix_power(np.array(a), int(p))
    return [[int(v) for v in row] for row in result]
''')

_t5b("interp, a list of floats rounded to 12 places", "0235", '''
import numpy as np


def solve(q, xp, fp):
    return [round(float(v), 12) for v in np.interp(q, xp, fp)]
''')

_t5b("convolve valid with the kernel reversed check", "0231", '''
import numpy as np


def solve(x, k):
    if len(k) > len(x):
        raise ValueError("kernel longer than the signal")
    return [float(v) for v in np.convolve(np.array(x), np.array(k), mode="valid")]
''')


# -- Python's math over values a non-negative library function returned (abs, sqrt, var, norm)
_nn = _add("seed 2 multiple_test, non-negative results", 2, "multiple_test")

_nn("ceil and abs with the library, math.sqrt of each |v|, diff and sum with the library", "0198", '''
import math
import numpy as np


def solve(x):
    a = np.abs(np.ceil(x))
    b = [math.sqrt(v) for v in a]
    return float(np.sum(np.diff(b)))
''')

_nn("abs with the library, math.sqrt, floor/ceil/min with the library", "0189", '''
import math
import numpy as np


def solve(x):
    roots = [math.sqrt(v) for v in np.abs(x)]
    return float(np.min(np.ceil(np.floor(roots))))
''')
