"""Comparing printed results with expected ones.

Two checks live here:

* :func:`official_case_ok` reproduces the SE-Bench judge's normalisation of printed forms
  (FORMATS.md, step 6) rule for rule, quirks included, so that verdicts agree with the official
  ones: NumPy print forms (``[1. 2.5]``, ``array([...])``, ``ZWCArray([...])``, multi-line
  matrices), ``inf``/``nan``, single-element containers unwrapped, numbers equal within an
  absolute tolerance of 1e-2.  One deliberate difference: the official checker hands the cleaned
  text to ``eval``; here a small evaluator accepts only literals, ``float("inf")``-style calls and
  NumPy scalar reprs (``np.float64(3.5)``), so a printed result can never run code in the judge.
* :func:`structural_ok` (profile ``strict``) compares a canonical JSON value produced by the
  trusted harness with the value parsed from the expected printed form.
"""
from __future__ import annotations

import ast
import math
import re
import threading
import time
from typing import Any

from ..errors import SEGymError
from . import parsing

OFFICIAL_TOLERANCE = 1e-2
# strict structural check: |got - expected| <= ABS + REL * |expected|; the relative part absorbs
# NumPy's 8-significant-digit print of the expected outputs
STRUCT_ABS_TOL = 1e-6
STRUCT_REL_TOL = 1e-6

_MAX_STR_DEPTH = 40  # the official checker recurses on re-parsed strings until they stop changing


class _Unsafe(SEGymError):
    """The text is not a printed value we evaluate."""


# -- the judge's CPU budget for scoring one answer ----------------------------------------------
class ScoringBudgetExceeded(BaseException):
    """Reading one answer's printed results took more of the judge's CPU than its budget.

    A BaseException so that the official checker's ``except Exception`` fallbacks (which reproduce
    the official judge's) do not take it for a failed comparison."""


_budget = threading.local()  # .deadline: time.thread_time() past which scoring stops (None: no budget)


def set_scoring_deadline(deadline: float | None) -> float | None:
    """Set this thread's scoring deadline (a ``time.thread_time()`` value, or None); returns the
    previous one.  The judge sets it around each answer's scoring."""
    prev = getattr(_budget, "deadline", None)
    _budget.deadline = deadline
    # until this perf_counter() value the deadline cannot have passed: a thread's CPU time grows no
    # faster than the clock (check_budget reads its CPU time, a system call, only after it)
    _budget.sure = time.perf_counter() + (deadline - time.thread_time()) if deadline is not None else 0.0
    return prev


def check_budget() -> None:
    """Raise ScoringBudgetExceeded when this thread has passed its scoring deadline (the CPU time of
    this thread: other threads' work, and waiting, do not count)."""
    deadline = getattr(_budget, "deadline", None)
    if deadline is not None and time.perf_counter() >= _budget.sure and time.thread_time() > deadline:
        raise ScoringBudgetExceeded


# -- a safe stand-in for eval -------------------------------------------------------------------
_NP_SCALARS = {
    **{n: float for n in ("float64", "float32", "float16", "longdouble", "double", "single", "half")},
    **{n: int for n in ("int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "intp", "uintp", "longlong")},
    **{n: complex for n in ("complex128", "complex64", "clongdouble")},
    "bool_": bool, "bool": bool, "str_": str,
}
_NP_CONSTS = {"True_": True, "False_": False, "nan": math.nan, "inf": math.inf, "pi": math.pi, "e": math.e, "NaN": math.nan, "Inf": math.inf}
_MATH_CONSTS = {"inf": math.inf, "nan": math.nan, "pi": math.pi, "e": math.e, "tau": math.tau}


def _ev(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_ev(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_ev(e) for e in node.elts)
    if isinstance(node, ast.Set):
        try:
            return {_ev(e) for e in node.elts}
        except TypeError as exc:  # unhashable element
            raise _Unsafe(str(exc)) from None
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _Unsafe("dict unpacking")
        try:
            return {_ev(k): _ev(v) for k, v in zip(node.keys, node.values)}
        except TypeError as exc:
            raise _Unsafe(str(exc)) from None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _ev(node.operand)
        if type(v) not in (int, float, complex, bool):
            raise _Unsafe("unary operator on a non-number")
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        # complex numbers print as (1+2j); nothing else needs arithmetic.  Only "real +/- imaginary"
        # is read: "[-3.1 -3.1]" (NumPy's print of two numbers) must not become [-6.2]
        a, b = _ev(node.left), _ev(node.right)
        if type(a) not in (int, float, bool) or type(b) is not complex or b.real != 0:
            raise _Unsafe("arithmetic that is not a complex literal")
        return a + b if isinstance(node.op, ast.Add) else a - b
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner, attr = node.value.id, node.attr
        if owner in ("np", "numpy") and attr in _NP_CONSTS:
            return _NP_CONSTS[attr]
        if owner == "math" and attr in _MATH_CONSTS:
            return _MATH_CONSTS[attr]
        raise _Unsafe(f"name {owner}.{attr}")
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) <= 1:
        f = node.func
        arg = _ev(node.args[0]) if node.args else None
        if isinstance(f, ast.Name) and f.id in ("float", "int", "complex", "bool", "str"):
            conv = {"float": float, "int": int, "complex": complex, "bool": bool, "str": str}[f.id]
            if arg is not None and type(arg) not in (int, float, complex, bool, str):
                raise _Unsafe("conversion of a container")
            try:
                if isinstance(arg, str) and len(arg) > 100:
                    raise _Unsafe("long conversion argument")
                return conv() if arg is None else conv(arg)
            except (TypeError, ValueError) as exc:
                raise _Unsafe(str(exc)) from None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("np", "numpy") and f.attr in _NP_SCALARS:
            if type(arg) not in (int, float, complex, bool, str):
                raise _Unsafe("numpy scalar of a container")
            try:
                return _NP_SCALARS[f.attr](arg)
            except (TypeError, ValueError) as exc:
                raise _Unsafe(str(exc)) from None
    raise _Unsafe(type(node).__name__)


def safe_eval(text: str) -> Any:
    """Evaluate printed Python/NumPy values without executing anything (raises ValueError)."""
    try:
        tree = parsing.parse(text, mode="eval")
        return _ev(tree.body)
    except (SyntaxError, _Unsafe, RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise ValueError(f"not a printed value: {exc}") from None


# -- the official normalisation -----------------------------------------------------------------
# The official checker removes empty arrays with three regexes (OFFICIAL_EMPTY_ARRAY_REGEXES).  Run
# as written over a printed result (up to 200,000 characters, chosen by the answer) two of them
# backtrack quadratically: ``\w+Array\(`` tries every start inside a long word ("q" * 200_001 cost
# minutes of judge CPU), and ``shape=\([^)]*\)`` rescans the same text from every nested
# ``array([], shape=(`` before one ``)``.  _empty_arrays makes the same replacements in linear time
# (tests/test_judge_safety.py compares it with the regexes on random texts).
OFFICIAL_EMPTY_ARRAY_REGEXES = (
    r"array\(\s*\[\s*\],\s*dtype=[\w\']+\s*\)",
    r"array\(\s*\[\s*\],\s*shape=\([^)]*\),\s*dtype=[\w\']+\s*\)",
    r"\w+Array\(\s*\[\s*\]\s*\)",
)
# (linear as it is: each start's word run ends at the next "(", so no two starts share text)
_EMPTY_DTYPED = re.compile(OFFICIAL_EMPTY_ARRAY_REGEXES[0])
# the shaped form in two anchored pieces, the ")" between them found by _empty_shaped
_SHAPED_HEAD = re.compile(r"array\(\s*\[\s*\],\s*shape=\(")
_SHAPED_TAIL = re.compile(r"\),\s*dtype=[\w\']+\s*\)")
# a match of \w+Array( can only start where its word starts (a later start in the word matches iff
# the word's start does, and is tried after it): the lookbehind skips the other starts, each of
# which would otherwise scan to the word's end
_EMPTY_NAMED = re.compile(r"(?<!\w)\w+Array\(\s*\[\s*\]\s*\)")
# the innermost bracket of a NumPy print (numbers, signs, inf/nan, True/False, complex parts)
# (linear: the class has no "[", so the runs of two starts never overlap)
_BARE_ROW = re.compile(r"\[([0-9\s.eE+\-infaTrueFlsj()]+)\]")


def _empty_shaped(text: str) -> str:
    """``re.sub(OFFICIAL_EMPTY_ARRAY_REGEXES[1], "[]", text)`` in linear time.  A start matches iff
    the first ``)`` after its ``shape=(`` is followed by the dtype part; starts nested before one
    ``)`` share it, so each ``)`` is looked for, and its tail read, once."""
    if "shape=(" not in text:
        return text
    out: list[str] = []
    pos = 0  # where re.sub would look for the next match
    close, tails = -1, {}  # the last ")" found (for the starts before it) and each ")"'s tail match end
    for head in _SHAPED_HEAD.finditer(text):  # (heads never overlap: "array(" cannot start inside one)
        start, body = head.start(), head.end()
        if start < pos:
            continue
        if close < body:
            close = text.find(")", body)
            if close < 0:
                break  # no ")" after this start, nor after any later one
        end = tails.get(close)
        if end is None:
            m = _SHAPED_TAIL.match(text, close)
            end = tails[close] = m.end() if m else -1
        if end >= 0:
            out += (text[pos:start], "[]")
            pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _empty_arrays(text: str) -> str:
    """The official checker's three empty-array substitutions, in order, in linear time."""
    if "[" not in text:
        return text  # (each pattern needs one)
    text = _EMPTY_DTYPED.sub("[]", text)
    text = _empty_shaped(text)
    return _EMPTY_NAMED.sub("[]", text)


def _multiline(text: str) -> str:
    if "\n" not in text:
        return text
    rows = [r.strip() for r in re.split(r"\n+", text) if r.strip()]
    return " ".join(r if r.endswith(",") else r + "," for r in rows)


def _unwrap_rows(text: str) -> str:
    """Join the lines NumPy wrapped one row over (``"[0.1 0.2\n 0.3]"``: a line break inside
    brackets after neither ``]`` nor ``,``).  The official reading ends every line with a comma,
    which leaves such a row unreadable text, so that a list answer never equals it (nor an array
    answer a list printed on one line); the strict profile reads with this first."""
    if "\n" not in text:
        return text
    lines = text.split("\n")
    out, depth = [lines[0]], lines[0].count("[") - lines[0].count("]")
    for line in lines[1:]:
        prev = out[-1].rstrip()
        if depth > 0 and prev and prev[-1] not in "],":
            out[-1] = prev + " " + line.lstrip()
        else:
            out.append(line)
        depth += line.count("[") - line.count("]")
    return "\n".join(out)


def _numpy_rows(text: str) -> str:
    text = text.replace("array", " ")

    def commas(m: re.Match) -> str:
        parts = m.group(1).split()
        return "[" + ", ".join(parts) + "]" if parts else m.group(0)

    return _BARE_ROW.sub(commas, text)


def _array_names(text: str, array_type: str) -> str:
    return text.replace(array_type, " ")


def _after_colon(text: str) -> str:
    # the official checker keeps only what follows the first colon ("Label: value"); it also
    # cuts dicts, which then compare by their tail: reproduced on purpose
    return text[text.index(":") + 1 :].strip() if ":" in text else text


def _spaces(text: str) -> str:
    return re.sub(r"\s+", "", text).replace(",", ", ")


_MISSING = object()
_CACHE_TEXT = 2000  # longest text whose reading OfficialChecker remembers
_CACHE_ENTRIES = 4096


class OfficialChecker:
    """SE-Bench's comparison of one printed result with one expected printed form."""

    def __init__(self, array_type: str = "ZWCArray", tolerance: float = OFFICIAL_TOLERANCE, numpy_wraps: bool = False):
        """``numpy_wraps``: read a row NumPy wrapped over lines as one row (_unwrap_rows; the strict
        profile's reading, not the official one)."""
        self.array_type = array_type
        self.tolerance = tolerance
        self.numpy_wraps = numpy_wraps
        # text -> normalize(parse(text)): the same expected outputs (and the same wrong prints) come
        # back answer after answer, and reading one costs several ast.parse calls
        self._read: dict[str, Any] = {}

    def _normalized(self, text: str) -> Any:
        """``normalize(parse(text))``, remembered for short texts (both are pure functions of the
        text, and their results are only read)."""
        got = self._read.get(text, _MISSING)
        if got is _MISSING:
            got = self.normalize(self.parse(text))
            if len(text) <= _CACHE_TEXT:
                if len(self._read) >= _CACHE_ENTRIES:
                    self._read.clear()
                self._read[text] = got
        return got

    def parse(self, text: str) -> Any:
        # each step is linear in the text, but deep_equal re-parses strings up to _MAX_STR_DEPTH times
        # and "inf" grows by 9 characters a time: budget checks between the steps
        check_budget()
        if not text.strip():
            return None
        t = _empty_arrays(text.strip())
        t = _multiline(_unwrap_rows(t) if self.numpy_wraps else t)
        t = _numpy_rows(t)
        check_budget()
        t = _array_names(t, self.array_type)
        t = _spaces(_after_colon(t))
        t = t.replace("inf", 'float("inf")').replace("nan", 'float("nan")')
        check_budget()
        try:
            return safe_eval(t)
        except ValueError:
            return t

    def normalize(self, obj: Any) -> Any:
        if isinstance(obj, str):
            check_budget()
            try:
                t = _array_names(_numpy_rows(_multiline(_unwrap_rows(obj) if self.numpy_wraps else obj)), self.array_type)
                return self.normalize(ast.literal_eval(parsing.parse(t.lstrip(" \t"), mode="eval")))
            except Exception:  # noqa: BLE001 - anything unparsable stays text, as officially
                return obj
        if isinstance(obj, (list, tuple)):
            return [self.normalize(v) for v in obj]
        return obj

    def deep_equal(self, a: Any, b: Any, depth: int = 0) -> bool:
        while isinstance(a, (list, tuple)) and len(a) == 1:
            a = a[0]
        while isinstance(b, (list, tuple)) and len(b) == 1:
            b = b[0]
        if a is None or b is None:
            return a == b
        num = (int, float)
        if type(a) is not type(b):
            if not ((isinstance(a, num) and isinstance(b, num)) or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)))):
                return False
        if isinstance(a, num) and isinstance(b, num):
            if (a == math.inf and b == math.inf) or (a == -math.inf and b == -math.inf):
                return True
            if math.isnan(a) and math.isnan(b):
                return True
            return abs(float(a) - float(b)) <= self.tolerance
        if isinstance(a, str) and isinstance(b, str):
            try:
                if depth >= _MAX_STR_DEPTH:
                    raise RecursionError
                pa, pb = self.parse(a), self.parse(b)
                if pa != a or pb != b:
                    return self.deep_equal(pa, pb, depth + 1)
            except Exception:  # noqa: BLE001 - the official checker falls back to text equality
                pass
            return a == b
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            if len(a) != len(b):
                return False
            tol, inf, isnan = self.tolerance, math.inf, math.isnan
            for x, y in zip(a, b):
                tx, ty = type(x), type(y)
                if (tx is float or tx is int) and (ty is float or ty is int):  # two numbers, in line: as below
                    if (x == inf and y == inf) or (x == -inf and y == -inf) or (isnan(x) and isnan(y)):
                        continue
                    if abs(float(x) - float(y)) <= tol:
                        continue
                    return False
                if not self.deep_equal(x, y, depth):
                    return False
            return True
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(self.deep_equal(a[k], b[k], depth) for k in a)
        return a == b

    def equal(self, got: str, expected: str) -> bool:
        """The official ``pred == target or compare_stdout_outputs(pred, target)``."""
        if got == expected:
            return True
        g, e = self._normalized(got), self._normalized(expected)  # (different texts: never the same objects)
        try:
            return self.deep_equal(g, e)
        except Exception:  # noqa: BLE001 - e.g. isnan of a complex: the official falls back to text
            return re.sub(r"\s+", " ", got.strip()) == re.sub(r"\s+", " ", expected.strip())


SEPARATOR = "===================="


def official_pieces(stdout: str) -> list[str]:
    """The printed results of an official harness run: after the last separator, split on ``#``."""
    return [s.strip() for s in stdout.split(SEPARATOR)[-1].split("#")[:-1]]


def official_stdout(printed: list[str]) -> str:
    """What the official harness prints for these results (``print(r)`` then ``print("#")``)."""
    return SEPARATOR + "\n" + "".join(p + "\n#\n" for p in printed)


def official_case_ok(got: str, expected: str, array_type: str = "ZWCArray") -> bool:
    return OfficialChecker(array_type).equal(got, expected)


# -- strict: structural comparison --------------------------------------------------------------
def expected_value(expected: str, array_type: str = "ZWCArray", numpy_wraps: bool = False) -> tuple[bool, Any]:
    """The expected printed form as a Python value: ``(True, value)``, or ``(False, text)``
    (``numpy_wraps``: a row NumPy wrapped over lines read as one, see _unwrap_rows)."""
    text = expected.strip()
    try:
        return True, safe_eval(text)  # plain Python prints: [1, 2], {'a': 1.5}, (1, 2)
    except ValueError:
        pass
    text = _empty_arrays(text)
    rows = [r.strip() for r in re.split(r"\n+", _unwrap_rows(text) if numpy_wraps else text) if r.strip()]
    t = _array_names(_numpy_rows(", ".join(rows)), array_type)
    t = _spaces(t).replace("inf", 'float("inf")').replace("nan", 'float("nan")')
    try:
        return True, safe_eval(t)
    except ValueError:
        return False, text


def decode_canonical(v: Any, _depth: int = 0) -> Any:
    """The harness's canonical JSON value back to Python (floats, complex, dicts, tuples).  Raises
    ValueError for anything the harness does not write (the value then did not come from it)."""
    if _depth > 10_000:
        raise ValueError("value nested too deeply")
    t = type(v)
    if v is None or t in (bool, int, float, str):
        return v
    if t is list:
        return [decode_canonical(x, _depth + 1) for x in v]
    if t is dict and len(v) == 1:
        (tag, x), = v.items()
        if tag == "$f" and x in ("nan", "inf", "-inf"):
            return float(x)
        if tag == "$c" and type(x) is list and len(x) == 2:
            parts = [decode_canonical(y, _depth + 1) for y in x]
            if all(type(y) in (int, float) for y in parts):
                try:
                    return complex(parts[0], parts[1])
                except OverflowError:
                    raise ValueError("complex part out of range") from None
        if tag == "$t" and type(x) is list:
            return tuple(decode_canonical(y, _depth + 1) for y in x)
        if tag == "$d" and type(x) is list and all(type(kv) is list and len(kv) == 2 for kv in x):
            out = {}
            for k, y in x:
                key = _hashable(decode_canonical(k, _depth + 1))
                try:
                    out[key] = decode_canonical(y, _depth + 1)
                except TypeError:
                    raise ValueError("unhashable dict key") from None
            return out
    raise ValueError(f"not a canonical value: {t.__name__}")


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        raise ValueError("unhashable dict key")
    return v


def _num_close(g: Any, e: Any, abs_tol: float, rel_tol: float) -> bool:
    if isinstance(g, complex) or isinstance(e, complex):
        return abs(complex(g) - complex(e)) <= abs_tol + rel_tol * abs(complex(e))
    g, e = float(g), float(e)
    if math.isnan(g) or math.isnan(e):
        return math.isnan(g) and math.isnan(e)
    if math.isinf(g) or math.isinf(e):
        return g == e
    return abs(g - e) <= abs_tol + rel_tol * abs(e)


def structural_ok(got: Any, expected: Any, abs_tol: float = STRUCT_ABS_TOL, rel_tol: float = STRUCT_REL_TOL) -> bool:
    """Same shape and values: lists and tuples alike, bools only equal bools, numbers within
    ``abs_tol + rel_tol * |expected|``, dicts by keys then values, strings exactly."""
    if isinstance(got, bool) or isinstance(expected, bool):
        return isinstance(got, bool) and isinstance(expected, bool) and got == expected
    if isinstance(got, (int, float, complex)) and isinstance(expected, (int, float, complex)):
        return _num_close(got, expected, abs_tol, rel_tol)
    if isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(got) == len(expected) and all(structural_ok(g, e, abs_tol, rel_tol) for g, e in zip(got, expected))
    if isinstance(got, dict) and isinstance(expected, dict):
        if set(got) != set(expected):
            return False
        return all(structural_ok(got[k], expected[k], abs_tol, rel_tol) for k in got)
    if isinstance(got, str) and isinstance(expected, str):
        return got.strip() == expected.strip()
    if got is None or expected is None:
        return got is None and expected is None
    return False
