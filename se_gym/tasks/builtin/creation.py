"""Building arrays: constructors, filled arrays, ranges and grids."""
from __future__ import annotations

from .common import S, fscalar, fvec, iscalar

FL, L2 = "a list of floats", "a 2-D list of floats"
N = (iscalar(1, 12), "a length (a positive integer)")


def _i_below(name: str):
    return lambda a: 0 <= a["i"] < a[name]


SPECS = [
    S("array", "x:f, w:f", "a = np.array(x)\nreturn float(np.sum(a * w))",
      "returns the weighted total, the sum of x[i] * w[i] over all positions", "a float"),
    S("array", "x:f", "a = np.array(x)\nreturn [float(v) for v in np.cumsum(a * a)]",
      "returns the running totals of the squares of x", FL),
    S("asarray", "x:f", "a = np.asarray(x)\nreturn float(np.max(a) - np.min(a))",
      "returns the spread between the largest and the smallest value of x", "a float"),
    S("asanyarray", "x:f, s:x", "a = np.asanyarray(x)\nreturn [float(v) for v in np.abs(a - s)]",
      "returns how far every element of x lies from the reference value s", FL),
    S("ascontiguousarray", "m:m", "a = np.ascontiguousarray(m)\nreturn [float(v) for v in np.sum(a, axis=0)]",
      "returns the sum of every column of the matrix m", FL),
    S("asfortranarray", "m:m", "a = np.asfortranarray(m)\nreturn [float(v) for v in np.sum(a, axis=1)]",
      "returns the sum of every row of the matrix m", FL),
    S("copy", "x:f, i:k, v:x", "a = np.copy(x)\na[i] = v\nreturn [float(t) for t in np.maximum(a, x)]",
      "makes a copy of x, sets position i of the copy to v, and returns the element-wise maximum of the copy and the original",
      FL, valid=lambda a: a["i"] < len(a["x"])),
    # (an allocation is overwritten, so its values are no result's: the running totals make the result the library's)
    S("empty", "x:f", "out = np.empty(len(x))\nfor i in range(len(x)):\n    out[i] = x[i] * (i + 1)\nreturn [float(v) for v in np.cumsum(out)]",
      "returns the running totals of x[i] * (i + 1) (allocate an array for the products first, fill it, then accumulate it)", FL),
    S("empty_like", "x:f", "out = np.empty_like(x)\nout[:] = np.cumsum(x)\nreturn [float(v) for v in out]",
      "allocates an array shaped like x and fills it with the running totals of x", FL),
    S("zeros", "n:k, i:k", "a = np.zeros(n)\na[i] = 1.0\nreturn a",
      "returns a one-hot vector of length n with a 1 at position i and 0 elsewhere", "an array of floats",
      valid=_i_below("n"), n=N, i=(iscalar(0, 6), "a position (0-based)")),
    S("zeros_like", "x:f", "z = np.zeros_like(x)\nreturn [float(v) for v in np.maximum(x, z)]",
      "replaces every negative element of x by zero (compare against an all-zero array of the same shape)", FL),
    S("ones", "n:k, v:x", "return [float(t) for t in np.ones(n) * v]", "returns a list of n copies of the value v", FL, n=N),
    S("ones", "n:k", "return np.ones(n)", "returns an array of n ones", "an array of floats", n=N),
    S("ones_like", "x:i", "return [int(v) for v in np.ones_like(x)]", "returns a list of ones with the same length and type as x",
      "a list of integers"),
    S("full", "n:k, v:x", "return np.full(n, v)", "returns an array of length n where every entry is v", "an array of floats", n=N),
    S("full_like", "x:f, v:x", "return [float(t) for t in np.full_like(x, v)]",
      "returns a list shaped like x where every entry equals v", FL),
    S("eye", "n:k, d:k", "return [[float(v) for v in row] for row in np.eye(n, k=d)]",
      "returns the n x n matrix with ones on the diagonal shifted d places to the right and zeros elsewhere", L2,
      n=N, d=(iscalar(-1, 1), "a diagonal offset (-1, 0 or 1)")),
    S("identity", "n:k, s:x", "return [[float(v) for v in row] for row in np.identity(n) * s]",
      "returns the n x n identity matrix scaled by s", L2, n=N),
    S("arange", "start:k, stop:k, step:k", "return [int(v) for v in np.arange(start, stop, step)]",
      "returns the integers from start (included) to stop (excluded) in steps of step", "a list of integers",
      valid=lambda a: a["start"] < a["stop"], start=(iscalar(-10, 10), "an integer"), stop=(iscalar(0, 30), "an integer"),
      step=(iscalar(1, 4), "a positive integer")),
    S("arange", "stop:k", "return np.arange(stop)", "returns the integers 0, 1, ..., stop - 1", "an array of integers",
      stop=(iscalar(1, 9), "a positive integer")),
    S("linspace", "a:x, b:x, num:k", "return [float(v) for v in np.linspace(a, b, num)]",
      "returns num evenly spaced values from a to b, both ends included", FL, valid=lambda a: a["a"] != a["b"],
      num=(iscalar(2, 7), "a count")),
    S("logspace", "a:x, b:x, num:k", "return [float(v) for v in np.logspace(a, b, num)]",
      "returns num values spaced evenly on a log scale from 10**a to 10**b", FL,
      a=(fscalar(-2, 2), "a float exponent"), b=(fscalar(-2, 2), "a float exponent"), num=(iscalar(2, 6), "a count")),
    S("geomspace", "a:x, b:x, num:k", "return [float(v) for v in np.geomspace(a, b, num)]",
      "returns num values forming a geometric progression from a to b", FL,
      a=(fscalar(0.5, 50), "a positive float"), b=(fscalar(0.5, 50), "a positive float"), num=(iscalar(2, 6), "a count")),
    S("tri", "n:k, m:k, d:k", "return [[int(v) for v in row] for row in np.tri(n, m, d, dtype=int)]",
      "returns the n x m matrix with ones at and below the diagonal shifted by d, zeros elsewhere", "a 2-D list of integers",
      n=N, m=N, d=(iscalar(-1, 1), "a diagonal offset")),
    S("diag", "m:sq", "return [float(v) for v in np.diag(m)]", "returns the main diagonal of the square matrix m", FL),
    S("diag", "x:f", "return [[float(v) for v in row] for row in np.diag(x)]",
      "returns the square matrix that has x on its diagonal and zeros elsewhere", L2),
    S("diagflat", "x:i", "return [[int(v) for v in row] for row in np.diagflat(x)]",
      "returns a matrix with the values of x on the diagonal", "a 2-D list of integers"),
    S("meshgrid", "x:f, y:f", "gx, gy = np.meshgrid(x, y)\nreturn [[float(v) for v in row] for row in gx + gy]",
      "returns the grid of sums x[j] + y[i] (one row per element of y)", L2, y=(fvec(n="k"), "a list of floats")),
    S("ix_", "m:m, rows:k, cols:k", "sel = np.ix_(rows, cols)\nreturn [[float(v) for v in row] for row in np.array(m)[sel]]",
      "returns the sub-matrix of m made of the listed rows and columns", L2,
      valid=lambda a: max(a["rows"]) < len(a["m"]) and max(a["cols"]) < len(a["m"][0]),
      rows=(lambda rng, c: sorted(rng.sample(range(c["r"]), 2)), "a list of row indices"),
      cols=(lambda rng, c: sorted(rng.sample(range(c["c"]), 2)), "a list of column indices")),
]
