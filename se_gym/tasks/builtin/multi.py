"""Multi-function tasks: short pipelines that compose three or more catalogue functions.

A pipeline starts from the input (one vector, two vectors, or a square matrix), applies two or
three transformation steps, and ends with a summary.  The question describes every step in
words; the reference writes one NumPy call per step.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from .common import S, Spec, square


@dataclass(frozen=True)
class Step:
    code: str  # uses {v}, the previous value
    keys: tuple[str, ...]
    words: str


def _st(code: str, words: str, *keys: str) -> Step:
    return Step(code, keys, words)


VECTOR_STEPS = (
    _st("np.abs({v})", "take the absolute value of every element", "abs"),
    _st("np.square({v})", "square every element", "square"),
    _st("np.cumsum({v})", "replace the values by their running totals", "cumsum"),
    _st("np.sort({v})", "sort the values in ascending order", "sort"),
    _st("np.flip({v})", "reverse their order", "flip"),
    _st("np.clip({v}, -5, 5)", "clip every value into the interval [-5, 5]", "clip"),
    _st("np.round({v}, 1)", "round every value to one decimal place", "round"),
    _st("np.tanh({v})", "apply the hyperbolic tangent to every value", "tanh"),
    _st("np.sin({v})", "take the sine of every value", "sin"),
    _st("np.cos({v})", "take the cosine of every value", "cos"),
    _st("np.diff({v})", "take the differences between neighbouring values (one fewer value)", "diff"),
    _st("np.negative({v})", "negate every value", "negative"),
    _st("np.maximum({v}, 0)", "replace every negative value by 0", "maximum"),
    _st("np.floor({v})", "round every value down to an integer value", "floor"),
    _st("np.ceil({v})", "round every value up to an integer value", "ceil"),
    _st("np.cbrt({v})", "take the cube root of every value", "cbrt"),
    _st("np.arctan({v})", "take the inverse tangent of every value", "arctan"),
    _st("np.log1p(np.abs({v}))", "replace every value v by log(1 + |v|)", "log1p", "abs"),
    _st("np.sqrt(np.abs({v}))", "replace every value v by the square root of |v|", "sqrt", "abs"),
    _st("np.sign({v})", "replace every value by its sign (-1, 0 or 1)", "sign"),
    _st("np.unique({v})", "keep only the distinct values, sorted", "unique"),
    _st("np.roll({v}, 1)", "rotate the values one place to the right (the last becomes the first)", "roll"),
    _st("np.multiply({v}, 0.5)", "halve every value", "multiply"),
    _st("np.add({v}, 1)", "add 1 to every value", "add"),
    _st("np.trunc({v})", "truncate every value towards zero", "trunc"),
    _st("np.radians({v})", "convert every value from degrees to radians", "radians"),
    _st("np.repeat({v}, 2)", "repeat every value twice in place", "repeat"),
)

PAIR_STARTS = (
    _st("np.add(x, y)", "add x and y element by element", "add"),
    _st("np.subtract(x, y)", "subtract y from x element by element", "subtract"),
    _st("np.multiply(x, y)", "multiply x and y element by element", "multiply"),
    _st("np.maximum(x, y)", "take the element-wise maximum of x and y", "maximum"),
    _st("np.minimum(x, y)", "take the element-wise minimum of x and y", "minimum"),
    _st("np.hypot(x, y)", "compute sqrt(x[i]**2 + y[i]**2) for every position", "hypot"),
)

# (code, words, keys, output words)
VECTOR_ENDS = (
    ("float(np.sum({v}))", "return their sum", ("sum",), "a float"),
    ("float(np.mean({v}))", "return their mean", ("mean",), "a float"),
    ("float(np.max({v}))", "return the largest of them", ("max",), "a float"),
    ("float(np.min({v}))", "return the smallest of them", ("min",), "a float"),
    ("float(np.std({v}))", "return their population standard deviation", ("std",), "a float"),
    ("float(np.median({v}))", "return their median", ("median",), "a float"),
    ("float(np.ptp({v}))", "return their range (maximum minus minimum)", ("ptp",), "a float"),
    ("int(np.argmax({v}))", "return the position of the largest of them (the first on ties)", ("argmax",), "an integer"),
    ("int(np.argmin({v}))", "return the position of the smallest of them (the first on ties)", ("argmin",), "an integer"),
    ("int(np.count_nonzero({v}))", "return how many of them are not zero", ("count_nonzero",), "an integer"),
    ("float(np.linalg.norm({v}))", "return their Euclidean norm", ("linalg.norm",), "a float"),
    ("float(np.var({v}))", "return their population variance", ("var",), "a float"),
    ("[float(t) for t in {v}]", "return them as a list", (), "a list of floats"),
)

MATRIX_STEPS = (
    _st("np.transpose({v})", "transpose the matrix", "transpose"),
    _st("np.abs({v})", "take the absolute value of every entry", "abs"),
    _st("np.tril({v})", "zero every entry above the main diagonal", "tril"),
    _st("np.triu({v})", "zero every entry below the main diagonal", "triu"),
    _st("np.multiply({v}, 2)", "double every entry", "multiply"),
    _st("np.add({v}, np.eye(len({v})))", "add the identity matrix", "add", "eye"),
    _st("np.matmul({v}, np.transpose({v}))", "multiply the matrix by its own transpose (M @ M.T)", "matmul", "transpose"),
    _st("np.round({v}, 1)", "round every entry to one decimal place", "round"),
)

MATRIX_ENDS = (
    ("float(np.linalg.det({v}))", "return its determinant", ("linalg.det",), "a float"),
    ("float(np.trace({v}))", "return its trace (the sum of the diagonal)", ("trace",), "a float"),
    ("float(np.linalg.norm({v}))", "return its Frobenius norm", ("linalg.norm",), "a float"),
    ("float(np.sum({v}))", "return the sum of all its entries", ("sum",), "a float"),
    ("float(np.max({v}))", "return its largest entry", ("max",), "a float"),
    ("[float(t) for t in np.diagonal({v})]", "return its main diagonal as a list", ("diagonal",), "a list of floats"),
    ("[float(t) for t in np.sum({v}, axis=0)]", "return the list of its column sums", ("sum",), "a list of floats"),
)

_VARS = "abcdefgh"


def _distinct_keys(steps, end_keys) -> tuple[str, ...]:
    keys: list[str] = []
    for s in steps:
        keys += [k for k in s.keys if k not in keys]
    keys += [k for k in end_keys if k not in keys]
    return tuple(keys)


def _join(words: list[str]) -> str:
    return ", then ".join(words[:-1]) + ", and finally " + words[-1] if len(words) > 1 else words[0]


def pipeline_spec(rng: random.Random) -> Spec:
    """A random pipeline with at least three distinct functions."""
    while True:
        kind = rng.choice(("vector", "vector", "pair", "matrix"))
        if kind == "matrix":
            steps = rng.sample(MATRIX_STEPS, rng.randint(2, 3))
            end = rng.choice(MATRIX_ENDS)
            params, source, intro = "m:sq", "m", "Starting from the square matrix m"
        else:
            steps = rng.sample(VECTOR_STEPS, rng.randint(2, 3))
            if sum(s.code.startswith("np.diff") or s.code.startswith("np.unique") for s in steps) > 1:
                continue  # keep at least two values to summarise
            end = rng.choice(VECTOR_ENDS)
            params, source, intro = "x:f", "x", "Starting from the list x"
            if kind == "pair":
                steps = [rng.choice(PAIR_STARTS)] + steps[:2]
                params, source, intro = "x:f, y:f", None, "Given two equally long lists x and y"
        keys = _distinct_keys(steps, end[2])
        if len(keys) >= 3:
            break
    lines, prev = [], source
    for i, step in enumerate(steps):
        var = _VARS[i]
        lines.append(f"{var} = {step.code.format(v=prev)}")
        prev = var
    lines.append("return " + end[0].format(v=prev))
    words = [s.words for s in steps] + [end[1]]
    does = f"works as follows. {intro}, {_join(words)}"
    return S(keys, params, "\n".join(lines), does, end[3], m=(square(), "a square 2-D list of floats"))
