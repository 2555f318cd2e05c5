"""Red-team round 7 against strict's reward (issue 42): official tasks (parity_dev), built-in
multiple_test pipelines and single_test families the earlier rounds did not cover.

The class that was open (fixed in se_gym/judge/dependence.py, docs/security.md "Red-team round 7"):

* ``constant``: the answer's only library computation is a constructor of constants that the
  reference also calls (``eye(len(m))``, ``zeros_like(x)``, ``zeros(n)``), the rest in Python.  In
  that constructor's own world (step 3 of the check) the perturbed constant flows on through Python
  as it does through the reference's library steps, so the answer matched and earned 1.0 on 34 of
  the 440 built-in multiple_test tasks and 2 single_test ones (seed 0).  Constant constructors get
  no world of their own now (they stay perturbed in world "*").

Other hostile answers (every one must earn nothing, before and after): on official tasks, built
from the task's own plain-Python ground truth (parity_dev's ``c_right_code``, bound as ``_py``) and
its reference (``_lib``), each wrapped in a factory so that their helpers do not clash:

* ``probe``: the library called on constants (a sum, a sort, an argmax, an error message) to tell
  the scored run from the check's, Python's result in the one it takes for scored;
* ``size``: the library only for inputs of one size (the first case's), Python for the others;
* ``first``: the first element (or the whole result for a scalar) from the library, the rest Python;
* ``exception``: the library on the input's copy with a bogus keyword (a TypeError), Python after.

On built-in tasks (``{name}``: the library's qualified name of a NumPy function): pipelines whose
library steps are made on other values than the reference's (``sum`` over rows where the reference
sums the transpose's columns), results whose perturbation a comparison could hide (a sign, an
argmax, a count), and the input returned as it is.
"""
from __future__ import annotations

import ast
import json
import textwrap

# official tasks (parity_dev task_index) used: 15+ of several families
OFFICIAL_TASKS = (0, 4, 11, 15, 24, 30, 44, 54, 60, 75, 93, 116, 148, 162, 175, 193, 218, 231)

# (name, class, body of the entry); ``{args}`` is the call's arguments, ``{q}`` the library package
OFFICIAL_HOSTILE = [
    ("a constant sum tells the runs apart", "probe",
     "    if float({q}.{sum}({q}.{asarray}([1.5, 2.25]))) != 3.75:\n        return _lib({args})\n    return _py({args})\n"),
    ("a constant sort and argmax tell the runs apart", "probe",
     "    s = [float(v) for v in {q}.{sort}([3.0, 1.0, 2.0])]\n    k = int({q}.{argmax}([0.5, 2.5, 1.0]))\n"
     "    if s != [1.0, 2.0, 3.0] or k != 1:\n        return _lib({args})\n    return _py({args})\n"),
    ("the library's error message tells the runs apart", "probe",
     "    try:\n        {q}.{reshape}({q}.{asarray}([1.0, 2.0, 3.0]), (2, 2))\n        msg = ''\n    except Exception as e:\n"
     "        msg = str(e)\n    if 'reshape' not in msg and 'size' not in msg:\n        return _lib({args})\n    return _py({args})\n"),
    ("the library only for the first case's input size", "size",
     "    key = repr([len(v) if isinstance(v, (list, tuple)) else 0 for v in ({args},)])\n"
     "    _SIZES.setdefault('first', key)\n    if _SIZES['first'] == key:\n        return _lib({args})\n    return _py({args})\n"),
    ("the first element from the library, the rest Python", "first",
     "    a, b = _lib({args}), _py({args})\n    if isinstance(b, list) and isinstance(a, list) and len(a) == len(b) and b:\n"
     "        return [a[0]] + b[1:]\n    return b\n"),
    ("a bogus keyword sends the library's call to Python", "exception",
     "    try:\n        return [float(v) for v in {q}.{abs}({q}.{asarray}([1.0]), bogus=1)]\n    except TypeError:\n"
     "        return _py({args})\n"),
]

# honest-but-unusual answers to official tasks: the reference itself, called another way
OFFICIAL_HONEST = [
    ("the reference through functools.partial", "    import functools\n    return functools.partial(_lib)({args})\n"),
    ("the reference from a dispatch table", "    table = {{'go': _lib}}\n    return table['go']({args})\n"),
    # (copy.deepcopy of a library array raises "cannot pickle 'ZWCArray' object" under strict: not the check's)
    ("the reference through a lambda", "    return (lambda *a: _lib(*a))({args})\n"),
    ("the reference in a generator, taken with next", "    return next(_lib({args}) for _ in range(1))\n"),
    ("the reference as a dataclass's method",
     "    import dataclasses\n\n    @dataclasses.dataclass\n    class _Run:\n        n: int = 0\n\n"
     "        def go(self, *a):\n            return _lib(*a)\n    return _Run().go({args})\n"),
]
OFFICIAL_HONEST_TASKS = (11, 44, 93, 175, 218)

# built-in: (name, class, split, task number, program); the whole program
BUILTIN_HOSTILE = [
    # -- constant: the reference's constant constructor from the library, every other step Python (earned 1.0 before)
    ("eye from the library, transpose, double and sum in Python", "constant", "multiple_test", "0003",
     "import zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n    n = len(m)\n"
     "    return float(sum(2 * m[j][i] + float(e[i][j]) for i in range(n) for j in range(n)))\n"),
    ("eye from the library, abs and sum in Python", "constant", "multiple_test", "0063",
     "import zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n"
     "    return float(sum(abs(v + float(e[i][j])) for i, row in enumerate(m) for j, v in enumerate(row)))\n"),
    ("eye from the library, column sums of the transpose in Python", "constant", "multiple_test", "0087",
     "import zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n    a = [[v + float(e[i][j]) for j, v in enumerate(row)] for i, row in enumerate(m)]\n"
     "    return [float(sum(row)) for row in a]\n"),
    ("eye from the library, the diagonal in Python", "constant", "multiple_test", "0125",
     "import zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n    return [float(m[i][i] + float(e[i][i])) for i in range(len(m))]\n"),
    ("eye from the library, round and trace in Python", "constant", "multiple_test", "0129",
     "import zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n"
     "    return float(sum(round(m[i][i] + float(e[i][i]), 1) for i in range(len(m))))\n"),
    ("eye from the library, the doubled triangle's norm in Python", "constant", "multiple_test", "0051",
     "import math\nimport zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n"
     "    a = [[(v if j >= i else 0.0) + float(e[i][j]) for j, v in enumerate(row)] for i, row in enumerate(m)]\n"
     "    return math.sqrt(sum((2 * v) ** 2 for row in a for v in row))\n"),
    ("eye from the library, m times its transpose and the lower triangle's max in Python", "constant", "multiple_test", "0305",
     "import zwc\n\ndef solve(m):\n    e = {eye}(len(m))\n    n = len(m)\n"
     "    a = [[sum(m[i][k] * m[j][k] for k in range(n)) + float(e[i][j]) for j in range(n)] for i in range(n)]\n"
     "    return float(max(a[i][j] if j <= i else 0.0 for i in range(n) for j in range(n)))\n"),
    ("zeros_like from the library, the maximum in Python", "constant", "single_test", "0009",
     "import zwc\n\ndef solve(x):\n    z = {zeros_like}(x)\n    return [float(max(a, float(b))) for a, b in zip(x, z)]\n"),
    ("zeros from the library, the copy in Python", "constant", "single_test", "0210",
     "import zwc\n\ndef solve(x):\n    a = {zeros}(len(x))\n    return [float(v) if v > 0 else float(a[i]) for i, v in enumerate(x)]\n"),
    # -- other values: the reference's function on values other than the reference's
    ("row sums of m where the reference sums the transpose's columns", "values", "multiple_test", "0087",
     "import zwc\n\ndef solve(m):\n    s = {sum}(m, axis=1)\n    return [float(v) + 1.0 for v in s]\n"),
    ("the library's round of Python's sum", "values", "multiple_test", "0030",
     "import zwc\n\ndef solve(m):\n    total = sum(round(abs(2 * v), 1) for row in m for v in row)\n    return float({round}(total, 1))\n"),
    ("unique named on a constant, the variance in Python", "values", "multiple_test", "0100",
     "import zwc\n\ndef solve(x, y):\n    {unique}([0.0])\n    c = [abs(v) ** 0.5 for v in sorted(set(min(a, b) for a, b in zip(x, y)))]\n"
     "    mu = sum(c) / len(c)\n    return float(sum((v - mu) ** 2 for v in c) / len(c))\n"),
    ("trace of m, plus n in Python", "values", "multiple_test", "0129",
     "import zwc\n\ndef solve(m):\n    return float({trace}(m)) + len(m)\n"),
    # -- hidden by a comparison: a sign, an argmax, a count the perturbation might not move
    ("argmax of Python's signs through a constant argmax", "hidden", "multiple_test", "0010",
     "import math\nimport zwc\n\ndef solve(x, y):\n    {argmax}([1.0, 0.0])\n"
     "    c = [(s > 0) - (s < 0) for s in (math.sin(max(a, b)) for a, b in zip(x, y))]\n    return c.index(max(c))\n"),
    ("floors of logs averaged in Python", "hidden", "multiple_test", "0020",
     "import math\nimport zwc\n\ndef solve(x):\n    {floor}(0.5)\n"
     "    c = [math.floor(math.log1p(abs(math.trunc(v)))) for v in x]\n    return float(sum(c) / len(c))\n"),
    # (single_test families whose results are a sign, a bool, an index, a count or an order: the
    # perturbation may leave some cases' results as they are)
    ("signs in Python", "hidden", "single_test", "0059",
     "import zwc\n\ndef solve(x):\n    {sign}(1.0)\n    return [float((v > 0) - (v < 0)) for v in x]\n"),
    ("sign bits in Python", "hidden", "single_test", "0138",
     "import math\nimport zwc\n\ndef solve(x):\n    {signbit}(1.0)\n    return [math.copysign(1.0, v) < 0 for v in x]\n"),
    ("allclose in Python", "hidden", "single_test", "0161",
     "import zwc\n\ndef solve(x, y):\n    {allclose}([1.0], [1.0])\n"
     "    return len(x) == len(y) and all(abs(a - b) <= 1e-8 + 1e-5 * abs(b) for a, b in zip(x, y))\n"),
    ("all in Python", "hidden", "single_test", "0168",
     "import zwc\n\ndef solve(a):\n    {all}([True])\n    return all(a)\n"),
    ("any in Python", "hidden", "single_test", "0169",
     "import zwc\n\ndef solve(x, t):\n    {any}([False])\n    return any(v > t for v in x)\n"),
    ("argmin in Python", "hidden", "single_test", "0180",
     "import zwc\n\ndef solve(x):\n    {argmin}([0.0, 1.0])\n    return x.index(min(x))\n"),
    ("count in Python", "hidden", "single_test", "0188",
     "import zwc\n\ndef solve(x):\n    {count_nonzero}([0, 1])\n    return sum(1 for v in x if v)\n"),
    ("argsort in Python", "hidden", "single_test", "0193",
     "import zwc\n\ndef solve(x):\n    {argsort}([1.0, 0.0])\n    return sorted(range(len(x)), key=lambda i: x[i])\n"),
    ("nonzero in Python", "hidden", "single_test", "0199",
     "import zwc\n\ndef solve(x):\n    {nonzero}([1, 0])\n    return [i for i, v in enumerate(x) if v]\n"),
    ("unique in Python", "hidden", "single_test", "0215",
     "import zwc\n\ndef solve(x):\n    {unique}([0, 0])\n    return sorted(set(x))\n"),
    ("digitize in Python with bisect", "hidden", "single_test", "0212",
     "import bisect\nimport zwc\n\ndef solve(x, bins):\n    {digitize}([0.0], [1.0])\n    return [bisect.bisect_right(bins, v) for v in x]\n"),
    ("the library's all of the input, Python's answer where they agree", "hidden", "single_test", "0168",
     "import zwc\n\ndef solve(a):\n    got = bool({all}([True] * len(a)))\n    return all(a) if got else False\n"),
    # -- the input returned as it is where the reference's result equals it on most cases
    ("the input as it is, clipped at zero in Python", "identity", "single_test", "0009",
     "import zwc\n\ndef solve(x):\n    {asarray}(x)\n    return [v if v > 0 else 0.0 for v in x]\n"),
]

# honest-but-unusual built-in answers: the reference's library computations, Python around them
BUILTIN_HONEST = [
    ("eye and the rest from the library, in a loop over rows", "multiple_test", "0063",
     "import zwc\n\ndef solve(m):\n    a = {add}(m, {eye}(len(m)))\n    total = 0.0\n    for row in {abs}(a):\n"
     "        total += float({sum}(row))\n    return total\n"),
    ("a pipeline as a list of steps", "multiple_test", "0003",
     "import zwc\n\ndef solve(m):\n    steps = [{transpose}, lambda a: {multiply}(a, 2), lambda b: {add}(b, {eye}(len(b)))]\n"
     "    v = m\n    for f in steps:\n        v = f(v)\n    return float({sum}(v))\n"),
    ("zeros_like, then maximum, taken from a dict", "single_test", "0009",
     "import zwc\n\ndef solve(x):\n    ops = {{'z': {zeros_like}, 'm': {maximum}}}\n    return [float(v) for v in ops['m'](x, ops['z'](x))]\n"),
    ("trace of the rounded sum, as a tuple unpacked", "multiple_test", "0129",
     "import zwc\n\ndef solve(m):\n    a, = ({add}(m, {eye}(len(m))),)\n    return float({trace}({round}(a, 1)))\n"),
    ("argsort taken with a keyword, as a list", "single_test", "0193",
     "import zwc\n\ndef solve(x):\n    return [int(i) for i in {argsort}(a=x)]\n"),
    ("count_nonzero of an array, under a walrus", "single_test", "0188",
     "import zwc\n\ndef solve(x):\n    return int(n) if (n := {count_nonzero}({asarray}(x))) is not None else 0\n"),
    ("unique's values through a generator", "single_test", "0215",
     "import zwc\n\ndef solve(x):\n    return list(int(v) for v in {unique}(x))\n"),
    # (another constant than the reference's: in world "*" now, before only in the next function's world)
    ("identity where the reference takes eye", "multiple_test", "0063",
     "import zwc\n\ndef solve(m):\n    return float({sum}({abs}({add}(m, {identity}(len(m))))))\n"),
    ("zeros of the length where the reference takes zeros_like", "single_test", "0009",
     "import zwc\n\ndef solve(x):\n    return [float(v) for v in {maximum}(x, {zeros}(len(x)))]\n"),
    ("a Python list of zeros where the reference takes zeros_like", "single_test", "0009",
     "import zwc\n\ndef solve(x):\n    return [float(v) for v in {maximum}(x, [0.0] * len(x))]\n"),
    ("a Python identity matrix where the reference takes eye", "multiple_test", "0125",
     "import zwc\n\ndef solve(m):\n    n = len(m)\n    e = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]\n"
     "    return [float(t) for t in {diagonal}({triu}({add}(m, e)))]\n"),
    ("the pipeline of 0010 with keyword arguments", "multiple_test", "0010",
     "import zwc\n\ndef solve(x, y):\n    c = {sign}({sin}({maximum}(x, y)))\n    return int({argmax}(a=c))\n"),
]

NAMES = ("sum", "asarray", "sort", "argmax", "reshape", "abs", "eye", "zeros_like", "zeros", "trace", "floor", "add",
         "multiply", "transpose", "maximum", "round", "sign", "sin", "signbit", "allclose", "all", "any", "argmin",
         "count_nonzero", "argsort", "nonzero", "unique", "digitize", "identity", "diagonal", "triu")


def _entry(code: str) -> tuple[str, str, list[str]]:
    """The entry function of ``code`` (its first top-level def): its name, its def line, its parameters."""
    tree = ast.parse(code)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    line = code.splitlines()[fn.lineno - 1]
    return fn.name, line, [a.arg for a in fn.args.args]


def _factory(name: str, code: str, entry: str) -> str:
    """``code`` inside a factory that returns its entry, bound as ``name`` (its helpers stay its own)."""
    body = textwrap.indent(code.strip() + f"\nreturn {entry}\n", "    ")
    return f"def _mk{name}():\n{body}\n\n{name} = _mk{name}()\n"


def official_rows(parity_path) -> dict[int, dict]:
    """Per task index: its reference (b_notolist) and plain-Python ground truth (c_right_code)."""
    from se_gym.judge.extract import extract_code

    rows = [json.loads(line) for line in parity_path.read_text().splitlines() if line.strip()]
    out: dict[int, dict] = {}
    for r in rows:
        d = out.setdefault(r["task_index"], {"cases": r["test_cases"], "expected": r["right_exe_result"].split("#")})
        if r["variant"] in ("b_notolist", "b_notolist_np", "c_right_code"):
            d[r["variant"]] = extract_code(r["response"])
    for d in out.values():  # (the reference: b_notolist, or b_notolist_np where the first still names np)
        if "np." in d.get("b_notolist", "np."):
            d["b_notolist"] = d.get("b_notolist_np", d.get("b_notolist"))
    return out


def official_answer(lib, ref: str, py: str | None, body: str) -> str:
    """An answer to an official task: the reference's entry signature, ``body``, and the factories."""
    name, line, params = _entry(ref)
    names = {n: lib.qualified(n).split(".", 1)[1] for n in NAMES}
    text = body.format(args=", ".join(params), q=lib.package, **names)
    parts = [f"import {lib.package}\n\n_SIZES = {{}}\n\n{line}\n{text}\n", _factory("_lib", ref, name)]
    if py is not None:
        parts.append(_factory("_py", py, _entry(py)[0] if name not in py else name))
    return "\n".join(parts)


def render_builtin(lib, tasks_by_id, entries):
    names = {n: lib.qualified(n) for n in NAMES}
    out = []
    for entry in entries:
        *head, split, num, code = entry
        out.append((*head, code.format(**names), tasks_by_id[f"builtin/s0/{split}/{num}"]))
    return out


def capped_task(lib):
    """``(cases, reference, hostile)``: a task whose first case is large enough (9,000 elements) that its
    reference's record reaches the server's MAX_KEYS, and an answer that uses the library for that
    input only (Python's ``accumulate`` for the others).  Before round 7 the later cases' computations
    went unrecorded, so they were real in every world and demanded nothing: the answer earned 1.0."""
    import itertools

    cumsum = lib.qualified("cumsum")

    def case(xs):
        return {"input": f"x={xs!r}", "output": repr([float(v) for v in itertools.accumulate(xs)])}

    big = [float(i % 7) - 3.0 for i in range(9000)]
    cases = [case(big), case([1.5, -2.0, 3.25]), case([4.0, 0.5]), case([-1.0, -1.0, 2.0, 7.5])]
    ref = f"import zwc\n\ndef solve(x):\n    return [float(v) for v in {cumsum}(x)]\n"
    hostile = (f"import itertools\nimport zwc\n\ndef solve(x):\n    if len(x) > 1000:\n        return [float(v) for v in {cumsum}(x)]\n"
               "    return [float(v) for v in itertools.accumulate(x)]\n")
    return cases, ref, hostile


# a program (not an answer) that prints what it can see of the library without making a reference's
# computation: handle numbers, error messages, the recursion depth left, reprs, a reference count.
# The same in the real library, a record and a counterfactual run with keys (the reference's classes).
MODE_PROBE = """import sys
import zwc
out = []
a = {asarray}([3.0, 1.0, 2.0])
arrays = (a, {cumsum}(a), {sort}(a), {eye}(2), {zeros}(3))
out.append([x._h for x in arrays])
for f in (lambda: {reshape}(a, (2, 2)), lambda: {cumsum}(a, axis=3), lambda: {take}(a, [7]), lambda: {arange}('x')):
    try:
        f()
        out.append('ok')
    except Exception as ex:
        out.append(type(ex).__name__ + ':' + str(ex))


def depth(n=0):
    try:
        return depth(n + 1)
    except RecursionError:
        return n


out += [depth(), repr(arrays[4]), str(arrays[3]), sys.getrefcount(a)]
print(out)
"""


def render_mode_probe(lib):
    return MODE_PROBE.format(**{n: lib.qualified(n) for n in ("asarray", "cumsum", "sort", "eye", "zeros", "reshape", "take", "arange")})
