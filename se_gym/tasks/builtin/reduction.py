"""Reductions and statistics: sums, extremes, averages, spreads, differences."""
from __future__ import annotations

from .common import S, distinct, fscalar, iscalar, ivec

FL = "a list of floats"
SPECS = []
for key, what in {
    "sum": "the total of all elements of x", "max": "the largest element of x", "min": "the smallest element of x",
    "amax": "the largest element of x", "amin": "the smallest element of x", "ptp": "the range (maximum minus minimum) of x",
    "mean": "the arithmetic mean of x", "median": "the median of x", "std": "the population standard deviation of x",
    "var": "the population variance of x",
}.items():
    SPECS.append(S(key, "x:f", f"return float(np.{key}(x))", f"returns {what}", "a float"))
    SPECS.append(S(key, "x:f", f"return np.{key}(x)", f"computes {what}", "a number"))
SPECS += [
    S("sum", "m:m", "return [float(v) for v in np.sum(m, axis=0)]", "returns the column sums of the matrix m", FL),
    S("mean", "m:m", "return [float(v) for v in np.mean(m, axis=1)]", "returns the mean of every row of the matrix m", FL),
    S("max", "m:m", "return [float(v) for v in np.max(m, axis=1)]", "returns the largest value in every row of m", FL),
    S("prod", "x:fs", "return float(np.prod(x))", "returns the product of all elements of x", "a float"),
    S("prod", "x:i", "return int(np.prod(x))", "multiplies all integers of x together", "an integer", x=(ivec(-5, 5), "a list of small integers")),
    S("cumsum", "x:f", "return [float(v) for v in np.cumsum(x)]", "returns the running totals of x", FL),
    S("cumsum", "x:f", "return np.cumsum(x)", "computes the cumulative sum of x", "an array of floats"),
    S("cumprod", "x:fs", "return [float(v) for v in np.cumprod(x)]", "returns the running products of x", FL),
    S("argmax", "x:f", "return int(np.argmax(x))", "returns the position of the largest element of x (the first one on ties)", "an integer"),
    S("argmax", "x:f", "return np.argmax(x)", "finds the index of the maximum of x", "an integer"),
    S("argmin", "x:f", "return int(np.argmin(x))", "returns the position of the smallest element of x (the first one on ties)", "an integer"),
    S("argmin", "x:f", "return np.argmin(x)", "finds the index of the minimum of x", "an integer"),
    S("average", "x:f, w:fp", "return float(np.average(x, weights=w))", "returns the average of x weighted by w", "a float"),
    S("average", "x:f", "return float(np.average(x))", "returns the plain average of x", "a float"),
    S("std", "x:f", "return float(np.std(x, ddof=1))", "returns the sample standard deviation of x (divide by n - 1)", "a float"),
    S("var", "x:f", "return float(np.var(x, ddof=1))", "returns the sample variance of x (divide by n - 1)", "a float"),
    S("percentile", "x:f, q:k", "return float(np.percentile(x, q))", "returns the q-th percentile of x (linear interpolation)", "a float",
      q=(iscalar(0, 100), "a percentage from 0 to 100")),
    S("quantile", "x:f, q:x", "return float(np.quantile(x, q))", "returns the q-quantile of x (linear interpolation)", "a float",
      q=(fscalar(0, 1, 2), "a float between 0 and 1")),
    S("count_nonzero", "x:i", "return int(np.count_nonzero(x))", "counts how many elements of x are not zero", "an integer",
      x=(ivec(-2, 2), "a list of integers")),
    S("count_nonzero", "x:f, t:x", "return int(np.count_nonzero(np.array(x) > t))", "counts the elements of x that exceed t", "an integer"),
    S("diff", "x:f", "return [float(v) for v in np.diff(x)]", "returns the differences between consecutive elements of x", FL),
    S("diff", "x:i", "return np.diff(x, n=2)", "returns the second-order differences of x", "an array of integers"),
    S("gradient", "x:f", "return [float(v) for v in np.gradient(x)]",
      "estimates the slope at every point of x with central differences (one-sided at the ends)", FL),
    S("trapz", "y:f", "return float(np.trapz(y))", "integrates the samples y with the trapezoidal rule (unit spacing)", "a float"),
    S("trapz", "y:f, dx:x", "return float(np.trapz(y, dx=dx))", "integrates the samples y spaced dx apart with the trapezoidal rule",
      "a float", dx=(fscalar(0.1, 2.0), "a positive spacing")),
    S("argmax", "x:f", "return int(np.argmax(x))", "returns the index of the largest value of x", "an integer", x=(distinct(), FL)),
]
