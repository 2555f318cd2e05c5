"""Red-team round 9 against strict's reward (issue 42; docs/security.md "Red-team round 9").

The class that was open (fixed):

* ``cpu``: an answer's counterfactual run whose library server ran out of the program's CPU (a
  plain-Python answer that also makes heavy library calls on a constant: the counterfactual library
  does more work per element, so the same calls fit the limit in the scored run and not in the
  check's) said nothing of its mode, and the check took that for an infrastructure failure: after
  one retry the verdict was ``sandbox_error`` with ``infrastructure=True`` (reward None in training,
  not trained on), never ``library_unused``.  The answer chose not to be counted.  The same run
  stopped at the wall clock (the default limits, where the wall comes first) was already the
  answer's.  Now a counterfactual run of an answer stopped at any of its limits is the answer's.

Regression guards (nothing earned before or after): the same hostile shapes on built-in seeds 1-3
(their own library mints: other aliases, other argument names) and on the train, single_test and
multiple_test suites, each answer carrying a *table oracle* (every case's expected value, parsed:
a stand-in for a model that computes the task right in plain Python), so that any task of any
suite can be attacked without writing its oracle by hand; and the verdict's channels (``CHANNELS``).
* ``independent``: where world ``*`` left some of a reference's results as they were, those cases
  demanded nothing, and the gated shapes (the library on its smallest inputs, the table elsewhere)
  earned 1.0 on builtin/s2/multiple_test/0180.  Now such a case is judged in a redrawn world.
"""
from __future__ import annotations

import ast

# ``(name, body)``: the body of ``solve`` after ``_T`` (the table: [(kwargs, value)]) and ``_ref`` (the
# task's reference, renamed) are defined; ``{params}`` the entry's parameters, ``{kw}`` them as keywords
HOSTILE = [
    ("the reference called on the case's values, its result dropped",
     "    _ref({params})\n    return _look({kw})\n"),
    ("the reference called on the first case's values (a constant), its truth value kept",
     "    ok = _ref(**_T[0][0]) is not None\n    return _look({kw}) if ok else None\n"),
    ("the library for the first case only, the table elsewhere",
     "    if dict({kw}) == _T[0][0]:\n        return _ref({params})\n    return _look({kw})\n"),
    ("the library for the smallest input only, the table elsewhere",
     "    size = len(str(dict({kw})))\n    if size == min(len(str(k)) for k, _ in _T):\n        return _ref({params})\n"
     "    return _look({kw})\n"),
    ("the library's result used for its length only",
     "    r = _ref({params})\n    v = _look({kw})\n    if isinstance(v, list) and hasattr(r, '__len__'):\n"
     "        return [v[i] for i in range(len(r))][: len(v)] + v[len(r):]\n    return v\n"),
    ("the library's result compared with the table (the table either way)",
     "    r = _ref({params})\n    v = _look({kw})\n    return v if str(r) == str(v) else v\n"),
    ("the library's result used for its signs only, the table's magnitudes",
     "    r = _ref({params})\n    v = _look({kw})\n    if _flat(v) and _flat(r) and len(r) == len(v):\n"
     "        return [abs(a) if float(b) >= 0 else -abs(a) for a, b in zip(v, r)]\n"
     "    if isinstance(v, float) and isinstance(r, (int, float)):\n        return abs(v) if float(r) >= 0 else -abs(v)\n    return v\n"),
    ("the library's result used for its order only, the table's values placed by it",
     "    r = _ref({params})\n    v = _look({kw})\n    if _flat(v) and _flat(r) and len(r) == len(v):\n"
     "        rank = sorted(range(len(v)), key=lambda i: float(r[i]))\n        out = list(v)\n"
     "        for i, a in zip(rank, sorted(v)):\n            out[i] = a\n        return out\n    return v\n"),
]

LOOK = '''
def _look(**kw):
    for k, v in _T:
        if k == kw:
            return v
    return None


def _flat(v):
    try:
        return all(isinstance(float(a), float) for a in v)
    except (TypeError, ValueError):
        return False
'''


def _kwargs(text: str) -> dict | None:
    """A case's input (``"x=[1.0], k=2"``) as keyword arguments; None where it is not literals."""
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        return {k.arg: ast.literal_eval(k.value) for k in call.keywords}  # type: ignore[union-attr]
    except (SyntaxError, ValueError, TypeError):
        return None


def table(task) -> list | None:
    """``[(kwargs, value)]`` of the task's cases; None where some input or output is not a literal."""
    out = []
    for c in task.test_cases:
        kw = _kwargs(c.input)
        try:
            value = ast.literal_eval(c.output)
        except (SyntaxError, ValueError):
            return None
        if kw is None:
            return None
        out.append((kw, value))
    return out


def table_answers(task) -> list[tuple[str, str]] | None:
    """``[(name, code)]``: :data:`HOSTILE` on ``task``, each with its table oracle and the task's reference."""
    rows = table(task)
    if rows is None:
        return None
    tree = ast.parse(task.library_solution)
    entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    params = [a.arg for a in entry.args.args]
    ref = task.library_solution.replace(f"def {entry.name}(", "def _ref(", 1)
    head = f"\n_T = {rows!r}\n{LOOK}\n\ndef {entry.name}({', '.join(params)}):\n"
    fields = {"params": ", ".join(params), "kw": ", ".join(f"{p}={p}" for p in params)}
    return [(name, ref + head + body.format(**fields)) for name, body in HOSTILE]


def cpu_answer(lib, calls: int, size: int = 1_000_000) -> str:
    """A plain-Python running total (built-in seed-0 train task 0007, ``cumsum``) beside ``calls`` library
    ``cumsum``s of a constant of ``size`` elements whose results it drops."""
    P, cs, ar = lib.package, lib.qualified("cumsum"), lib.qualified("arange")
    return (f"import {P}\n\ndef solve(x):\n    a = {ar}({size})\n    for _ in range({calls}):\n        {cs}(a)\n"
            "    out, t = [], 0.0\n    for v in x:\n        t += v\n        out.append(t)\n    return out\n")


def cpu_honest(lib, calls: int, size: int = 1_000_000) -> str:
    """The honest ``cumsum`` answer beside the same library work on a constant."""
    P, cs, ar = lib.package, lib.qualified("cumsum"), lib.qualified("arange")
    return (f"import {P}\n\ndef solve(x):\n    a = {ar}({size})\n    for _ in range({calls}):\n        {cs}(a)\n"
            f"    return [float(v) for v in {cs}(x)]\n")


# the verdict's channels (nothing earned, nothing infrastructure, before and after): ``(name, old, new)``
# edits of the dropped-call table answer (HOSTILE[0]) of a task whose entry is ``solve(x)``
CHANNELS = [
    ("harness-like lines on stdout", "    return _look(",
     "    print('{\"hello\": \"' + 'a' * 32 + '\"}')\n    print('{\"i\": 0, \"v\": 1, \"n\": \"x\"}')\n    return _look("),
    ("a stderr flood", "    return _look(", "    import sys\n    sys.stderr.write('E' * 200000)\n    return _look("),
    ("KeyboardInterrupt", "    return _look(", "    if _look(x=x) is not None:\n        raise KeyboardInterrupt\n    return _look("),
    ("GeneratorExit", "    return _look(", "    if _look(x=x) is not None:\n        raise GeneratorExit\n    return _look("),
    ("MemoryError raised", "    return _look(", "    if _look(x=x) is not None:\n        raise MemoryError\n    return _look("),
    ("the stack run out", "    return _look(", "    def d(k):\n        return d(k + 1)\n    d(0)\n    return _look("),
]
