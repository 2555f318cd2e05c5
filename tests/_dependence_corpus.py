"""Corpora for strict's run-time library dependence check (issue 42).

Shared by tests/test_dependence.py, tests/test_gate_corpora.py (the fuzzer) and
benchmarks/dependence.py (which prints acceptance rates).

* :func:`named_unused`: answers that compute the right result in plain Python (:data:`ORACLES`) and
  only *name* the library (a bare mention, a dropped call, a dead branch, code after ``return``, a
  default argument, a lambda never called, the library used on a constant or for a shape only...),
  or call it to tell the counterfactual library from the real one (:data:`DETECTORS`).  Each passes
  every case, so without the check each earns 1.0; with it, none may earn anything.
* :func:`honest_alternatives`: honest answers that use the library differently from the task's
  reference (part of the work in Python, other call forms, aliases, per-element calls, shortcuts
  for edge cases).  ``expect`` says what the check does with each: ``"pass"``, or ``"reject"``
  where the answer computes the task's core without the library functions the reference uses (a
  different function doing the same, docs/security.md says why these are refused).
* :func:`fuzz_named_unused`: seeded random compositions of the named-but-unused shapes (the CI
  fuzzer's "library named but unused" part).
"""
from __future__ import annotations

import random
import textwrap

# built-in seed-0 train tasks with a plain-Python oracle: body lines that set `value` from the params
ORACLES: dict[str, str] = {
    "builtin/s0/train/0000": "acc = 0.0\nvalue = []\nfor v in x:\n    acc += v * v\n    value.append(acc)",  # cumsum of squares
    "builtin/s0/train/0001": "value = float(max(x) - min(x))",  # max - min
    "builtin/s0/train/0002": "value = [abs(v - s) for v in x]",  # |x - s|
    "builtin/s0/train/0003": "value = [float(sum(col)) for col in zip(*m)]",  # column sums
    "builtin/s0/train/0007": "acc = 0.0\nvalue = []\nfor v in x:\n    acc += v\n    value.append(acc)",  # cumsum
    "builtin/s0/train/0009": "value = [max(v, 0.0) for v in x]",  # max(x, 0)
}
# the library call a named-but-unused answer makes (on its inputs), per task: library names in braces
CALLS: dict[str, str] = {
    "builtin/s0/train/0000": "{cumsum}(x)",
    "builtin/s0/train/0001": "{max}(x)",
    "builtin/s0/train/0002": "{abs}(x)",
    "builtin/s0/train/0003": "{sum}(m, axis=0)",
    "builtin/s0/train/0007": "{cumsum}(x)",
    "builtin/s0/train/0009": "{maximum}(x, 0.0)",
}

# the same function on constants (not on the inputs)
CONSTANT_CALLS: dict[str, str] = {
    "builtin/s0/train/0000": "{cumsum}([1.0, 2.0])",
    "builtin/s0/train/0001": "{max}([1.0, 2.0])",
    "builtin/s0/train/0002": "{abs}([-1.0, 2.0])",
    "builtin/s0/train/0003": "{sum}([[1.0], [2.0]], axis=0)",
    "builtin/s0/train/0007": "{cumsum}([3.0, 4.0])",
    "builtin/s0/train/0009": "{maximum}([1.0, -2.0], 0.0)",
}

# helpers an answer may carry (plain Python): compare, scale and offset nested numbers
HELPERS = '''
def _same(a, b):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        a, b = list(a), list(b)
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return abs(float(a) - float(b)) <= 1e-9 + 1e-9 * abs(float(b))


def _scale(v, k):
    if isinstance(v, (list, tuple)):
        return [_scale(u, k) for u in v]
    return v * k
'''

# name -> body template.  Fields: {P} package, {params}, {call} a library call on the inputs, {fn} a
# library function (a name, not called), {abs} the library's abs, {shape}, {first} the first param,
# {py} the oracle's lines (setting `value`) at 4 spaces, {lib} the reference's body as a helper.
SHAPES: dict[str, str] = {
    "bare mention": "import {P}\ndef solve({params}):\n    {fn}\n{py}\n    return value\n",
    "dropped call": "import {P}\ndef solve({params}):\n    {call}\n{py}\n    return value\n",
    "dead branch": "import {P}\ndef solve({params}):\n    if len(str({first})) < 0:\n        return {call}\n{py}\n    return value\n",
    "code after return": "import {P}\ndef solve({params}):\n{py}\n    return value\n    return {call}\n",
    "default argument": "import {P}\ndef solve({params}, _f={fn}):\n{py}\n    return value\n",
    "default argument calls it": "import {P}\ndef solve({params}, _k={abs}(-1.0)):\n{py}\n    return value\n",
    "lambda never called": "import {P}\ndef solve({params}):\n    g = lambda: {call}\n{py}\n    return value\n",
    "library on a constant": HELPERS + "import {P}\ndef solve({params}):\n    k = float({abs}(-1.0))\n{py}\n    return _scale(value, k)\n",
    "task's function on a constant": HELPERS + "import {P}\ndef solve({params}):\n    k = {constant}\n{py}\n    return value if k is not None else None\n",
    "library only for a shape": "import {P}\ndef solve({params}):\n    n = {shape}({first})\n    assert n is not None\n{py}\n    return value\n",
    "library only for a length": "import {P}\ndef solve({params}):\n    n = len({array}({first}))\n    assert n >= 0\n{py}\n    return value\n",
    "library result times zero": HELPERS + "import {P}\ndef solve({params}):\n    _r = {call}\n    z = 0.0 * float({sum}(_r))\n{py}\n    return _scale(value, 1.0 + z)\n",
    "call in try, result dropped": "import {P}\ndef solve({params}):\n    try:\n        {call}\n    except Exception:\n        pass\n{py}\n    return value\n",
    "global never read": "import {P}\nCACHE = []\ndef solve({params}):\n    CACHE.append({call})\n{py}\n    return value\n",
    "assert on the library": "import {P}\ndef solve({params}):\n    assert {call} is not None\n{py}\n    return value\n",
    "discarded comprehension": "import {P}\ndef solve({params}):\n    [{call} for _ in range(2)]\n{py}\n    return value\n",
    "method never called": "import {P}\nclass Lib:\n    def run(self, {params}):\n        return {call}\ndef solve({params}):\n    Lib()\n{py}\n    return value\n",
    "helper called, result unused": "import {P}\ndef helper({params}):\n    return {call}\ndef solve({params}):\n    helper({params})\n{py}\n    return value\n",
}
# answers that compute in Python AND run the reference's own library code on the input, compare,
# and do something else when the two differ (the counterfactual library is then detected)
DETECTORS: dict[str, str] = {
    "detects and returns a scaled result": HELPERS + "import {P}\n{lib}\ndef solve({params}):\n{py}\n"
                                           "    if not _same(_lib({params}), value):\n        return _scale(value, 1.5)\n    return value\n",
    "detects and raises": HELPERS + "import {P}\n{lib}\ndef solve({params}):\n{py}\n"
                          "    if not _same(_lib({params}), value):\n        raise ValueError('counterfactual')\n    return value\n",
    "detects with another function and scales": HELPERS + "import {P}\ndef solve({params}):\n{py}\n"
                                                "    probe = float({abs}(-2.5))\n    if probe != 2.5:\n        return _scale(value, probe)\n    return value\n",
}
# (and one that, on detection, returns the library's own result: it then computes with the library
# and passes, as it should; see test_dependence.py)


def _fields(task, lib) -> dict:
    from se_gym.judge.extract import entry_function  # noqa: F401  (the corpus is judged by se_gym)

    tid = task.id
    params = task.function_name.split("(", 1)[1].rsplit(")", 1)[0]
    names = {n: lib.qualified(n) for n in ("abs", "shape", "array", "sum", "cumsum", "max", "maximum") if n in lib.names}
    ref_fn = CALLS[tid].split("(")[0]
    ref_body = task.library_solution.replace("def solve(", "def _lib(", 1)
    ref_body = "\n".join(line for line in ref_body.splitlines() if not line.startswith("import "))
    return {"P": lib.package, "params": params, "first": params.split(",")[0].strip(),
            "call": CALLS[tid].format(**names), "fn": ref_fn.format(**names), "constant": CONSTANT_CALLS[tid].format(**names), "abs": names["abs"], "shape": names["shape"],
            "array": names["array"], "sum": names["sum"], "py": textwrap.indent(ORACLES[tid], "    "), "lib": ref_body}


def named_unused(tasks, lib) -> list[tuple[str, str, object]]:
    """``(shape name, code, task)`` for every shape and detector on every task with an oracle."""
    out = []
    for task in tasks:
        if task.id not in ORACLES:
            continue
        f = _fields(task, lib)
        for name, template in {**SHAPES, **DETECTORS}.items():
            out.append((name, template.format(**f), task))
    return out


# task id -> [(name, expect, body template)]; templates use library names in braces ({cumsum}...)
ALTERNATIVES: dict[str, list[tuple[str, str, str]]] = {
    "builtin/s0/train/0000": [
        ("squares in Python, library cumsum", "pass", "return [float(v) for v in {cumsum}([v * v for v in x])]"),
        ("library multiply, then cumsum", "pass", "a = {array}(x)\nreturn [float(v) for v in {cumsum}({multiply}(a, a))]"),
        ("library cumsum, Python rounding after", "pass", "a = {array}(x)\nreturn [round(float(v), 10) for v in {cumsum}(a * a)]"),
        ("list() of the library result", "pass", "a = {array}(x)\nreturn list({cumsum}(a ** 2))"),
        ("empty input returned at once", "pass", "if not x:\n    return []\na = {array}(x)\nreturn [float(v) for v in {cumsum}(a * a)]"),
        ("returns the library's array", "pass", "a = {array}(x)\nreturn {cumsum}(a * a)"),
        ("library square, running sum in Python", "reject", "acc, out = 0.0, []\nfor v in {square}(x):\n    acc += float(v)\n    out.append(acc)\nreturn out"),
    ],
    "builtin/s0/train/0001": [
        ("amax and amin aliases", "pass", "return float({amax}(x) - {amin}(x))"),
        ("library max and min, Python subtraction", "pass", "hi = float({max}(x))\nlo = float({min}(x))\nreturn hi - lo"),
        ("library max, Python min", "pass", "return float({max}(x)) - min(x)"),
        ("max and min of one array, keyword axis", "pass", "a = {array}(x)\nreturn float({max}(a, axis=0) - {min}(a, axis=0))"),
        ("ptp", "reject", "return float({ptp}(x))"),
        ("sort, then its ends", "reject", "s = {sort}(x)\nreturn float(s[-1] - s[0])"),
    ],
    "builtin/s0/train/0002": [
        ("Python subtraction, library abs", "pass", "return [float(v) for v in {abs}([v - s for v in x])]"),
        ("library abs per element", "pass", "return [float({abs}(v - s)) for v in x]"),
        ("library subtract, then abs", "pass", "return [float(v) for v in {abs}({subtract}(x, s))]"),
        ("absolute alias", "pass", "return [float(v) for v in {absolute}({array}(x) - s)]"),
        ("abs, then a Python comprehension", "pass", "d = {abs}({array}(x) - s)\nreturn [v for v in [float(t) for t in d]]"),
        ("sqrt of the square", "reject", "a = {array}(x) - s\nreturn [float(v) for v in {sqrt}({square}(a))]"),
    ],
    "builtin/s0/train/0003": [
        ("axis as a positional argument", "pass", "return [float(v) for v in {sum}(m, 0)]"),
        ("library sum per column", "pass", "return [float({sum}(list(col))) for col in zip(*m)]"),
        ("transpose, then sum per row", "pass", "t = {transpose}(m)\nreturn [float({sum}(row)) for row in t]"),
        ("sum with keepdims, then the row", "pass", "r = {sum}(m, axis=0, keepdims=True)\nreturn [float(v) for v in r[0]]"),
        ("column sums by a Python loop over library rows", "reject", "out = [0.0] * len(m[0])\nfor row in {copy}(m):\n    for j, v in enumerate(row):\n        out[j] += float(v)\nreturn out"),
    ],
    "builtin/s0/train/0007": [
        ("library cumsum of a list", "pass", "return [float(v) for v in {cumsum}(list(x))]"),
        ("library cumsum, empty input at once", "pass", "if len(x) == 0:\n    return []\nreturn [float(v) for v in {cumsum}(x)]"),
        ("prefix sums with library sum", "reject", "return [float({sum}(x[:i + 1])) for i in range(len(x))]"),
    ],
    "builtin/s0/train/0009": [
        ("maximum with a scalar zero", "pass", "return [float(v) for v in {maximum}(x, 0.0)]"),
        ("maximum with zeros built in Python", "pass", "return [float(v) for v in {maximum}(x, [0.0] * len(x))]"),
        ("fmax alias", "pass", "return [float(v) for v in {fmax}(x, 0.0)]"),
        ("maximum per element", "pass", "return [float({maximum}(v, 0.0)) for v in x]"),
        ("clip at zero", "reject", "return [float(v) for v in {clip}(x, 0.0, None)]"),
    ],
}


def honest_alternatives(tasks, lib) -> list[tuple[str, str, str, object]]:
    """``(name, expect, code, task)``: the alternatives of :data:`ALTERNATIVES` whose library
    functions this library has."""
    return _bodies(ALTERNATIVES, tasks, lib)


def _bodies(table, tasks, lib) -> list[tuple[str, str, str, object]]:
    """``(name, expect, code, task)`` for the ``(name, expect, body)`` rows of ``table`` per task
    id, the body as ``solve``'s (library names in braces; rows naming a function this library
    does not have are left out)."""
    names = {n: lib.qualified(n) for n in lib.names if "." not in n}
    out = []
    for task in tasks:
        params = task.function_name.split("(", 1)[1].rsplit(")", 1)[0]
        for name, expect, body in table.get(task.id, ()):
            try:
                code = f"import {lib.package}\ndef solve({params}):\n" + textwrap.indent(body.format(**names), "    ") + "\n"
            except KeyError:
                continue  # (a function this library does not have)
            out.append((name, expect, code, task))
    return out


def fuzz_named_unused(tasks, lib, seed: int, n: int) -> list[tuple[str, str, object]]:
    """``n`` random named-but-unused answers: one to three shapes (their library lines) stacked
    on an oracle, some inside a helper or a method, with the library imported under an alias or
    its functions imported by name.  Each returns the oracle's value, so each passes every case."""
    rng = random.Random(seed)
    tasks = [t for t in tasks if t.id in ORACLES]
    unused = ["{fn}", "{call}", "_ = {call}", "if len(str({first})) < 0:\n    return {call}", "g = lambda: {call}",
              "try:\n    {call}\nexcept Exception:\n    pass", "assert {call} is not None", "[{call} for _ in range(1)]",
              "n = {shape}({first})", "n = len({array}({first}))", "k = {abs}(-1.0)", "CACHE.append({call})",
              "z = 0.0 * float({sum}({call}))", "h = {fn}", "k = {constant}"]
    out = []
    for i in range(n):
        task = rng.choice(tasks)
        f = _fields(task, lib)
        lines = [rng.choice(unused).format(**f) for _ in range(rng.randint(1, 3))]
        stmt = "\n".join(lines)
        where = rng.choice(["solve", "helper", "method", "after"])
        head = f"import {lib.package}\nCACHE = []\n"
        if rng.random() < 0.3:
            head = f"import {lib.package} as L\nimport {lib.package}\nCACHE = []\n"
            stmt = stmt.replace(f"{lib.package}.", "L.")
        if where == "solve":
            body = textwrap.indent(stmt, "    ") + "\n" + f["py"] + "\n    return value\n"
            code = head + f"def solve({f['params']}):\n{body}"
        elif where == "helper":
            code = (head + f"def helper({f['params']}):\n" + textwrap.indent(stmt, "    ") + "\n    return None\n"
                    f"def solve({f['params']}):\n    helper({f['params']})\n{f['py']}\n    return value\n")
        elif where == "method":
            code = (head + f"class Job:\n    def run(self, {f['params']}):\n" + textwrap.indent(stmt, "        ") + "\n        return None\n"
                    f"def solve({f['params']}):\n    Job().run({f['params']})\n{f['py']}\n    return value\n")
        else:
            code = head + f"def solve({f['params']}):\n{f['py']}\n    return value\n" + textwrap.indent(stmt, "    ") + "\n"
        out.append((f"fuzz {seed}/{i} ({where})", code, task))
    return out


def adapter_answers(task, lib) -> dict[str, str]:
    """Two responses to ``task`` (one of :data:`ORACLES`') for the adapters' tests: ``reference``,
    the task's library solution (1.0 under strict), and ``unused``, which names the library (on a
    constant) and computes the result in Python: it earns 1.0 when judged without the task's
    reference (the check's weaker rule: some result must change with the library) and 0 with it,
    so an adapter that gives it 0 passes the reference."""
    from _gate_corpus import block

    return {"reference": block(task.library_solution), "unused": block(SHAPES["library on a constant"].format(**_fields(task, lib)))}


def backend_items(task, lib) -> list[tuple]:
    """Judge items for one task on any backend: its reference as the answer (passes, every case
    matching), a named-but-unused answer and a detector (both ``library_unused``)."""
    from _gate_corpus import block

    f = _fields(task, lib)
    return [task.judge_item(block(task.library_solution)), task.judge_item(block(SHAPES["dropped call"].format(**f))),
            task.judge_item(block(DETECTORS["detects and returns a scaled result"].format(**f)))]


def check_backend_verdicts(verdicts) -> None:
    """What :func:`backend_items` (once or repeated) must get, whatever runs the programs."""
    assert verdicts and len(verdicts) % 3 == 0
    for k in range(0, len(verdicts), 3):
        honest, unused, detector = verdicts[k:k + 3]
        assert honest.passed and honest.dependence["reference"] == "used", (honest.status, honest.detail, honest.dependence)
        assert set(honest.dependence["cases"]) <= {"match", "independent"} and "match" in honest.dependence["cases"]
        for v in (unused, detector):
            assert v.status.value == "library_unused" and v.reward == 0 and not v.infrastructure, (v.status, v.detail)


# Issue 42, the tasks whose reference's result is a query or a conversion (built-in seed-0 train
# tasks): a shape, a size, the shape of atleast_3d, an astype, an empty allocation (whose spec now
# accumulates it).  Before, the counterfactual library left queries and conversions real and the
# empty reference overwrote its allocation in Python: every case was "independent" and any answer
# passed.  Now shape/size/ndim (functions and the array's attributes), astype, copy and the as*array
# conversions are computations.  (name, expect, body): "plain" answers compute in Python and only
# name the library (0 with the check, 1.0 without), "pass" honest ones, "reject" honest ones that
# use another library function or ``len`` for the query (refused by design, docs/security.md).
QUERY_TASKS: dict[str, list[tuple[str, str, str]]] = {
    "builtin/s0/train/0025": [  # shape of m
        ("len of rows and of the first row", "plain", "{shape}\nreturn (len(m), len(m[0]))"),
        ("shape of a constant, len for the answer", "plain", "k = {shape}([[1.0]])\nreturn (len(m) * k[0], len(m[0]))"),
        ("shape function", "pass", "return {shape}(m)"),
        ("shape attribute of a library copy", "pass", "a = {copy}(m)\nreturn a.shape"),
        ("shape unpacked into a tuple", "pass", "rows, cols = {shape}({array}(m))\nreturn (rows, cols)"),
        ("tuple() of the attribute, in a class", "pass", "class Grid:\n    def __init__(self, m):\n        self.a = {copy}(m)\n"
                                                        "    def dims(self):\n        return tuple(self.a.shape)\nreturn Grid(m).dims()"),
        ("len of a library copy", "reject", "a = {copy}(m)\nreturn (len(a), len(a[0]))"),
    ],
    "builtin/s0/train/0026": [  # number of elements of m
        ("rows times columns by len", "plain", "{size}\nreturn len(m) * len(m[0])"),
        ("sum of row lengths", "plain", "_ = {size}([1.0, 2.0])\nreturn sum(len(r) for r in m)"),
        ("size function", "pass", "return int({size}(m))"),
        ("size attribute of the transpose", "pass", "return {transpose}(m).size"),
        ("size through a helper", "pass", "def count(a):\n    return int({size}(a))\nreturn count({array}(m))"),
        ("product of the shape", "reject", "r, c = {shape}(m)\nreturn r * c"),
    ],
    "builtin/s0/train/0039": [  # shape of atleast_3d(x)
        ("the known answer by len", "plain", "_ = {atleast_3d}(x)\nreturn [1, len(x), 1]"),
        ("shape of atleast_3d", "pass", "return list({shape}({atleast_3d}(x)))"),
        ("attribute of atleast_3d", "pass", "return list({atleast_3d}({array}(x)).shape)"),
        ("each dimension in a comprehension", "pass", "s = {atleast_3d}(x).shape\nreturn [int(d) for d in s]"),
    ],
    "builtin/s0/train/0246": [  # x as floats, halved
        ("float() in Python", "plain", "_ = {astype}({array}(x), 'float64')\nreturn [float(v) / 2 for v in x]"),
        ("astype with a dtype string", "pass", "return [float(v) for v in {astype}({array}(x), 'float64') / 2]"),
        ("astype with the float type, halved in Python", "pass", "return [float(v) / 2 for v in {astype}({array}(x), float)]"),
        ("astype, then the library's divide", "pass", "return [float(v) for v in {divide}({astype}({array}(x), 'float64'), 2)]"),
        ("the constructor's dtype, the library's divide", "reject", "return [float(v) for v in {divide}({array}(x, dtype=float), 2)]"),
    ],
    "builtin/s0/train/0006": [  # running totals of x[i] * (i + 1), allocated with empty
        ("running totals in Python", "plain", "out = {empty}(len(x))\nacc, res = 0.0, []\nfor i, v in enumerate(x):\n"
                                              "    acc += v * (i + 1)\n    res.append(acc)\nreturn res"),
        ("empty, filled, cumsum", "pass", "out = {empty}(len(x))\nfor i in range(len(x)):\n    out[i] = x[i] * (i + 1)\n"
                                          "return [float(v) for v in {cumsum}(out)]"),
        ("products in a comprehension, library cumsum", "pass", "return [float(v) for v in {cumsum}([v * (i + 1) for i, v in enumerate(x)])]"),
        ("zeros instead of empty", "pass", "out = {zeros}(len(x))\nfor i, v in enumerate(x):\n    out[i] = v * (i + 1)\n"
                                           "return list({cumsum}(out))"),
    ],
}


def query_answers(tasks, lib) -> list[tuple[str, str, str, object]]:
    """``(name, expect, code, task)`` of :data:`QUERY_TASKS` for the tasks given."""
    return _bodies(QUERY_TASKS, tasks, lib)
