"""Whose an ``oracle`` failure is: the suite's own data, or se-gym's.

A task's reference (the library solution se-gym translated from the suite's NumPy reference) can
fail because se-gym's library, translation or judge is wrong (an error: ours to fix), or because the
suite's data disagree with themselves: its NumPy reference, run with NumPy, does not give the
expected outputs the task carries (SE-Bench's FORMATS.md knows 28 such rows of 259), or it computes
with no library function at all, so the official gate refuses it.  The second kind is the data's: it
is reported as ``oracle``/``data``, a warning that names the case and both values, and se-gym does not
change the suite.  So is a suite's own reference whose results do not depend on the library
(``dependence``/``data``); in a suite se-gym generated, both stay errors: the generator is ours.
Deciding it runs the NumPy reference once more, in the sandbox, for the tasks whose oracle failed (a
handful), never in this process.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from ..judge import compare
from . import checks

MARK = "@@ se-gym numpy reference @@ "  # (no control character: str.splitlines splits at some)
# the gates' words for a reference that computes with no library function (judge/gates.py: the
# official gate's and strict's)
_NO_LIBRARY = (re.compile(r"^the entry function \S+ (calls no \S+ function|does not use \S+, directly or through the code it names)$"),
               re.compile(r"^the only \S+ call of \S+ is the array constructor$"))
_PROGRAM = """
import json
import numpy as np
try:
    np.set_printoptions(legacy="1.25")  # scalars print as plain numbers, as the data's NumPy printed them
except (TypeError, ValueError):
    pass
SOURCE, ENTRY, INPUTS = {source!r}, {entry!r}, {inputs!r}
out = []
scope = {{"np": np, "numpy": np, "__name__": "se_gym_numpy_reference"}}
try:
    exec(compile(SOURCE, "<reference>", "exec"), scope)
    for text in INPUTS:
        try:
            out.append(["v", str(eval(ENTRY + "(" + text + ")", dict(scope)))])
        except Exception as exc:
            out.append(["e", type(exc).__name__ + ": " + str(exc)[:120]])
except Exception as exc:
    out = [["e", type(exc).__name__ + ": " + str(exc)[:120]]] * len(INPUTS)
print({mark!r} + json.dumps(out))
"""


# tasks whose reference se-gym wrote (its generator's, self-play's): their defects are se-gym's
_GENERATED = ("builtin", "selfplay")


def _generated(task: Any) -> bool:
    return str(getattr(task, "source", "")).startswith(_GENERATED)


def program(task: Any) -> str | None:
    """The program that runs ``task``'s NumPy reference on its cases with NumPy (None: it has none).
    A reference written without NumPy runs as it is."""
    source = getattr(task, "reference_solution", "") or ""
    m = re.match(r"\s*def\s+([A-Za-z_]\w*)", getattr(task, "function_name", "") or "")
    if not source.strip() or m is None:
        return None
    return _PROGRAM.format(source=source, entry=m.group(1), inputs=[c.input for c in task.test_cases], mark=MARK)


def outputs(stdout: str) -> list | None:
    """What :func:`program` printed: per case ``["v", printed]`` or ``["e", why]`` (None: nothing)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            try:
                got = json.loads(line[len(MARK):])
            except ValueError:
                return None
            return got if isinstance(got, list) else None
    return None


def _agrees(profile: str, got: str, expected: str) -> bool:
    """Whether NumPy's printed result ``got`` passes ``expected`` under ``profile``'s comparison."""
    if profile == "sebench":
        return compare.official_case_ok(got, expected)
    ok_g, g = compare.expected_value(got)
    ok_e, e = compare.expected_value(expected)
    return compare.structural_ok(g, e) if ok_g and ok_e else got.strip() == expected.strip()


def classify(result: checks.Result, verdicts: Mapping[tuple[str, str], Any], task: Any, numpy_outputs: Sequence | None) -> checks.Result:
    """``result`` (a failed ``oracle``) as the suite's warning where every failing verdict is explained
    by the suite: NumPy's own run of the reference misses an expected output under that verdict's
    profile, or a gate refused a reference that calls no library function (``oracle``/``data``), or
    only the sebench profile fails where NumPy gives the outputs and strict passes: the official
    library's own behaviour, which that profile keeps (``oracle``/``official``).  Otherwise (and in a
    suite se-gym generated) ``result`` unchanged.

    Args:
        result: the task's ``oracle`` result.
        verdicts: (profile, form) -> the reference's verdict.
        task: the task.
        numpy_outputs: :func:`outputs` of its NumPy reference's run (None: it did not run).
    """
    if result.result != "fail" or result.severity != "error" or not numpy_outputs or _generated(task):
        return result
    cases = task.test_cases
    if len(numpy_outputs) != len(cases):
        return result
    strict_passes = any(p == "strict" for p, _ in verdicts) and all(v.reward == 1.0 for (p, _), v in verdicts.items() if p == "strict")
    why, category = "", "data"
    for (profile, _form), v in sorted(verdicts.items()):
        if v.reward == 1.0:
            continue
        status = getattr(v.status, "value", v.status)
        if status == "static_gate" and any(w.match(v.detail or "") for w in _NO_LIBRARY):
            why = why or f"the suite's reference computes with no library function ({v.detail})"
            continue
        miss = next((k for k, (kind, got) in enumerate(numpy_outputs) if kind != "v" or not _agrees(profile, got, cases[k].output)), None)
        if miss is None and profile == "sebench" and strict_passes:
            # the official library's own behaviour, which the sebench profile keeps hole for hole
            why, category = why or (f"the official library cannot run the suite's reference ({status}: {v.detail}); "
                                "NumPy and strict give the task's outputs"), "official"
            continue
        if miss is None:
            return result  # NumPy gives the data: the failure is se-gym's
        how, got = numpy_outputs[miss]
        said = got if how == "v" else f"raises {got}"
        why = why or (f"the suite's data disagree: its NumPy reference, run with NumPy, gives {said[:80]!r} on case {miss} "
                      f"where the task expects {cases[miss].output[:80]!r} (under {profile}'s comparison)")
    return checks.failed("oracle", why, category) if why else result


def dependence_of(task: Any, result: checks.Result) -> checks.Result:
    """A failed ``dependence`` (the reference's results do not depend on the library) as the data's
    warning where the reference is the suite's own, not one se-gym generated.

    Args:
        task: the task.
        result: its ``dependence`` result.
    """
    if result.result != "fail" or result.severity != "error" or _generated(task):
        return result
    return checks.failed("dependence", f"the suite's own reference computes its results without the library: {result.detail}", "data")
