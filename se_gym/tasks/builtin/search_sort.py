"""Sorting, searching, selecting and counting."""
from __future__ import annotations

import random

from .common import S, ascending, distinct, indices, iscalar, ivec

FL, IL = "a list of floats", "a list of integers"
DX = (distinct(), "a list of distinct floats")


def _poly_from_roots(rng: random.Random, c: dict):
    roots = rng.sample(range(-6, 7), rng.randint(2, 3))
    coeffs = [1]
    for r in roots:  # multiply by (t - r)
        coeffs = [a - r * b for a, b in zip(coeffs + [0], [0] + coeffs)]
    return coeffs


SPECS = [
    S("sort", "x:f", "return [float(v) for v in np.sort(x)]", "returns the elements of x in ascending order", FL),
    S("sort", "x:f", "return np.sort(x)", "sorts x from smallest to largest", "an array of floats"),
    S("argsort", "x:f", "return [int(v) for v in np.argsort(x)]", "returns the positions of the elements of x in ascending order of value", IL, x=DX),
    S("argsort", "x:f", "return np.argsort(x)", "returns the indices that would sort x", "an array of integers", x=DX),
    S("partition", "x:f, k:k", "p = np.partition(x, k)\nreturn float(p[k])", "returns the k-th smallest element of x (k counted from 0)",
      "a float", valid=lambda a: a["k"] < len(a["x"]), x=DX, k=(iscalar(0, 6), "a position")),
    S("argpartition", "x:f, k:k", "p = np.argpartition(x, k)\nreturn int(p[k])", "returns the position in x of its k-th smallest element",
      "an integer", valid=lambda a: a["k"] < len(a["x"]), x=DX, k=(iscalar(0, 6), "a position")),
    S("lexsort", "a:i, b:i", "return [int(v) for v in np.lexsort((b, a))]",
      "returns the order of positions sorted by a, ties broken by b", IL, a=(ivec(0, 2), IL), b=(ivec(-9, 9), IL)),
    S("sort_complex", "z:c", "return [complex(v) for v in np.sort_complex(z)]",
      "sorts the complex numbers z by real part, then by imaginary part", "a list of complex numbers"),
    S("searchsorted", "a:i, v:i", "return [int(t) for t in np.searchsorted(a, v)]",
      "returns for every value of v the position where it would be inserted into the sorted list a to keep it sorted", IL,
      a=(ascending(), "a sorted list of integers")),
    S("nonzero", "x:i", "return [int(v) for v in np.nonzero(x)[0]]", "returns the positions of the non-zero elements of x", IL,
      x=(ivec(-1, 1), IL), valid=lambda a: any(a["x"])),
    S("argwhere", "m:mi, t:k", "return [[int(v) for v in row] for row in np.argwhere(np.array(m) > t)]",
      "returns the [row, column] coordinates of every entry of m greater than t", "a list of [row, column] pairs",
      t=(iscalar(-2, 5), "an integer threshold")),
    S("where", "x:f, t:x", "return [float(v) for v in np.where(np.array(x) > t, x, t)]",
      "replaces every element of x that is not above t by t", FL),
    S("where", "x:f", "return [int(v) for v in np.where(np.array(x) < 0)[0]]", "returns the positions of the negative elements of x", IL),
    S("extract", "x:f, t:x", "return [float(v) for v in np.extract(np.array(x) > t, x)]", "returns the elements of x that are above t", FL),
    S("select", "x:f", "a = np.array(x)\nreturn [float(v) for v in np.select([a < 0, a > 5], [a * 0, a * 2], a)]",
      "maps every element v of x to 0 when v < 0, to 2 * v when v > 5, and leaves it unchanged otherwise", FL),
    S("choose", "idx:i, a:f, b:f, c:f", "return [float(v) for v in np.choose(idx, [a, b, c])]",
      "builds a list whose element i is taken from a, b or c according to idx[i] (0, 1 or 2)", FL,
      idx=(ivec(0, 2), "a list of choices 0, 1 or 2")),
    S("compress", "keep:b, x:f", "return [float(v) for v in np.compress(keep, x)]", "returns the elements of x whose flag in keep is true", FL),
    S("take", "x:f, idx:i", "return [float(v) for v in np.take(x, idx)]", "returns the elements of x at the positions listed in idx", FL,
      idx=(lambda rng, c: [rng.randrange(c["n"]) for _ in range(c["k"])], "a list of positions")),
    S("put", "x:f, idx:i, v:x", "a = np.array(x)\nnp.put(a, idx, v)\nreturn [float(t) for t in a]",
      "overwrites the elements of x at the positions in idx with v and returns the result", FL, idx=(indices(2), "a list of positions")),
    S("putmask", "x:f", "a = np.array(x)\nnp.putmask(a, a < 0, 0.0)\nreturn [float(t) for t in a]",
      "sets every negative element of x to zero in place (using a mask) and returns the result", FL),
    S("place", "x:f, t:x", "a = np.array(x)\nnp.place(a, a > t, [t])\nreturn [float(v) for v in a]",
      "caps x in place: every element above t becomes t", FL),
    S("copyto", "x:f", "a = np.zeros(len(x))\nnp.copyto(a, x, where=np.array(x) > 0)\nreturn [float(v) for v in a]",
      "copies only the positive elements of x into an array of zeros of the same length", FL),
    S("piecewise", "x:f", "a = np.array(x)\nconds = np.array([a < 0, a >= 0])\nreturn [float(v) for v in np.piecewise(a, conds, [lambda t: t * 0.5, lambda t: t * 2])]",
      "halves every negative element of x and doubles every other one (a piecewise function)", FL),
    S("digitize", "x:f, bins:i", "return [int(v) for v in np.digitize(x, bins)]",
      "returns for every element of x the index of the bin it falls into, given increasing bin edges", IL,
      bins=(lambda rng, c: sorted(rng.sample(range(-8, 9), 3)), "a sorted list of bin edges")),
    S("bincount", "x:i", "return [int(v) for v in np.bincount(x)]", "counts how often every value 0, 1, ..., max(x) occurs in x", IL,
      x=(ivec(0, 6), "a list of non-negative integers")),
    S("bincount", "x:i", "return np.bincount(x)", "returns the number of occurrences of each value from 0 to max(x)", "an array of integers",
      x=(ivec(0, 5), "a list of non-negative integers")),
    S("histogram", "x:f, b:k", "counts, edges = np.histogram(x, bins=b)\nreturn [int(v) for v in counts]",
      "returns the counts of a histogram of x with b equal-width bins", IL, b=(iscalar(2, 4), "a number of bins")),
    S("unique", "x:i", "return [int(v) for v in np.unique(x)]", "returns the distinct values of x in ascending order", IL, x=(ivec(-5, 5), IL)),
    S("unique", "x:i", "return np.unique(x)", "lists the sorted distinct values of x", "an array of integers", x=(ivec(-5, 5), IL)),
    S("intersect1d", "a:i, b:i", "return [int(v) for v in np.intersect1d(a, b)]", "returns the sorted values present in both a and b", IL,
      a=(ivec(0, 9), IL), b=(ivec(0, 9), IL)),
    S("union1d", "a:i, b:i", "return [int(v) for v in np.union1d(a, b)]", "returns the sorted values present in a or b", IL,
      a=(ivec(0, 9), IL), b=(ivec(0, 9), IL)),
    S("unravel_index", "i:k, rows:k, cols:k", "r, c = np.unravel_index(i, (rows, cols))\nreturn [int(r), int(c)]",
      "converts the flat position i of a rows x cols grid (row-major) into its [row, column]", "a list of two integers",
      valid=lambda a: a["i"] < a["rows"] * a["cols"], i=(iscalar(0, 20), "a flat position"), rows=(iscalar(2, 5), "an integer"),
      cols=(iscalar(2, 5), "an integer")),
]
