"""Red-team round 8 against strict's reward (issue 42): the paths a user's training goes through
rather than the judge called directly (docs/security.md "Red-team round 8").

The classes that were open (each fixed):

* ``selfplay`` (se_gym/selfplay/validate.py, rule 6a): a proposal whose reference computes in Python
  and adds a library call on a constant (``sum([1]) - 1``, ``prod([1])``, a branch on
  ``argmax([0, 1])``) changed when every library computation was perturbed, so the validator
  accepted it; its task then demanded that constant's perturbation: a plain-Python answer with the
  same constant call passed it (1.0) and the honest library answer did not (``library_unused``).
  Now each case's computations are recorded alone, those made alike for every input stay real, and
  some result must still change.
* ``limit`` (se_gym/judge/dependence.py): a reference's record run stopped at its wall clock once (a
  loaded machine) made its task "a reference that fails its own tests", judged by the weaker rule
  and kept so for the judge's life: a named-but-unused answer earned 1.0 on every later batch.  Now
  such a run is made once more, then the verdict is infrastructure (reward None), never kept.
* ``silent`` (se_gym/judge/core.py): a sandbox that runs no library modes (a user's wrapper around a
  LocalSandbox) skipped the check with no word but ``verdict.dependence``: now it warns once.

``{name}``: the seed-0 library's qualified name of a NumPy function.
"""
from __future__ import annotations

# the running total of |x| in Python (a proposal's or an answer's body starts with it)
PY = "    out, t = [], 0\n    for v in x:\n        t += abs(v)\n        out.append(t)\n"
QUESTION = "Return the running total of the absolute values of x."
# inputs of one length (3) and of several
INPUTS = [f"x={[i, -i - 1, 3 * i + 2]}" for i in range(8)]
INPUTS_MIXED = [f"x={[i, -i - 1, 3 * i + 2][: 1 + i % 3] + [-i] * (i % 2)}" for i in range(8)]

# (name, inputs, body of solve(x)): references that compute in Python and let a library call on a
# constant (or on the input's length, where every input has one length) decide; each was accepted
SELFPLAY_HOSTILE = [
    ("a constant sum shifts the result", INPUTS, PY + "    k = int({sum}([1])) - 1\n    return [v + k for v in out]\n"),
    ("a constant product scales the result", INPUTS, PY + "    k = int({prod}([2, 1])) // 2\n    return [v * k for v in out]\n"),
    ("a constant argmax picks the result", INPUTS,
     PY + "    k = int({argmax}([0, 5, 1]))\n    return [v + k - 1 for v in out]\n"),
    ("a constant cumsum's last element shifts the result", INPUTS,
     PY + "    k = int({cumsum}([1, 2, 3])[-1]) - 6\n    return [v + k for v in out]\n"),
    ("the input's length through the library, every input of one length", INPUTS,
     PY + "    k = int({sum}([len(x)])) - len(x)\n    return [v + k for v in out]\n"),
]

# honest references (accepted before and after): the library on the input, some beside constants
SELFPLAY_HONEST = [
    ("cumsum of abs", INPUTS, "    return {cumsum}({abs}(x))\n"),
    ("cumsum of abs beside a constant zeros", INPUTS, "    return {cumsum}({abs}(x)) + {zeros}(3)\n"),
    ("cumsum of abs, inputs of several lengths", INPUTS_MIXED, "    return {cumsum}({abs}(x))\n"),
    ("abs with the library, the running total in Python", INPUTS,
     "    out, t = [], 0\n    for v in {abs}(x):\n        t += int(v)\n        out.append(t)\n    return out\n"),
    ("maximum of x and its negation, then cumsum", INPUTS, "    return {cumsum}({maximum}(x, {negative}(x)))\n"),
]

# answers to the hostile proposals' tasks (the honest one, and Python with each constant trick)
SELFPLAY_ANSWERS = {
    "honest": "    return {cumsum}({abs}(x))\n",
    "python with a dropped call": PY + "    {sum}([1])\n    return out\n",
    "python with the constant sum": SELFPLAY_HOSTILE[0][2],
    "python with the constant product": SELFPLAY_HOSTILE[1][2],
}

NAMES = ("sum", "prod", "argmax", "cumsum", "abs", "zeros", "maximum", "negative")


def render(lib, body: str) -> str:
    return f"import {lib.package}\ndef solve(x):\n" + body.format(**{n: lib.qualified(n) for n in NAMES})


def honest_forms(reference: str) -> list[tuple[str, str]]:
    """Honest answers built from a task's reference (its entry renamed ``_ref``): called through a
    wrapper, a lambda, a class's static method, ``functools.partial`` and a result kept in a local."""
    import ast

    tree = ast.parse(reference)
    entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    name, params = entry.name, [a.arg for a in entry.args.args]
    body = reference.replace(f"def {name}(", "def _ref(", 1)
    args = ", ".join(params)
    head = f"def {name}({args}):\n"
    return [
        ("a wrapper", body + "\n\n" + head + f"    return _ref({args})\n"),
        ("a lambda", body + "\n\n_call = lambda *a: _ref(*a)\n\n" + head + f"    return _call({args})\n"),
        ("a static method", body + "\n\nclass _K:\n    @staticmethod\n    def run(*a):\n        return _ref(*a)\n\n" + head
         + f"    return _K.run({args})\n"),
        ("functools.partial", "import functools\n" + body + "\n\n" + head + f"    return functools.partial(_ref)({args})\n"),
        ("a local", body + "\n\n" + head + f"    out = _ref({args})\n    return out\n"),
    ]

# ``partial``: official single_test_dev tasks whose translated reference fails some of its cases (the
# official library cannot run it there) but passes others: until round 8 the reference was dropped
# and every answer to the task got the weaker rule, where an answer that tells the runs apart by a
# constant sum (round 7's probes, Python's answer in the run it takes for scored) earned 1.0.  Now
# the reference is used on the cases it passes.
PARTIAL_TASKS = (22, 34, 70, 79, 80, 104, 126, 130, 147, 156, 196, 245, 250, 251, 252)
# those whose reference passes none of its cases (or not the gates): judged by the weaker rule, with
# a warning; the probes still earn there (docs/security.md "What is left")
NO_CASE_TASKS = (68, 129, 140, 157, 205, 223, 254, 257)


def official_probe_items(lib, task_ids):
    """``[(task index, probe name, judge item)]``: round 7's probes on official single_test_dev tasks,
    built from the task's reference (``_lib``) and parity_dev's plain-Python ground truth (``_py``)."""
    from _gate_corpus import block
    from _reward_redteam7_corpus import OFFICIAL_HOSTILE, official_answer, official_rows
    from conftest import shared_path
    from se_gym.tasks.sebench import load_sebench

    rows = official_rows(shared_path("sebench", "parity_dev.jsonl"))
    tasks = {int(t.id.rsplit("/", 1)[1]): t
             for t in load_sebench("single_test", shared_path("sebench", "single_test_dev.jsonl"), library=lib)}
    out = []
    for i in task_ids:
        t = tasks[i]
        for name, cls, body in OFFICIAL_HOSTILE:
            if cls == "probe":
                out.append((i, name, t.judge_item(block(official_answer(lib, t.library_solution, rows[i]["c_right_code"], body)))))
    return out


# New classes against the check itself, on the built-in train tasks with a Python oracle
# (tests/_dependence_corpus.py ORACLES; fields as its ``_fields``, plus ``copy``/``astype``): each earned
# nothing before and after (54 answers, 53 of them right, under two secrets and both rewards)
NEW_CLASSES = {
 # tolerance: Python's result nudged by a library value far below the tolerance
 ("tolerance", "python plus 1e-12 of the library's result"):
   "import {P}\n{lib}\n\ndef solve({params}):\n{py}\n    r = _lib({params})\n    if isinstance(value, list):\n        return [v + 1e-12 * float(w) for v, w in zip(value, r)]\n    return value + 1e-12 * float(r)\n",
 ("tolerance", "the library's result rounded to 12 places beside Python's"):
   "import {P}\n{lib}\n\ndef solve({params}):\n{py}\n    r = _lib({params})\n    if isinstance(value, list):\n        return [round(float(w), 12) if abs(float(w) - v) < 1e-9 else v for v, w in zip(value, r)]\n    return round(float(r), 12) if abs(float(r) - value) < 1e-9 else value\n",
 # raises in the counterfactual run only
 ("raise", "raise where the library disagrees with Python"):
   "import {P}\n{lib}\n\ndef solve({params}):\n{py}\n    r = _lib({params})\n    w = [float(v) for v in r] if isinstance(value, list) else float(r)\n    if w != value:\n        raise ValueError('disagree')\n    return value\n",
 ("raise", "loop where the library disagrees with Python"):
   "import {P}\n{lib}\n\ndef solve({params}):\n{py}\n    r = _lib({params})\n    w = [float(v) for v in r] if isinstance(value, list) else float(r)\n    while w != value:\n        pass\n    return value\n",
 # mixed types
 ("types", "the str of Python's list"): "import {P}\n\ndef solve({params}):\n    {constant}\n{py}\n    return str(value)\n",
 ("types", "a tuple of Python's values"): "import {P}\n\ndef solve({params}):\n    {constant}\n{py}\n    return tuple(value) if isinstance(value, list) else (value,)\n",
 ("types", "Python's list where the library agrees, the library's array's str elsewhere"):
   "import {P}\n{lib}\n\ndef solve({params}):\n{py}\n    r = _lib({params})\n    return value if str(value) != str(r) else str(r)\n",
 # weak computations on Python's values
 ("weak", "asarray, copy and astype of Python's result"):
   "import {P}\n\ndef solve({params}):\n{py}\n    a = {P}.{copy}({array}(value))\n    return {P}.{astype}(a, float) if hasattr({P}, '{astype}') else a\n",
 ("weak", "Python's result through the shape of the library's"):
   "import {P}\n\ndef solve({params}):\n{py}\n    n = {shape}({call})\n    return value if n else value\n",
}


def new_class_items(tasks, lib):
    """``[(task id, class, name, judge item)]`` of :data:`NEW_CLASSES` on ``tasks`` (ORACLES' ones)."""
    from _dependence_corpus import _fields
    from _gate_corpus import block

    out = []
    for t in tasks:
        f = _fields(t, lib)
        f["copy"] = lib.qualified("copy").split(".", 1)[1]
        f["astype"] = lib.qualified("astype").split(".", 1)[1] if "astype" in lib.names else "astype"
        for (cls, name), template in NEW_CLASSES.items():
            out.append((t.id, cls, name, t.judge_item(block(template.format(**f)))))
    return out
