"""The checks of ``se-gym validate``, one function each, from the judge's verdicts to a result.

Each check gives a :class:`Result`: ``pass``, ``fail`` or ``not_run``, with a severity from
:data:`SEVERITY` (the versioned policy: the report carries it) and a one-line detail.  The functions
here run nothing: :mod:`se_gym.validate.run` sends the probes (:mod:`se_gym.validate.probes`) through
``Judge.judge_many`` and hands the verdicts over.  Self-play's proposal validation and the tests call
the same functions.
"""
from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..judge.parsing import parse  # (takes turns with the judge's: judge/parsing.py)

CHECKS = ("oracle", "floor", "dependence", "determinism", "leakage")
RUN_CHECKS = ("containment", "determinism")
RESULTS = ("pass", "fail", "not_run")
SEVERITIES = ("error", "warning", "info")
# (check, what happened) -> severity.  Version 2 of the policy (2: oracle/data, oracle/official, dependence/data).
SEVERITY: Mapping[tuple[str, str], str] = {
    ("oracle", "fail"): "error",  # the reference does not pass: the task cannot be solved as written
    ("oracle", "no_reference"): "warning",  # nothing to replay: the task cannot be checked
    # the reference fails and the suite's own data say why: its NumPy reference, run with NumPy, misses
    # an expected output, or it computes with no library function (validate/data.py)
    ("oracle", "data"): "warning",
    # only the sebench profile fails: the official library's own behaviour (kept hole for hole)
    ("oracle", "official"): "warning",
    ("floor", "fail"): "error",  # a do-nothing answer earns reward
    ("dependence", "fail"): "error",  # the reference's results do not depend on the library
    # ... and the reference is the suite's own (an official or a user's file), not one se-gym generated
    ("dependence", "data"): "warning",
    ("dependence", "unsupported"): "info",  # the judge has no dependence check yet
    ("dependence", "no_oracle"): "info",  # the reference does not pass: its oracle error says so
    ("determinism", "fail"): "error",
    ("determinism", "unsampled"): "info",  # verdicts compared on a sample of the tasks only
    ("leakage", "fail"): "error",
    ("containment", "fail"): "error",
    ("containment", "unavailable"): "info",  # a sandbox backend this machine does not have
    ("infrastructure", "fail"): "error",  # the sandbox failed: nothing could be concluded
}
POLICY_VERSION = 2


@dataclass(frozen=True)
class Result:
    """What one check found about one task (or about the run).

    Attributes:
        result: ``pass``, ``fail`` or ``not_run``.
        severity: ``error``, ``warning`` or ``info`` (None for a pass): from :data:`SEVERITY`.
        detail: one line: what failed, or why it did not run.
    """

    result: str
    severity: str | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """The report's form: ``{"result"}``, with ``"severity"`` and ``"detail"`` when they are set."""
        out: dict[str, Any] = {"result": self.result}
        if self.severity:
            out["severity"] = self.severity
        if self.detail:
            out["detail"] = self.detail
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Result":
        """The inverse of :meth:`to_json`.

        Args:
            d: a check's record from a report.
        """
        return cls(d["result"], d.get("severity"), d.get("detail", ""))


PASS = Result("pass")


def failed(check: str, detail: str, kind: str = "fail") -> Result:
    return Result("fail", SEVERITY[(check, kind)], _one_line(detail))


def not_run(check: str, kind: str, detail: str) -> Result:
    return Result("not_run", SEVERITY[(check, kind)], _one_line(detail))


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_infrastructure(verdict: Any) -> bool:
    return bool(getattr(verdict, "infrastructure", False))


# -- oracle -----------------------------------------------------------------------------------------
def _rectangular(value: Any) -> bool:
    """A list an array can hold as it is: nested to one depth with equal lengths, of numbers only
    (or of booleans only)."""
    leaves: list[Any] = []

    def shape(v: Any) -> Any:
        if isinstance(v, list):
            inner = [shape(x) for x in v]
            if any(s is None for s in inner) or len({repr(s) for s in inner}) > 1:
                return None
            return (len(v), inner[0] if inner else ())
        if isinstance(v, (bool, int, float, complex)):
            leaves.append(v)
            return ()
        return None

    if shape(value) is None:
        return False
    bools = [isinstance(v, bool) for v in leaves]
    return all(bools) or not any(bools)


def list_like(task: Any, array_type: str) -> bool:
    """Whether every expected output is a list an array could hold as it is (then the reference must
    pass returning either; a scalar, a ragged or a mixed output allows the form it is written in)."""
    from ..judge.compare import expected_value

    for case in task.test_cases:
        ok, value = expected_value(case.output, array_type, numpy_wraps=True)
        if not ok or not isinstance(value, list) or not _rectangular(value):
            return False
    return True


def _wraps(value: Any) -> bool:
    """Whether NumPy prints the array of ``value`` with a row wrapped over lines (more lines than rows)."""
    import math

    import numpy as np

    arr = np.array(value)
    lines = [ln for ln in str(arr).splitlines() if ln.strip()]
    return len(lines) > (math.prod(arr.shape[:-1]) if arr.ndim > 1 else 1)


def forms_allowed(task: Any, profile: str, array_type: str) -> tuple[str, ...]:
    """The reference forms a profile must accept for ``task``: the form as written, and both a list
    and an array answer when every expected output is one.  Under ``sebench`` SE-Bench reads a row
    NumPy wrapped over lines as several rows: a list and an array print equal there only when
    neither the expected print nor the array's wraps a row, or the output is se-gym's own (read
    canonically, ``TestCase.canonical``)."""
    from ..judge.compare import expected_value

    if not list_like(task, array_type):
        return ("native",)
    if profile == "sebench":
        for c in task.test_cases:
            if c.canonical:
                continue
            if "\n" in c.output.strip() or _wraps(expected_value(c.output, array_type, numpy_wraps=True)[1]):
                return ("native",)
    return ("native", "list", "array")


def printed_form(verdict: Any) -> str | None:
    """``"list"`` or ``"array"``: the container the answer returned, read from its printed results."""
    got = [c.got for c in verdict.cases if c.got]
    if not got or not all(g.lstrip().startswith("[") for g in got):
        return None
    return "list" if any("," in g for g in got) or all(g.strip() == "[]" for g in got) else "array"


def oracle(verdicts: Mapping[tuple[str, str], Any], has_reference: bool) -> Result:
    """``verdicts``: (profile, form) -> the reference's verdict in that form.  Every one must pass."""
    if not has_reference:
        return not_run("oracle", "no_reference", "the task has no reference solution to replay")
    infra = [(k, v) for k, v in verdicts.items() if is_infrastructure(v)]
    if infra:
        (profile, form), v = infra[0]
        return failed("infrastructure", f"{profile}/{form}: {v.detail}")
    bad = [(k, v) for k, v in sorted(verdicts.items()) if v.reward != 1.0]
    if bad:
        (profile, form), v = bad[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        how = {"native": "as written", "list": "returning a list", "array": "returning an array"}.get(form, form)
        return failed("oracle", f"the reference {how}, under {profile}: {v.status.value}: {v.detail}{more}")
    return PASS


# -- floor ------------------------------------------------------------------------------------------
def floor(verdicts: Mapping[str, Any]) -> Result:
    """``verdicts``: probe name -> its strict verdict.  Every probe must earn nothing."""
    infra = [(k, v) for k, v in verdicts.items() if is_infrastructure(v)]
    if infra:
        return failed("infrastructure", f"{infra[0][0]}: {infra[0][1].detail}")
    bad = [(k, v) for k, v in verdicts.items() if v.reward > 0]
    if bad:
        name, v = bad[0]
        return failed("floor", f"the {name} probe earned reward {v.reward:g} under strict ({v.status.value}: {v.detail})")
    return PASS


# -- library dependence -----------------------------------------------------------------------------
UNUSED = "library_unused"  # the verdict status of an answer whose results do not depend on the library


def dependence(oracle_verdict: Any, key_verdict: Any, supported: bool, why: str = "") -> Result:
    """The reference's results depend on the library at run time (the judge's dependence check ran
    on it, found a case whose result changes with the library's, and did not call it
    ``library_unused``) and the answer key with a thrown-away library call earns nothing."""
    if not supported:
        return not_run("dependence", "unsupported", why or "judge has no dependence check yet")
    for v in (oracle_verdict, key_verdict):
        if v is not None and is_infrastructure(v):
            return failed("infrastructure", v.detail)
    if oracle_verdict is not None and _status(oracle_verdict) == UNUSED:
        return failed("dependence", f"the reference's results do not depend on the library ({oracle_verdict.detail})")
    if oracle_verdict is None or oracle_verdict.reward != 1.0:
        return not_run("dependence", "no_oracle", "the reference does not pass under strict: nothing to check")
    found = getattr(oracle_verdict, "dependence", None)
    if not found or not found.get("ran"):
        return failed("dependence", "the judge did not run its dependence check on the reference")
    cases = [str(c) for c in found.get("cases") or ()]
    if cases and all(c in ("independent", "raised") for c in cases):
        return failed("dependence", "no case's result changes when the library's results do")
    if key_verdict is not None and key_verdict.reward > 0:
        return failed("dependence", f"an answer key with a thrown-away library call earned {key_verdict.reward:g} ({key_verdict.status.value})")
    return PASS


def _status(verdict: Any) -> str:
    return getattr(verdict.status, "value", str(verdict.status))


# -- determinism ------------------------------------------------------------------------------------
def verdict_digest(verdict: Any) -> str:
    """A digest of everything a verdict says about the answer (not its timings)."""
    d = verdict.to_dict()
    for k in ("wall_s", "judge_s", "extra"):
        d.pop(k, None)
    return hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=True, default=str).encode()).hexdigest()[:16]


def text_digest(*texts: str) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


def determinism(mine: Mapping[str, str], theirs: Mapping[str, str] | None, sampled: bool) -> Result:
    """``mine``/``theirs``: what -> digest, in this process and in the other one (None: the other
    process did not get to this task)."""
    if theirs is None:
        return failed("determinism", "the second process did not produce this task")
    diff = [k for k in mine if k in theirs and mine[k] != theirs[k]]
    missing = [k for k in mine if k not in theirs]
    if diff:
        return failed("determinism", f"differs in another process: {', '.join(diff)}")
    if missing:
        return failed("determinism", f"the second process did not produce: {', '.join(missing)}")
    if not sampled:
        return Result("pass", None, "tasks and prompts compared (verdicts on a sample of tasks)")
    return PASS


# -- leakage ----------------------------------------------------------------------------------------
MIN_NEEDLE = 8  # shorter outputs or inputs ("3", "True", "[1, 2]") appear in any text by chance


def _arguments(input_text: str) -> list[str]:
    """The source of each argument of a test input (``x1=[1, 2], x2=3`` -> ``[1, 2]``, ``3``)."""
    try:
        call = parse(f"f({input_text})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    src = f"f({input_text})"
    out = []
    for node in [*getattr(call, "args", []), *(k.value for k in getattr(call, "keywords", []))]:
        seg = ast.get_source_segment(src, node)
        if seg:
            out.append(seg)
    return out


def _code_lines(code: str) -> list[str]:
    """The lines of ``code`` that are code (not comments, docstrings, imports or the signature)."""
    prose: set[int] = set()
    try:
        for node in ast.walk(parse(code)):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                prose.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    out = []
    for n, line in enumerate(code.splitlines(), 1):
        s = line.strip()
        if n in prose or len(s) < 16 or s.startswith(("import ", "from ", "def ", "#", "@", "return None")):
            continue
        out.append(s)
    return out


NEEDLE_KINDS = ("output", "input", "code")


def needles(task: Any, visible: int, kinds: Sequence[str] = NEEDLE_KINDS) -> list[tuple[str, str]]:
    """(what, text) the observations must not contain: the hidden cases' expected outputs
    (``output``) and inputs, and each argument of them (``input``), and the lines of the reference
    solutions (``code``).  Short texts, and texts the visible cases or the example show anyway, are
    left out."""
    cases = list(task.test_cases)
    shown = cases[:visible] + [task.example]
    shown_text = "\n".join(t for c in shown for t in (c.input, c.output))
    out: list[tuple[str, str]] = []
    for i, c in enumerate(cases[visible:], start=visible):
        pins = [("expected output", c.output.strip())] if "output" in kinds else []
        if "input" in kinds:
            pins += [("input", c.input.strip())] + [("input argument", a) for a in _arguments(c.input)]
        for what, text in pins:
            if what == "input argument" and not any(ch.isdigit() for ch in text):
                continue  # float('inf'), 'mean', True: words any question may use
            if len(text) >= MIN_NEEDLE and text not in shown_text:
                out.append((f"hidden case {i} {what}", text))
    for what, code in (("reference", task.reference_solution), ("library solution", task.library_solution)) if "code" in kinds else ():
        out += [(f"{what} line", s) for s in _code_lines(code or "")]
    seen: set[str] = set()
    return [(w, t) for w, t in out if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]


def leakage(task: Any, observations: Iterable[tuple[str, str]], visible: int, allowed: str = "",
            kinds: Sequence[str] = NEEDLE_KINDS) -> Result:
    """``observations``: (where, text) of everything an agent is shown for ``task`` (prompts of each
    book, chat messages, multi-turn feedback; the agent's own answers cut out).  ``allowed``: text
    that holds a needle by coincidence and not by the task (the library's docs).  ``kinds``: what
    to look for (:func:`needles`)."""
    found = []
    pins = [(w, t) for w, t in needles(task, visible, kinds) if t not in allowed]
    for where, text in observations:
        for what, needle in pins:
            if needle in text:
                found.append(f"{what} {needle[:40]!r} in {where}")
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return failed("leakage", found[0] + more)
    return PASS


def solution_leak(task: Any) -> str | None:
    """Why a task's own question gives its answer away (a hidden case's expected output, a line of
    its reference), or None: self-play's proposal validation refuses such a task (``leaks_solution``)."""
    r = leakage(task, [("the question", task.query)], visible=1, kinds=("output", "code"))
    return r.detail if r.result == "fail" else None


# -- containment ------------------------------------------------------------------------------------
def containment(verdict: Any, host_seen: Sequence[str]) -> Result:
    """The probe program's verdict (its printed result names each wall) and what the host saw
    (a connection on its socket, a file written in its folder)."""
    from .probes import CONTAINED

    if is_infrastructure(verdict):
        return failed("infrastructure", verdict.detail)
    got = next((c.got for c in verdict.cases if c.got), None)
    opened = [p for p in (got or "").split(";") if p.endswith("=open")]
    if host_seen or opened or verdict.reward != 1.0:
        what = ", ".join([*opened, *host_seen]) or f"the probe did not report ({verdict.status.value}: {verdict.detail})"
        return failed("containment", f"a program got through: {what}" if (opened or host_seen) else what)
    return Result("pass", None, CONTAINED)


def merge(results: Iterable[Result]) -> Result:
    """The worst of several results of one check (a fail before a not_run before a pass)."""
    rank = {"fail": 0, "not_run": 1, "pass": 2}
    results = list(results)
    return min(results, key=lambda r: (rank[r.result], SEVERITIES.index(r.severity) if r.severity else 3)) if results else PASS
