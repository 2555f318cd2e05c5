"""Shared machinery of the built-in task families: specs, random inputs, query text, execution.

A family module lists :class:`Spec` records.  A spec is one way to ask about one catalogue
function: its arguments (each drawn by a named generator), a NumPy body, and the words that
describe it.  Everything random comes from ``random.Random`` seeded with strings, which is
stable across Python versions and processes.
"""
from __future__ import annotations

import math
import random
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ...errors import SEGymError

Gen = Callable[[random.Random, dict], Any]

# -- random values (plain Python: int, float, bool, complex, nested lists) ------------------


def _f(rng: random.Random, lo: float = -10.0, hi: float = 10.0, nd: int = 1) -> float:
    return round(rng.uniform(lo, hi), nd) + 0.0  # + 0.0 turns -0.0 into 0.0


def fvec(lo=-10.0, hi=10.0, nd=1, n: str = "n") -> Gen:
    return lambda rng, c: [_f(rng, lo, hi, nd) for _ in range(c[n])]


def ivec(lo=-20, hi=20, n: str = "n") -> Gen:
    return lambda rng, c: [rng.randint(lo, hi) for _ in range(c[n])]


def fmat(lo=-9.0, hi=9.0, nd=1, r: str = "r", cols: str = "c") -> Gen:
    return lambda rng, c: [[_f(rng, lo, hi, nd) for _ in range(c[cols])] for _ in range(c[r])]


def imat(lo=-9, hi=9, r: str = "r", cols: str = "c") -> Gen:
    return lambda rng, c: [[rng.randint(lo, hi) for _ in range(c[cols])] for _ in range(c[r])]


def square(kind: str = "general") -> Gen:
    """A well-conditioned k x k matrix: general (diagonally dominant), sym or spd."""

    def gen(rng: random.Random, c: dict) -> list:
        k = c["k"]
        a = [[float(rng.randint(-4, 4)) for _ in range(k)] for _ in range(k)]
        if kind in ("sym", "spd"):
            a = [[a[i][j] + a[j][i] for j in range(k)] for i in range(k)]
        if kind in ("general", "spd"):
            for i in range(k):
                a[i][i] = float(sum(abs(v) for v in a[i]) + rng.randint(1, 5))
        return a

    return gen


def fscalar(lo=-5.0, hi=5.0, nd=1) -> Gen:
    return lambda rng, c: _f(rng, lo, hi, nd)


def iscalar(lo=1, hi=5) -> Gen:
    return lambda rng, c: rng.randint(lo, hi)


def bvec(n: str = "n") -> Gen:
    return lambda rng, c: [rng.random() < 0.5 for _ in range(c[n])]


def cvec(n: str = "n") -> Gen:
    return lambda rng, c: [complex(rng.randint(-6, 6), rng.randint(-6, 6)) for _ in range(c[n])]


def choice(*values: Any) -> Gen:
    return lambda rng, c: rng.choice(values)


def const(value: Any) -> Gen:
    return lambda rng, c: value


def index(lo: int = 0, off: int = 1, n: str = "n") -> Gen:
    """An int in [lo, n - off]."""
    return lambda rng, c: rng.randint(lo, c[n] - off)


def indices(count: int = 2, n: str = "n") -> Gen:
    return lambda rng, c: sorted(rng.sample(range(c[n]), min(count, c[n])))


def keep(name: str, gen: Gen) -> Gen:
    """Draw with ``gen`` and remember the value in the case context (for dependent arguments)."""

    def g(rng: random.Random, c: dict) -> Any:
        c[name] = gen(rng, c)
        return c[name]

    return g


def distinct(lo=-50, hi=50, scale=0.5, n: str = "n") -> Gen:
    """Distinct values (no ties, so orderings are unambiguous)."""
    return lambda rng, c: [v * scale for v in rng.sample(range(lo, hi), c[n])]


def ascending(lo=-20, hi=20, n: str = "n") -> Gen:
    return lambda rng, c: sorted(rng.sample(range(lo, hi), c[n]))


def near(name: str, p_same: float = 0.5) -> Gen:
    """A copy of the remembered list ``name``, either close to it or clearly apart."""

    def g(rng: random.Random, c: dict) -> Any:
        base = c[name]
        if rng.random() < p_same:
            return [round(v + 1e-9, 10) for v in base]
        return [round(v + rng.choice((0.0, 0.5, -1.0)), 10) for v in base]

    return g


GENERATORS: dict[str, tuple[Gen, str]] = {
    "f": (fvec(), "a list of floats"),
    "fp": (fvec(0.5, 20.0), "a list of positive floats"),
    "fu": (fvec(-0.95, 0.95, 2), "a list of floats between -1 and 1"),
    "f01": (fvec(0.05, 0.95, 2), "a list of floats between 0 and 1"),
    "fg1": (fvec(1.1, 9.0, 2), "a list of floats greater than 1"),
    "fs": (fvec(-3.0, 3.0, 2), "a list of small floats"),
    "i": (ivec(), "a list of integers"),
    "ip": (ivec(1, 60), "a list of positive integers"),
    "u8": (ivec(0, 255), "a list of non-negative integers"),
    "b": (bvec(), "a list of booleans"),
    "c": (cvec(), "a list of complex numbers"),
    "m": (fmat(), "a 2-D list of floats (a matrix)"),
    "mi": (imat(), "a 2-D list of integers (a matrix)"),
    "sq": (square(), "a square 2-D list of floats"),
    "sym": (square("sym"), "a symmetric square 2-D list of floats"),
    "spd": (square("spd"), "a symmetric positive-definite 2-D list of floats"),
    "x": (fscalar(), "a float"),
    "k": (iscalar(), "a small positive integer"),
    "v3": (fvec(n="three"), "a list of 3 floats"),
}


@dataclass(frozen=True)
class Arg:
    name: str
    gen: Gen
    desc: str


def args(spec: str, **custom: tuple[Gen, str]) -> tuple[Arg, ...]:
    """``"x:f, lo:x"`` -> Args; a name listed in ``custom`` takes its own (generator, words)."""
    out = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        name, _, kind = part.partition(":")
        gen, desc = custom[name] if name in custom else GENERATORS[kind]
        out.append(Arg(name, gen, desc))
    return tuple(out)


@dataclass(frozen=True)
class Spec:
    """One question about one or more catalogue functions.

    ``body`` is the NumPy function body (``np.`` names only; converts results with plain Python
    so its library translation runs under the library's array type).  ``valid`` may reject an
    input draw (the case is drawn again).
    """

    keys: tuple[str, ...]
    params: tuple[Arg, ...]
    body: str
    does: str  # "returns the absolute value of every element of x"
    out: str  # "a list of floats"
    valid: Callable[[dict], bool] | None = None
    sizes: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    name: str = "solve"
    warn: bool = False  # the reference may emit floating-point warnings (inf/nan on purpose)

    @property
    def style(self) -> str:
        """How the answer looks: ``call`` (return one call), ``list``, ``scalar`` or ``custom``."""
        lines = [ln.strip() for ln in self.body.strip().splitlines()]
        if len(lines) != 1:
            return "custom"
        line = lines[0]
        if re.fullmatch(r"return np\.[\w.]+\([^;]*\)", line) and line.count("np.") == 1:
            return "call"
        if re.fullmatch(r"return \[(float|int|bool|complex)\(v\) for v in np\.[\w.]+\(.*\)\]", line) and line.count("np.") == 1:
            return "list"
        if re.fullmatch(r"return (float|int|bool)\(np\.[\w.]+\(.*\)\)", line) and line.count("np.") == 1:
            return "scalar"
        return "custom"

    def signature(self) -> str:
        return f"def {self.name}({', '.join(a.name for a in self.params)}):"

    def reference(self) -> str:
        body = "\n".join("    " + ln if ln.strip() else "" for ln in self.body.strip("\n").splitlines())
        return f"import numpy as np\n\n{self.signature()}\n{body}\n"


def S(key: str | tuple[str, ...], params: str, body: str, does: str, out: str, *, valid=None, sizes=None, warn=False, **custom) -> Spec:
    """Shorthand used by the family tables."""
    keys = (key,) if isinstance(key, str) else tuple(key)
    return Spec(keys, args(params, **custom), body, does, out, valid, dict(sizes or {}), warn=warn)


# -- query text -------------------------------------------------------------------------------

# Settings a question is told in.  Train draws from the even entries, the test splits from the
# odd ones, so the two never share a story.
CONTEXTS: tuple[str, ...] = (
    "A weather station logs sensor values every hour.",
    "An online shop keeps track of daily order figures.",
    "A physics lab records measurements from repeated experiments.",
    "A fitness app stores numbers collected during workouts.",
    "A game studio tunes numeric parameters of its levels.",
    "A hydrology team monitors water levels along a river.",
    "A trading desk analyses price movements of several assets.",
    "An astronomy club catalogues brightness readings of stars.",
    "A factory quality team inspects dimensions of produced parts.",
    "A school analyses the marks of a class.",
    "A robotics group processes joint readings from a robot arm.",
    "An energy company studies the load on its power grid.",
    "A biology lab measures the growth of bacterial cultures.",
    "A music app processes samples of an audio signal.",
    "A logistics firm tracks the weights of shipped parcels.",
    "A city planner studies traffic counts at intersections.",
    "A hospital analyses readings from patient monitors.",
    "A farm records soil moisture at several plots.",
    "A chemistry course works with concentrations of solutions.",
    "A network team looks at latency figures of servers.",
    "A sports analyst studies scores from a season.",
    "An image-processing tool works on pixel intensities.",
    "A survey team compiles answers to numeric questions.",
    "A climate researcher studies yearly temperature anomalies.",
    "A drone pilot reviews altitude and speed readings.",
    "A bakery tracks quantities of ingredients used per batch.",
    "A seismology lab looks at ground-motion amplitudes.",
    "A finance student experiments with cash-flow figures.",
    "A satellite team processes orbital measurements.",
    "A warehouse system keeps counts of items on shelves.",
)

FRAMES: dict[str, tuple[str, ...]] = {
    "train": (
        "{ctx} Write a function that {does}.",
        "{ctx} Implement a routine that {does}.",
        "{ctx} Your task is to write code that {does}.",
        "{ctx} As part of the data pipeline, build a function that {does}.",
    ),
    "single_test": (
        "{ctx} Create a function which {does}.",
        "{ctx} Provide an implementation that {does}.",
        "{ctx} The analysts need a helper that {does}.",
        "{ctx} Complete the function so that it {does}.",
    ),
    "multiple_test": (
        "{ctx} Create a function which {does}.",
        "{ctx} Provide an implementation that {does}.",
        "{ctx} The analysts need a helper that {does}.",
        "{ctx} Complete the function so that it {does}.",
    ),
}


def compose_query(rng: random.Random, split: str, spec: Spec) -> str:
    pool = CONTEXTS[0::2] if split == "train" else CONTEXTS[1::2]
    frame = rng.choice(FRAMES.get(split, FRAMES["single_test"]))
    text = frame.format(ctx=rng.choice(pool), does=spec.does)
    inputs = "; ".join(f"{a.name} is {a.desc}" for a in spec.params)
    return f"{text}\n\nInput: {inputs}\nOutput: {spec.out}"


# -- running the NumPy reference ----------------------------------------------------------------


def format_input(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in values.items())


def parse_input(text: str) -> dict:
    return eval(f"dict({text})", {"__builtins__": {"dict": dict}})  # our own generated text only


class BadDraw(SEGymError):
    """An input draw the reference cannot handle cleanly (warnings, nan, inf): draw again."""


def compile_solution(code: str, entry: str, extra_globals: Mapping[str, Any] | None = None) -> Callable:
    namespace: dict[str, Any] = dict(extra_globals or {})
    exec(compile(code, "<task>", "exec"), namespace)
    return namespace[entry]


def numpy_compat() -> Any:
    """NumPy plus the SE-Bench names it has since removed (``trapz``), to run references."""
    import types

    import numpy

    mod = types.ModuleType("numpy")
    mod.__dict__.update(numpy.__dict__)
    if hasattr(numpy, "trapezoid"):  # trapz is deprecated (warns) or gone; same maths
        mod.trapz = numpy.trapezoid
    return mod


def compile_reference(code: str, entry: str) -> Callable:
    """The NumPy reference as a callable (``import numpy as np`` bound to :func:`numpy_compat`)."""
    code = re.sub(r"^import numpy as np$", "np = __np__", code, flags=re.M)
    return compile_solution(code, entry, {"__np__": numpy_compat()})


def run_case(fn: Callable, input_text: str, warn: bool = False) -> str:
    """Call ``fn`` on one test input and print the result the way the judge's harness does.

    Raises BadDraw when the call fails or (unless ``warn``) emits a floating-point warning.
    """
    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if warn else "error")
        with np.errstate(all="ignore" if warn else "raise", under="ignore"):
            try:
                result = fn(**parse_input(input_text))
            except Exception as exc:  # noqa: BLE001 - any failure makes the draw unusable
                raise BadDraw(f"{type(exc).__name__}: {exc}") from None
    text = str(result)
    if (not warn and re.search(r"\b(nan|inf)\b", text)) or "#" in text or not text.strip():
        raise BadDraw(f"unusable output {text[:40]!r}")
    if re.search(r"-0\.0*(?![0-9])", text):  # negative zero: an ambiguous expected output
        raise BadDraw(f"unusable output {text[:40]!r}")
    if len(text) > 2000:
        raise BadDraw("output too long")
    return text


def isclose(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
