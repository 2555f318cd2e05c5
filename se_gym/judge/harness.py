"""The programs the judge runs, and reading back what they report.

Two harnesses:

* :func:`official_program` is SE-Bench's harness, byte for byte: the answer's code, then
  ``import PKG``, then a main block calling the entry function once per test case, printing a
  separator and each result followed by ``#``.  The official gates inspect this text, and it is
  what runs on a backend without a result channel (the official HTTP server); that path is
  exactly as forgeable as the official judge (a program may print the separator and fake results,
  then exit).
* :func:`channel_program` is what runs on backends with a result channel (fd 3).  Trusted code runs
  first, keeps its own references to what it needs, then executes the answer's code (and the
  ``import PKG`` the official harness adds) in ``__main__``'s namespace, calls the entry function
  once per test case, and only after every case has run converts the results (printed form, and
  for ``strict`` a canonical JSON value made by trusted code) and writes them to fd 3 as JSON lines
  tagged with a per-run random nonce, followed by a final ``done`` record.  What the program prints
  is irrelevant; a run without a ``done`` record carrying the nonce is never a pass.

In profile ``strict`` the answer cannot read the nonce (no frames, code objects, files, ``os``,
private attributes: see :mod:`.gates`).  In profile ``sebench`` the answer runs with the official
freedoms, so in-process introspection could still find the nonce; printing, replacing ``print`` or
``sys.stdout``, ``atexit`` hooks and exiting early do not help it.
"""
from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Sequence

from .compare import SEPARATOR

MAX_PRINTED = 200_000  # characters of one printed result carried back
MAX_NODES = 200_000  # elements of one canonical value


def rewrite_inputs(inputs: Sequence[str], package: str, array_ctor: str) -> list[str]:
    """The official rewrite of ``np.array`` in test inputs to the library's constructor."""
    return [re.sub(r"\bnp\.array\b", f"{package}.{array_ctor}", s) for s in inputs]


def official_program(code: str, entry: str, cases: Sequence[dict], package: str = "zwc") -> str:
    """SE-Bench's harness text (``cases``: the official dicts, inputs already rewritten)."""
    ind = "    "
    out = code + f"import {package}\n" + 'if __name__== "__main__":\n'
    out += f"{ind}test_cases = {list(cases)}\n{ind}result_list = []\n"
    for c in cases:
        out += f"{ind}result_list.append({entry}({c['input']}))\n"
    out += f'{ind}print("{SEPARATOR}")\n{ind}for i in range(len(result_list)):\n'
    out += f'{ind}{ind}print(result_list[i])\n{ind}{ind}print("#")'
    return out


_PRELUDE = r'''
def __sg_harness(NONCE, SRC, CASES, PKG, STRICT):
    import builtins, json, os, sys, traceback
    _str, _repr, _type, _len, _float, _isinstance = builtins.str, builtins.repr, builtins.type, builtins.len, builtins.float, builtins.isinstance
    _exec, _eval, _compile, _BaseException, _write = builtins.exec, builtins.eval, builtins.compile, builtins.BaseException, os.write
    _dumps, _fmt_exc, _getattr_raw = json.dumps, traceback.format_exception, object.__getattribute__
    _list, _tuple, _dict, _int, _bool, _complex, _NoneType = list, tuple, dict, int, bool, complex, type(None)
    try:
        import importlib
        _Array = importlib.import_module(PKG + "._core").Array
    except _BaseException:
        _Array = None
    g = sys.modules["__main__"].__dict__

    def describe(e):
        try:
            name = _type(e).__name__
            msg = _str(e)[:2000]
        except _BaseException:
            name, msg = "Exception", "(unprintable exception)"
        try:
            tb = "".join(_fmt_exc(_type(e), e, e.__traceback__))[-4000:]
        except _BaseException:
            tb = ""
        return [name, msg, tb]

    class Rejected(Exception):
        pass

    def canon(v, budget):
        budget[0] -= 1
        if budget[0] < 0:
            raise Rejected("result too large")
        t = _type(v)
        if v is None or t is _bool or t is _int or t is _str:
            return v
        if t is _float:
            return v if v == v and v not in (_float("inf"), _float("-inf")) else {"$f": _repr(v)}
        if t is _complex:
            return {"$c": [canon(v.real, budget), canon(v.imag, budget)]}
        if t is _list:
            return [canon(x, budget) for x in v]
        if t is _tuple:
            return {"$t": [canon(x, budget) for x in v]}
        if t is _dict:
            return {"$d": [[canon(k, budget), canon(x, budget)] for k, x in v.items()]}
        if _Array is not None and t is _Array:
            return canon(_getattr_raw(v, "_data").tolist(), budget)
        raise Rejected("unsupported result type " + t.__name__)

    loaded = None
    try:
        _exec(_compile(SRC, "<answer>", "exec"), g)
    except _BaseException as e:
        loaded = describe(e)
    outcomes = []
    for i, src in enumerate(CASES):
        if loaded is not None:
            outcomes.append((False, loaded))
            continue
        try:
            outcomes.append((True, _eval(_compile(src, "<test case " + _str(i) + ">", "eval"), g)))
        except _BaseException as e:
            outcomes.append((False, describe(e)))
    lines = []
    for i, (ran, v) in enumerate(outcomes):
        rec = {"n": NONCE, "i": i}
        if not ran:
            rec["e"] = v
        else:
            if STRICT:
                try:
                    rec["v"] = canon(v, [%(max_nodes)d])
                except Rejected as r:
                    rec["r"] = r.args[0]
                except RecursionError:
                    rec["r"] = "result nested too deeply"
            if "r" in rec:
                rec["p"] = "<" + rec["r"] + ">"
            else:
                try:
                    p = _str(v)
                    rec["p"] = p if _len(p) <= %(max_printed)d else p[:%(max_printed)d]
                    if _len(p) > %(max_printed)d:
                        rec["r"] = "printed result too long"
                except _BaseException as e:
                    rec["e"] = describe(e)
        try:
            lines.append(_dumps(rec, allow_nan=False))
        except _BaseException as e:
            lines.append(_dumps({"n": NONCE, "i": i, "e": ["HarnessError", "result not serializable", ""]}))
    lines.append(_dumps({"n": NONCE, "done": _len(outcomes)}))
    data = ("\n".join(lines) + "\n").encode("utf-8", "replace")
    while data:
        data = data[_write(3, data):]
''' % {"max_nodes": MAX_NODES, "max_printed": MAX_PRINTED}


def channel_program(code: str, entry: str, inputs: Sequence[str], package: str, nonce: str, strict: bool) -> str:
    """The program run on backends with a result channel (see the module docstring)."""
    src = code + f"import {package}\n"  # the official concatenation, so syntax is judged alike
    cases = [f"{entry}({inp})" for inp in inputs]
    call = f"__sg_harness({nonce!r}, {src!r}, {cases!r}, {package!r}, {bool(strict)!r})\n"
    return _PRELUDE + "\n" + call


def new_nonce() -> str:
    return secrets.token_hex(16)


@dataclass(frozen=True)
class CaseReport:
    """What the harness reported for one test case."""

    index: int
    printed: str | None  # str(result), None when the case raised
    value: Any = None  # canonical JSON value (strict), decoded by the caller
    has_value: bool = False
    rejected: str | None = None  # why the result could not be converted
    error: tuple[str, str, str] | None = None  # (exception type, message, traceback)


@dataclass(frozen=True)
class ChannelReport:
    complete: bool
    cases: tuple[CaseReport, ...]
    forged: int  # records without our nonce (somebody else wrote to fd 3)
    malformed: int


def read_channel(channel: bytes | None, nonce: str, n_cases: int) -> ChannelReport:
    """Parse the harness's records; only records with ``nonce`` count, each case at most once."""
    if not channel:
        return ChannelReport(False, (), 0, 0)
    found: dict[int, CaseReport] = {}
    done = False
    forged = malformed = 0
    for raw in channel.split(b"\n"):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            malformed += 1
            continue
        if not isinstance(rec, dict) or rec.get("n") != nonce:
            forged += 1
            continue
        if "done" in rec:
            done = rec["done"] == n_cases and len(found) == n_cases
            continue
        i = rec.get("i")
        if not isinstance(i, int) or not 0 <= i < n_cases or i in found:
            malformed += 1
            continue
        err = rec.get("e")
        error = tuple(str(x) for x in err[:3]) if isinstance(err, list) and len(err) >= 3 else None
        found[i] = CaseReport(
            i,
            rec.get("p") if isinstance(rec.get("p"), str) else None,
            rec.get("v"),
            "v" in rec,
            rec.get("r") if isinstance(rec.get("r"), str) else None,
            error,  # type: ignore[arg-type]
        )
    cases = tuple(found[i] for i in sorted(found))
    return ChannelReport(done and len(cases) == n_cases, cases, forged, malformed)
