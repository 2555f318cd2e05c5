"""Comparisons, logical operations and truth tests."""
from __future__ import annotations

import random

from .common import S, fvec, ivec, keep, near

BL = "a list of booleans"
SMALL = (ivec(-3, 3), "a list of small integers")
_CMP = {
    "equal": "x[i] equals y[i]", "not_equal": "x[i] differs from y[i]", "less": "x[i] is smaller than y[i]",
    "less_equal": "x[i] is at most y[i]", "greater": "x[i] is larger than y[i]", "greater_equal": "x[i] is at least y[i]",
}


def _bools(p: float):
    return lambda rng, c: [rng.random() < p for _ in range(c["n"])]


def _maybe_equal(name: str):
    def g(rng: random.Random, c: dict):
        base = list(c[name])
        if rng.random() < 0.5:
            base[rng.randrange(len(base))] += 1
        return base

    return g


def _maybe_tiled(rng: random.Random, c: dict):
    rows = [list(c["_x"]) for _ in range(c["r"])]
    if rng.random() < 0.5:
        rows[rng.randrange(len(rows))][0] += 1
    return rows


def _some_real(rng: random.Random, c: dict):
    return [complex(rng.randint(-5, 5), rng.choice((0, 0, 1, -2))) for _ in range(c["n"])]


SPECS = []
for key, what in _CMP.items():
    SPECS.append(S(key, "x:i, y:i", f"return [bool(v) for v in np.{key}(x, y)]", f"tells for every position i whether {what}", BL,
                   x=SMALL, y=SMALL))
    SPECS.append(S(key, "x:i, y:i", f"return np.{key}(x, y)", f"returns, position by position, whether {what}", "an array of booleans",
                   x=SMALL, y=SMALL))
for key, what in {"logical_and": "both a[i] and b[i] are true", "logical_or": "a[i] or b[i] is true",
                  "logical_xor": "exactly one of a[i] and b[i] is true"}.items():
    SPECS.append(S(key, "a:b, b:b", f"return [bool(v) for v in np.{key}(a, b)]", f"tells for every position whether {what}", BL))
SPECS += [
    S("logical_not", "a:b", "return [bool(v) for v in np.logical_not(a)]", "negates every boolean of a", BL),
    S("logical_not", "a:b", "return np.logical_not(a)", "returns the logical negation of every flag in a", "an array of booleans"),
    S("isclose", "x:f, y:f", "return [bool(v) for v in np.isclose(x, y)]",
      "tells for every position whether x[i] and y[i] are equal within the default tolerances", BL,
      x=(keep("_x", fvec()), "a list of floats"), y=(lambda rng, c: [v + rng.choice((0.0, 1e-9, 0.5)) for v in c["_x"]], "a list of floats")),
    S("allclose", "x:f, y:f", "return bool(np.allclose(x, y))", "decides whether x and y agree everywhere within the default tolerances",
      "a boolean", x=(keep("_x", fvec()), "a list of floats"), y=(near("_x"), "a list of floats")),
    S("array_equal", "x:i, y:i", "return bool(np.array_equal(x, y))", "decides whether x and y have the same length and the same elements",
      "a boolean", x=(keep("_x", ivec()), "a list of integers"), y=(_maybe_equal("_x"), "a list of integers")),
    S("array_equiv", "x:i, m:mi", "return bool(np.array_equiv(x, m))",
      "decides whether every row of the matrix m equals x (x broadcast against m)", "a boolean",
      x=(keep("_x", ivec()), "a list of integers"), m=(_maybe_tiled, "a 2-D list of integers")),
    S("isfinite", "x:f", "return [bool(v) for v in np.isfinite(np.exp(x))]", "tells for every element v of x whether exp(v) is a finite float",
      BL, warn=True, x=(fvec(-50, 1000, 0), "a list of floats (some large)")),
    S("isinf", "x:f", "return [bool(v) for v in np.isinf(np.exp(x))]", "tells for every element v of x whether exp(v) overflows to infinity",
      BL, warn=True, x=(fvec(-50, 1000, 0), "a list of floats (some large)")),
    S("isnan", "x:f", "return [bool(v) for v in np.isnan(np.sqrt(x))]", "tells for every element v of x whether sqrt(v) is not a number",
      BL, warn=True),
    S("isreal", "z:c", "return [bool(v) for v in np.isreal(z)]", "tells for every complex number of z whether its imaginary part is zero",
      BL, z=(_some_real, "a list of complex numbers")),
    S("all", "a:b", "return bool(np.all(a))", "decides whether every flag in a is true", "a boolean", a=(_bools(0.85), "a list of booleans")),
    S("any", "a:b", "return bool(np.any(a))", "decides whether at least one flag in a is true", "a boolean", a=(_bools(0.15), "a list of booleans")),
    S("all", "x:f, t:x", "return bool(np.all(np.array(x) > t))", "decides whether every element of x is above the threshold t", "a boolean"),
    S("any", "x:f, t:x", "return bool(np.any(np.array(x) > t))", "decides whether some element of x exceeds the threshold t", "a boolean",
      t=(lambda rng, c: round(rng.uniform(0, 12), 1), "a float")),
]
