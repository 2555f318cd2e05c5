"""Products, matrix helpers, signal operations, statistics of pairs, polynomials."""
from __future__ import annotations

import random

from .common import S, fmat, fvec

FL, L2 = "a list of floats", "a 2-D list of floats"
R2 = "return [[float(v) for v in row] for row in {}]"
R1 = "return [float(v) for v in {}]"


def _roots_poly(rng: random.Random, c: dict):
    roots = rng.sample(range(-6, 7), rng.randint(2, 3))
    coeffs = [1]
    for r in roots:  # multiply the polynomial by (t - r)
        coeffs = [a - r * b for a, b in zip(coeffs + [0], [0] + coeffs)]
    return coeffs


def _phases(rng: random.Random, c: dict):
    out, v = [], round(rng.uniform(-3, 3), 2)
    for _ in range(c["n"] + 2):
        out.append(round(v, 2))
        v += rng.choice((1.0, 2.5, -2.0, 4.0, -4.5))
    return out


SPECS = [
    S("dot", "x:f, y:f", "return float(np.dot(x, y))", "returns the dot product of x and y", "a float"),
    S("dot", "x:f, y:f", "return np.dot(x, y)", "computes the scalar product of the vectors x and y", "a float"),
    S("dot", "a:m, b:m", R2.format("np.dot(a, b)"), "returns the matrix product of a and b", L2,
      b=(fmat(r="c", cols="k"), "a 2-D list of floats whose row count equals the column count of a")),
    S("vdot", "x:f, y:f", "return float(np.vdot(x, y))", "returns the flattened dot product of x and y", "a float"),
    S("vdot", "z:c, w:c", "return complex(np.vdot(z, w))", "returns the dot product of z and w, conjugating z first", "a complex number"),
    S("inner", "x:f, y:f", "return float(np.inner(x, y))", "returns the inner product of x and y", "a float"),
    S("outer", "x:f, y:f", R2.format("np.outer(x, y)"), "returns the outer product matrix with entries x[i] * y[j]", L2,
      y=(fvec(n="k"), FL)),
    S("cross", "a:v3, b:v3", R1.format("np.cross(a, b)"), "returns the cross product of the 3-D vectors a and b", FL),
    S("matmul", "a:m, b:m", R2.format("np.matmul(a, b)"), "multiplies the matrices a and b", L2,
      b=(fmat(r="c", cols="k"), "a 2-D list of floats whose row count equals the column count of a")),
    S("kron", "a:mi, b:mi", "return [[int(v) for v in row] for row in np.kron(a, b)]", "returns the Kronecker product of a and b",
      "a 2-D list of integers", sizes={"r": (1, 2), "c": (1, 2)}),
    S("tensordot", "a:m, b:m", R2.format("np.tensordot(a, b, axes=1)"),
      "contracts the last axis of a with the first axis of b (a tensor dot product over one axis)", L2,
      b=(fmat(r="c", cols="k"), "a 2-D list of floats whose row count equals the column count of a")),
    S("trace", "m:sq", "return float(np.trace(m))", "returns the sum of the main diagonal of m", "a float"),
    S("trace", "m:m", "return float(np.trace(m, offset=1))", "returns the sum of the diagonal just above the main one of m", "a float"),
    S("diagonal", "m:m", R1.format("np.diagonal(m)"), "returns the main diagonal of the (possibly non-square) matrix m", FL),
    S("tril", "m:sq", R2.format("np.tril(m)"), "zeros every entry of m above the main diagonal", L2),
    S("triu", "m:sq", R2.format("np.triu(m)"), "zeros every entry of m below the main diagonal", L2),
    S("triu", "m:m", R2.format("np.triu(m, 1)"), "keeps only the entries of m strictly above the diagonal", L2),
    S("convolve", "x:f, k:f", R1.format("np.convolve(x, k)"), "returns the full discrete convolution of x with the kernel k", FL,
      k=(fvec(-2, 2, 1, n="three"), "a kernel of three floats")),
    S("convolve", "x:f, k:f", R1.format("np.convolve(x, k, mode='valid')"), "convolves x with k and keeps only the fully overlapping part",
      FL, k=(fvec(0, 1, 2, n="three"), "a kernel of three floats")),
    S("correlate", "x:f, y:f", R1.format("np.correlate(x, y)"), "returns the valid cross-correlation of x with the shorter pattern y", FL,
      y=(fvec(-2, 2, 1, n="three"), "a pattern of three floats")),
    S("cov", "x:f, y:f", "c = np.cov(x, y)\nreturn float(c[0][1])", "returns the sample covariance of x and y", "a float"),
    S("corrcoef", "x:f, y:f", "c = np.corrcoef(x, y)\nreturn float(c[0][1])", "returns the Pearson correlation coefficient of x and y", "a float"),
    S("interp", "q:f, xp:i, fp:f", R1.format("np.interp(q, xp, fp)"),
      "linearly interpolates the points (xp[i], fp[i]) at every query value of q", FL,
      xp=(lambda rng, c: sorted(rng.sample(range(-10, 11), c["k"])), "a list of increasing x coordinates"),
      fp=(fvec(n="k"), "a list of y values, one per xp")),
    S("polyfit", "x:f, y:f", "c = np.polyfit(x, y, 1)\nreturn [round(float(v), 6) for v in c]",
      "fits a straight line to the points (x[i], y[i]) by least squares and returns [slope, intercept] rounded to 6 decimals",
      "a list of two floats", x=(lambda rng, c: sorted(rng.sample(range(-10, 11), c["n"])), "a list of distinct numbers")),
    S("polyval", "p:f, x:f", R1.format("np.polyval(p, x)"),
      "evaluates the polynomial with coefficients p (highest power first) at every point of x", FL,
      p=(fvec(-3, 3, 1, n="k"), "a list of coefficients")),
    S("roots", "p:i", "return sorted(round(float(v), 6) for v in np.roots(p))",
      "returns the roots of the polynomial with integer coefficients p (highest power first, all roots real) in ascending order, rounded to 6 decimals",
      "a list of floats", p=(_roots_poly, "a list of integer coefficients")),
    S("unwrap", "x:f", R1.format("np.unwrap(x)"), "removes jumps larger than pi from the phase angles x by adding multiples of 2*pi", FL,
      x=(_phases, "a list of phase angles in radians")),
    S("vectorize", "x:f", "f = np.vectorize(lambda v: v * v if v > 0 else 0.0)\nreturn [float(t) for t in f(x)]",
      "applies the rule 'square positive values, map the rest to 0' to every element of x through a vectorized function", FL),
]
