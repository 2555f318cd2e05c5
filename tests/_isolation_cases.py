"""Hostile answers of issue 42 (class 2: the harness's secrets in the answer's reach), shared by
tests/test_strict_isolation.py and tests/ray_sandbox_cases.py.

Each returns a WRONG value computed with the library and wins only if its route works: see ROUTES.
"""
from __future__ import annotations

from _gate_corpus import CASES, block
from se_gym.judge import gates


def head(lib) -> str:
    """What every answer below has at hand, by names built at run time (the permissive gate cannot
    see them): the real builtins, sys and its modules, os, json, the library's client module, and a
    frame handed to a signal handler (no audit event covers either: the worker left ``signal``
    loaded, and _imp makes ``_signal`` anew otherwise)."""
    P = lib.package
    return (f"import {P}\n"
            "def G(o, name):\n    return getattr(o, name.replace('~', ''))\n"
            "B = G(print, '__se~lf__')\n"
            "IMP = G(B, '__imp~ort__')\n"
            "SYS = IMP('sys')\n"
            "MODS = G(SYS, 'mod~ules')\n"
            "OS = MODS['os']\n"
            "JSON = MODS['json']\n"
            f"C = G({P}, '_cli~ent')\n"
            "SEEN = []\n"
            "KEEP = []\n"
            "def right(v):\n    return [abs(t) for t in v]\n"
            "def frame_by_signal(busy=None):\n"
            "    got = []\n"
            "    S = MODS.get('signal') or MODS['_imp'].create_builtin(MODS['_frozen_importlib'].ModuleSpec('_signal', None))\n"
            "    S.signal(getattr(S, 'SIGALRM', 14), lambda sig, fr: got.append(fr))\n"
            "    S.setitimer(0, 0.0002, 0.0002)  # (ITIMER_REAL)\n"
            "    n = 0\n"
            "    while not got and n < 3000000:\n"
            "        n += 1\n"
            "        if busy is not None:\n"
            "            busy()\n"
            "    S.setitimer(0, 0)\n"
            "    return got\n"
            "def frames(f):\n"
            "    while f is not None:\n"
            "        yield f\n"
            "        f = G(f, 'f_b~ack')\n")


def forging(lib, setup: str, ret: str = "wrong") -> str:
    """An answer that returns a WRONG value and wins only if its ``setup`` changed what the judge reads."""
    body = "\n".join("    " + line for line in setup.splitlines())
    return block(f"{head(lib)}def solve(x):\n    SEEN.append(list(x))\n    wrong = {lib.qualified('abs')}(x) + 1\n{body}\n    return {ret}\n")


def routes(lib) -> dict[str, str]:
    ARR = lib.qualified("array")
    return {
        # the nonce from the harness's frame, reached from a signal handler's frame; then records of the
        # right values on fd 3 and an exit before the harness writes its own
        "signal handler steals the nonce and forges the channel": (
            "if len(SEEN) == 2:\n"
            "    for f in frames((frame_by_signal() or [None])[0]):\n"
            "        for v in list(G(f, 'f_loc~als').values()):\n"
            "            if type(v) is str and len(v) == 32 and set(v) <= set('0123456789abcdef'):\n"
            "                recs = [{'n': v, 'i': i, 'p': str(right(s)), 'v': right(s)} for i, s in enumerate(SEEN)]\n"
            "                OS.write(3, ''.join(JSON.dumps(r) + '\\n' for r in recs + [{'n': v, 'done': 2}]).encode())\n"
            "                OS._exit(0)"),
        # the harness's list of results, rewritten from a signal handler's frame (the earlier cases'
        # entries: the last case is appended after it returns)
        "signal handler rewrites the results list": (
            "for f in frames((frame_by_signal() or [None])[0]):\n"
            "    L = G(f, 'f_loc~als')\n"
            "    if type(L.get('outcomes')) is list:\n"
            "        for k, o in enumerate(L['outcomes']):\n"
            "            L['outcomes'][k] = (True, right(SEEN[k]))"),
        # the wall's own state, from a handler that lands inside the audit hook: its re-entry flag set,
        # every event passes, and NumPy is imported into the answer's process
        "signal handler switches the wall off": (
            "hits = frame_by_signal(lambda: id(x))\n"
            "for f in frames(hits[0] if hits else None):\n"
            "    L = G(f, 'f_loc~als')\n"
            "    if 'state' in L and 'ROOTS' in L:\n"
            "        L['state'][2] = 1\n"
            "        np = IMP('numpy')\n"
            "        wrong = np.abs(np.asarray(x)).tolist()"),
        # answer code run by the harness after the cases: the client's request function, rebound; the
        # harness's flush of deferred arrays called it, and it rewrote the results the answer returned
        "a rebound client request rewrites the returned results": (
            "out = [float(v) for v in wrong]\n"
            f"{ARR}([1.0, 2.0])  # (an array made without a round trip: the harness flushes it after the cases)\n"
            "KEEP.append((out, list(x)))\n"
            "real = G(C, '_req~uest')\n"
            "def fake(op, *a):\n"
            "    if op == 'sync':  # (only the harness's flush, after the cases, asks for it)\n"
            "        for res, inp in KEEP:\n"
            "            res[:] = right(inp)\n"
            "    return real(op, *a)\n"
            "setattr(C, '_req~uest'.replace('~', ''), fake)\n"
            "wrong = out"),
        # answer code after its report: an exit handler that rewrites the arrays it returned, on the
        # library server, before the harness's process reads them there
        "an exit handler rewrites the returned arrays": (
            f"out = {ARR}(wrong)\n"
            "KEEP.append((out, list(x)))\n"
            "def fix():\n"
            "    for res, inp in KEEP:\n"
            "        res[:] = right(inp)\n"
            "if len(SEEN) == 1:\n"
            "    MODS['atexit'].register(fix)\n"
            "wrong = out"),
        # a report of its own on every pipe it holds (the harness's process reads the answer's report
        # over one), then an exit before its harness writes
        "a forged report on every pipe": (
            "if len(SEEN) == 2:\n"
            "    recs = [{'i': i, 'v': right(s)} for i, s in enumerate(SEEN)] + [{'done': 2}]\n"
            "    data = ''.join(JSON.dumps(r) + '\\n' for r in recs).encode()\n"
            "    for fd in range(3, 64):\n"
            "        try:\n"
            "            if OS.fstat(fd).st_mode & 0o170000 == 0o010000:\n"
            "                OS.write(fd, data)\n"
            "        except OSError:\n"
            "            pass\n"
            "    OS._exit(0)"),
    }


def backend_suite(lib) -> list[tuple[str, str, list, bool]]:
    """(name, answer, cases, whether it must pass) for checking a backend: the routes (none may earn
    reward), an honest answer returning an array, one returning a list, and one whose signal
    handler is refused (it returns what it saw)."""
    P, ABS, ARR = lib.package, lib.qualified("abs"), lib.qualified("array")
    out = [(name, forging(lib, setup), CASES, False) for name, setup in routes(lib).items()]
    out.append(("honest, an array", block(f"import {P}\ndef solve(x):\n    return {ABS}({ARR}(x))\n"),
                [{"input": "x=[-1.5, 2.0]", "output": "[1.5 2. ]"}, {"input": "x=[-3.0]", "output": "[3.]"}], True))
    out.append(("honest, a list", block(f"import {P}\ndef solve(x):\n    return [float(v) for v in {ABS}(x)]\n"), CASES, True))
    out.append(("honest, round 6's modules", block(  # (the harness's own os, time, datetime, logging, traceback, streams)
        f"import {P}\nimport os, time, datetime, logging, traceback, sys\nfrom types import SimpleNamespace\n"
        "log = logging.getLogger(__name__)\ndef solve(x):\n    t0 = time.perf_counter()\n    time.sleep(5)\n"
        "    cfg = SimpleNamespace(name=os.path.join('runs', 'a.txt'), day=datetime.date.today())\n"
        "    try:\n        {}['k']\n    except KeyError:\n        log.warning(traceback.format_exc())\n"
        f"    out = [float(v) for v in {ABS}(x)]\n    sys.stderr.write(cfg.name + ' ' + str(time.perf_counter() - t0) + '\\n')\n    return out\n"),
        CASES, True))
    out.append(("no signal handler", block(
        f"{head(lib)}def solve(x):\n    {ABS}(x)\n"
        "    S = MODS['_imp'].create_builtin(MODS['_frozen_importlib'].ModuleSpec('_signal', None))\n"
        "    try:\n        S.signal(10, lambda *a: None)\n        return 'installed'\n    except OSError:\n        return 'refused'\n"),
        [{"input": "x=[1]", "output": "refused"}], True))
    return out


def gamed(judge, lib, answers: dict[str, str]) -> tuple[list[str], dict]:
    """Judge ``answers`` (name -> answer) with an honest one in the batch: the lines of those that
    earned anything (or were called infrastructure), and every verdict by name.  Each must pass the
    permissive gate and reach the run time: what stops it is there."""
    for name, text in answers.items():
        assert not gates.open_check(text.split("```python\n")[1].split("```")[0], lib.package), name
    honest = block(f"import {lib.package}\ndef solve(x):\n    return [float(v) for v in {lib.qualified('abs')}(x)]\n")
    names = list(answers)
    verdicts = judge.judge_many([(answers[n], CASES, "solve") for n in names] + [(honest, CASES)])
    assert verdicts[-1].passed, f"the honest answer in the batch: {verdicts[-1].detail}"
    got = dict(zip(names, verdicts))
    assert not [n for n, v in got.items() if v.status.value == "static_gate"]  # (they all reach the run time)
    return [f"{n}: {v.status.value} reward={v.reward} ({v.detail[:160]})" for n, v in got.items()
            if v.reward > 0 or v.passed or v.infrastructure], got
