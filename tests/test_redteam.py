"""Red team (issue 21): answers written to game the reward, one group per class of the issue, each
with several variants, plus a small fuzzer over the allowed modules' attributes.

Every hostile answer must get reward 0 (and no ``infrastructure`` flag); honest answers judged in the
same batch keep their verdicts; the judge never raises.  ``strict`` must refuse each class; ``sebench``
keeps the official freedoms (its answers may import os, read frames...), so there only the classes
that do not need those freedoms are refused, and the judge must simply survive the rest.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import types
from dataclasses import replace

import pytest

from se_gym.judge import Judge, Status, gates
from se_gym.judge.gates import ALLOWED_MODULES, strict_check
from se_gym.library import mint

LIB = mint(7)
PKG, LINALG = LIB.package, LIB.linalg
ABS, SUM, ARR = LIB.qualified("abs"), LIB.qualified("sum"), LIB.qualified("array")
CASES = [{"input": "x=[-1, 2]", "output": "[1, 2]"}, {"input": "x=[-3]", "output": "[3]"}]
RIGHT = f"return {ABS}(x)"
WRONG = f"return {ABS}(x) + 1"  # computes something else: any pass means the reward was gamed
HONEST = f"```python\nimport {PKG}\ndef solve(x):\n    {RIGHT}\n```"


def answer(body: str, head: str = "", tail: str = "") -> str:
    """An answer that passes the official static gate (the entry function, the first one defined,
    calls the library); ``tail``: code after it (helpers, hooks)."""
    lines = "\n".join("    " + line for line in body.splitlines())
    return f"```python\nimport {PKG}\n{head}\ndef solve(x):\n{lines}\n{tail}\n```"


# ---------------------------------------------------------------------------- class 1: NumPy routes
# each computes the right result with NumPy reached past the gate (or fails trying); before issue 21
# the first four got reward 1.0
NUMPY_VIA = {
    "from enum import bltns (builtins)": ("from enum import bltns", "np = bltns.eval(\"__import__('numpy')\")"),
    "from enum import bltns as b": ("from enum import bltns as b", "np = b.exec(\"import numpy as np\", d := {}) or d['np']"),
    "enum.bltns attribute": ("import enum", "np = enum.bltns.eval(\"__import__('numpy')\")"),
    "typing.sys.modules through a from-import": ("from typing import sys as s", "np = s.modules['num' + 'py']"),
    "get_type_hints on a string annotation": (
        "from typing import get_type_hints",
        "np = get_type_hints(probe)['v']",
        "def probe(v: \"__import__('numpy')\"):\n    pass",
    ),
    "attrgetter from-import": (
        "from operator import attrgetter\nprobe = lambda: 0",
        "np = attrgetter('__globals__')(probe)['__builtins__']['__import__']('numpy')",
    ),
    "string.Formatter field walk": (
        "from string import Formatter\nprobe = lambda: 0",
        "b = Formatter().get_field('0.__globals__[__builtins__]', [probe], {})[0]\nnp = b['__import__']('numpy')",
    ),
    "type alias builds a ufunc-hook class": (
        "T = type\nK = T('K', (), {'__array_ufunc__': lambda self, uf, method, *a, **k: uf})",
        "np_abs = " + ABS + "(K())\nreturn np_abs(x).tolist()\nnp = None",
    ),
    "type of type builds an array_function class": (
        "M = type(int)\nK = M('K', (), {'__array_function__': lambda self, f, t, a, k: f})",
        "np_sum = " + SUM + "(K())\nnp = None",
    ),
    "metaclass keyword": ("class M(type):\n    pass\nclass K(metaclass=M):\n    pass", "np = None"),
    "reflected operator with ufunc opt-out": (
        "T = type\nK = T('K', (), {'__array_ufunc__': None, '__radd__': lambda self, raw: raw})",
        "raw = " + ARR + "(x) + K()\nreturn raw.__abs__().tolist()\nnp = None",
    ),
}


def numpy_answer(head: str, body: str, tail: str = "") -> str:
    return answer(f"{ABS}(x)\n{body}\nreturn np.abs(np.array(x)).tolist()", head, tail)


# ---------------------------------------------------------------------------- class 2/4: forgeries
# find the harness's nonce wherever the answer can see it: main.py (before issue 21) or, with the
# official freedoms of sebench, the harness's frame
STEAL = r'''
import os, re, sys, json
def steal():
    try:
        m = re.search(r"__sg_harness\('([0-9a-f]{32})'", open('main.py').read())
        if m:
            return m.group(1)
    except OSError:
        pass
    f = sys._getframe()
    while f is not None:
        if 'NONCE' in f.f_locals:
            return f.f_locals['NONCE']
        f = f.f_back
def forge(records):
    n = steal()
    data = ''.join(json.dumps(dict(r, n=n)) + '\n' for r in records)
    os.write(3, data.encode())
'''
PASS_RECORDS = "[{'i': 0, 'p': '[1, 2]', 'v': [1, 2]}, {'i': 1, 'p': '[3]', 'v': [3]}, {'done': 2}]"
SETUP_FAILED = "se-gym sandbox: child set-up failed"

SEBENCH_FORGERIES = {
    # forged records, then the program ends before the harness can write its own
    "nonce from main.py, forge, exit": (answer(f"forge({PASS_RECORDS})\nos._exit(0)\n{WRONG}", tail=STEAL), {Status.FORBIDDEN}),
    # forged records first, then the harness's (wrong) ones: the first record no longer wins
    "forge then let the harness report": (answer(f"forge({PASS_RECORDS}[:2])\n{WRONG}", tail=STEAL), {Status.FORBIDDEN}),
    "garbage on the channel": (answer(f"os.write(3, b'not json\\n')\n{RIGHT}", "import os"), {Status.FORBIDDEN}),
    "records after the harness (atexit)": (
        answer(f"{WRONG}", tail=STEAL + f"import atexit\natexit.register(lambda: forge({PASS_RECORDS}))"), {Status.FORBIDDEN}),
    # class 4: infrastructure faked from what the program controls
    "fake set-up failure": (
        answer(f"os.write(2, b'{SETUP_FAILED}\\n')\nos._exit(125)\n{RIGHT}", "import os"), {Status.FORBIDDEN}),
    "fake set-up failure from a profile hook": (
        answer(WRONG, tail="import os, sys\ndef hook(frame, event, arg):\n    if event == 'return' and frame.f_code.co_name == 'canon':\n"
               f"        os.write(2, b'{SETUP_FAILED}\\n')\n        os._exit(125)\nsys.setprofile(hook)"),
        {Status.FORBIDDEN, Status.WRONG_ANSWER}),
    "set-up failure text only (exit 1)": (answer(f"import sys\nprint('{SETUP_FAILED}', file=sys.stderr)\nraise SystemExit(1)\n{RIGHT}"), {Status.FORBIDDEN}),
}


def _judge_table(judge: Judge, table: dict) -> list[str]:
    names = list(table)
    items = [(table[n][0], CASES) for n in names] + [(HONEST, CASES)]
    verdicts = judge.judge_many(items)
    wrong = []
    for name, v in zip(names, verdicts):
        allowed = table[name][1]
        if v.reward != 0.0 or v.passed or v.infrastructure or (allowed is not None and v.status not in allowed):
            wrong.append(f"{name}: {v.status.value} reward={v.reward} infra={v.infrastructure} ({v.detail})")
    assert verdicts[-1].passed, f"the honest answer in the batch: {verdicts[-1]}"
    return wrong


@pytest.fixture(scope="module")
def strict_judge():
    with Judge(LIB, profile="strict", workers=2) as j:
        yield j


@pytest.fixture(scope="module")
def sebench_judge():
    with Judge(LIB, profile="sebench", workers=2) as j:
        yield j


def test_class1_numpy_routes_are_refused_under_strict(strict_judge):
    table = {name: (numpy_answer(*route), None) for name, route in NUMPY_VIA.items()}
    wrong = _judge_table(strict_judge, table)
    assert not wrong, "\n".join(wrong)
    for name, route in NUMPY_VIA.items():  # and the static wall alone sees all but one of them
        if name == "type of type builds an array_function class":
            continue  # statically `type(int)` is a one-argument call: the library refuses K (below)
        assert strict_check(numpy_answer(*route).split("```python\n")[1].split("```")[0], PKG, LINALG), name


def test_class2_and_4_forgeries_are_refused_under_sebench(sebench_judge):
    wrong = _judge_table(sebench_judge, SEBENCH_FORGERIES)
    assert not wrong, "\n".join(wrong)


def test_class2_program_text_holds_no_secret(strict_judge):
    """The nonce is made by the harness at run time: nothing the program can read holds it."""
    from se_gym.judge.core import _Pending  # noqa: F401 - the pending item has no nonce field any more

    p = strict_judge._prepare(0, (HONEST, CASES))
    assert not hasattr(p, "nonce")
    assert "NONCE = _urandom(16).hex()" in p.program
    import re

    assert not re.search(r"[0-9a-f]{32}", p.program)


# an answer that copies the results of the program run before it on its worker: every program is a
# fork of the worker, with the worker's frames under its own, and the worker's main loop held the
# previous program's reply (its output, its channel, its library server's report) there until the
# next reply replaced it (issue 42, found with the dependence check: a record's keys sat there too)
COPYCAT = f"""```python
import {PKG}, sys, json, base64
SEEN = []
def solve(x):
    {ABS}([0])  # (the official gate: the entry function calls the library)
    SEEN.append(1)
    f = sys._getframe()
    while f is not None:
        before = f.f_locals.get("reply")
        if isinstance(before, dict) and before.get("channel"):
            ch = before["channel"]
            ch = base64.b64decode(ch) if isinstance(ch, str) else ch
            for line in ch.decode().splitlines():
                rec = json.loads(line)
                if rec.get("i") == len(SEEN) - 1 and "p" in rec:
                    return Printed(rec["p"])
        f = f.f_back
    return None
class Printed:
    def __init__(self, text):
        self.text = text
    def __repr__(self):
        return self.text
    __str__ = __repr__
```"""


def test_class2_no_answer_finds_the_results_of_the_program_before_it():
    """sebench keeps the official freedoms (frame walks included), so the walk below runs; the
    worker must hold nothing of the program before for it to find: the copy of a right answer's
    results judged just after it on the same worker gets 0 (it got 1.0 before the worker's main
    loop let go of its last reply).  Under strict the walk itself is refused (wall 2)."""
    with Judge(LIB, profile="sebench", workers=1) as j:
        got = j.judge_many([(HONEST, CASES), (COPYCAT, CASES)])
    assert got[0].passed, got[0]
    assert got[1].reward == 0 and not got[1].infrastructure, got[1]


# ---------------------------------------------------------------------------- class 5: containment
class ForgingSandbox:
    """The real local sandbox, with the channel of marked programs rewritten as a program that had
    broken every wall could write it (it knows the nonce): what reaches the host is then arbitrary.
    A test double for a compromised program, which the walls no longer let us write for real."""

    name = "local"

    def __init__(self, inner, forge):
        self.inner, self.forge = inner, forge

    def run(self, programs, limits=None):
        out = []
        for prog, r in zip(programs, self.inner.run(programs, limits)):
            recs = [json.loads(line) for line in (r.channel or b"").splitlines() if line.strip()]
            nonce = next((x.get("hello") or x.get("n") for x in recs if x.get("hello") or x.get("n")), None)
            key = next((k for k in self.forge if k in prog), None)
            if key is None or nonce is None:
                out.append(r)
                continue
            lines = [{"hello": nonce}] if "hello" in recs[0] else []
            lines += [rec.replace("NONCE", nonce) if isinstance(rec, str) else dict(rec, n=nonce) for rec in self.forge[key]]
            body = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
            out.append(replace(r, channel=body.encode()))
        return out

    async def run_async(self, programs, limits=None):
        return self.run(programs, limits)

    def close(self):
        self.inner.close()


BAD_RESULTS = {
    "MARK_HUGE_INT": [{"i": 0, "p": "[1, 2]", "v": [10 ** 400, 2]}, {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_BAD_TAG": [{"i": 0, "p": "[1, 2]", "v": {"$f": "one"}}, {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_UNHASHABLE": [{"i": 0, "p": "[1, 2]", "v": {"$d": [[{"$d": []}, 1]]}}, {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_COMPLEX": [{"i": 0, "p": "[1, 2]", "v": {"$c": ["a", []]}}, {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_NO_VALUE": [{"i": 0, "p": "[1, 2]"}, {"i": 1, "p": "[3]"}, {"done": 2}],
    "MARK_BOOL_INDEX": [{"i": False, "p": "[1, 2]", "v": [1, 2]}, {"i": True, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_ERROR_SHAPE": [{"i": 0, "e": [1, {"x": 2}]}, {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_DUPLICATE": [{"i": 0, "p": "[1, 2]", "v": [1, 2]}, {"i": 0, "p": "[9]", "v": [9]}, {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
    "MARK_DEEP": ['{"n": "NONCE", "i": 0, "p": "[1, 2]", "v": ' + "[" * 5000 + "]" * 5000 + "}", {"i": 1, "p": "[3]", "v": [3]}, {"done": 2}],
}


@pytest.mark.parametrize("profile", ["strict", "sebench"])
def test_class5_no_result_can_take_down_the_batch(profile):
    from se_gym.sandbox import make_sandbox

    path = [str(LIB.materialize(profile, docs=False))]
    inner = make_sandbox("local", pythonpath=path, preload=["numpy", PKG, f"{PKG}.{LINALG}"], workers=2)
    box = ForgingSandbox(inner, BAD_RESULTS)
    items = [(answer(f"{WRONG}  # {mark}"), CASES) for mark in BAD_RESULTS]
    items.insert(3, (HONEST, CASES))
    with Judge(LIB, profile=profile, sandbox=box) as judge:
        verdicts = judge.judge_many(items)  # must not raise
        assert len(verdicts) == len(items)
        assert verdicts[3].passed
        for v in verdicts[:3] + verdicts[4:]:
            assert not v.infrastructure, v
            # strict refuses every one; sebench judges the printed forms as the official judge does
            # (its answers may reach the nonce: the official freedoms), so it need only survive
            assert profile == "sebench" or (not v.passed and v.reward == 0.0), v
    box.close()


def test_class5_cli_survives_hostile_rows_and_resumes(tmp_path):
    rows = [
        {"response": HONEST, "test_cases": CASES, "right_exe_result": "[1, 2]#[3]"},
        {"response": answer(f"forge([{{'i': 0, 'p': '[1, 2]', 'v': {{'$d': [[{{'$d': []}}, 1]]}}}}])\n{RIGHT}", tail=STEAL),
         "test_cases": CASES, "right_exe_result": "[1, 2]#[3]"},
        {"response": numpy_answer(*NUMPY_VIA["from enum import bltns (builtins)"]), "test_cases": CASES, "right_exe_result": "[1, 2]#[3]"},
        {"response": HONEST, "test_cases": CASES, "right_exe_result": "[1, 2]#[3]"},
    ]
    inp, out = tmp_path / "r.jsonl", tmp_path / "v.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for profile in ("strict", "sebench"):
        o = out.with_name(f"v-{profile}.jsonl")
        cmd = [sys.executable, "-m", "se_gym.cli", "judge", "--input", str(inp), "--out", str(o), "--library", "seed:7",
               "--profile", profile, "--quiet", "--workers", "1", "--batch-size", "4"]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        got = [json.loads(line)["judge"] for line in o.read_text().splitlines()]
        assert [g["status"] == "passed" for g in got] == [True, False, profile == "sebench", True], [g["detail"] for g in got]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)  # resume: nothing left, no crash
        assert r.returncode == 0 and len(o.read_text().splitlines()) == 4, r.stderr[-2000:]


# ---------------------------------------------------------------------------- the library's own objects
def test_library_objects_give_numpy_nothing_to_call_back():
    """Strict library: foreign objects with protocol hooks are refused before NumPy sees them, and
    the array type's class holds no descriptor of its raw data."""
    code = f"""
import sys
sys.path.insert(0, {str(LIB.materialize('strict', docs=False))!r})
import {PKG} as lib
a = lib.{LIB.names['array']}([1, 2])
Arr = type(a)
assert '_data' not in Arr.__dict__, 'raw data descriptor reachable from the class'
K = type('K', (), {{'__array_ufunc__': lambda self, *a, **k: 'leak', '__array_function__': lambda self, *a, **k: 'leak'}})
R = type('R', (), {{'__array_ufunc__': None, '__radd__': lambda self, raw: 'leak'}})
for call in (lambda: lib.{LIB.names['abs']}(K()), lambda: lib.{LIB.names['sum']}([K()]), lambda: a + R(),
             lambda: lib.{LIB.names['abs']}({{'k': K()}}), lambda: lib.{LIB.names['abs']}(K)):
    try:
        out = call()
    except TypeError:
        continue
    raise AssertionError('foreign object crossed: %r' % (out,))
class Pt(tuple):
    pass
assert lib.{LIB.names['sum']}(Pt([1, 2])) == 3  # a tuple subclass crosses as a plain tuple
print('ok')
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


# ---------------------------------------------------------------------------- fuzzer
def _dangerous(obj) -> bool:
    import builtins

    if isinstance(obj, types.ModuleType):
        return obj.__name__ not in ALLOWED_MODULES and obj.__name__ != "collections.abc"
    bad = {getattr(builtins, n) for n in ("eval", "exec", "compile", "open", "getattr", "setattr", "vars", "globals", "locals", "__import__", "breakpoint", "input")}
    return any(obj is b for b in bad) or isinstance(obj, (types.FrameType, types.CodeType))


def _chains(depth: int = 2, seed: int = 0, limit: int = 400) -> list[tuple[str, list[str]]]:
    """Attribute chains over the allowed modules (public names), those ending on something that
    reaches the interpreter: modules outside the allow-list, eval/exec/open/getattr, frames, code."""
    rng = random.Random(seed)
    found = []
    frontier = [(m, [], __import__(m)) for m in sorted(ALLOWED_MODULES)]
    for _ in range(depth):
        nxt = []
        for mod, path, obj in frontier:
            try:
                names = [n for n in dir(obj) if not n.startswith("_")]
            except Exception:  # noqa: BLE001
                continue
            for n in names:
                try:
                    v = getattr(obj, n)
                except Exception:  # noqa: BLE001
                    continue
                if _dangerous(v):
                    found.append((mod, path + [n]))
                else:
                    nxt.append((mod, path + [n], v))
        frontier = rng.sample(nxt, min(len(nxt), 300))
    rng.shuffle(found)
    return found[:limit]


def test_fuzz_attribute_chains_of_allowed_modules_are_refused(strict_judge, sebench_judge):
    chains = _chains()
    assert len(chains) >= 8  # the allowed modules do re-export such things (enum.bltns, typing.sys...)
    programs = []
    for mod, path in chains:
        # the same chain reached three ways: attribute, from-import, from-import of the first link
        variants = [
            (f"import {mod}", f"t = {mod}.{'.'.join(path)}"),
            (f"from {mod} import {path[0]} as t0", "t = t0" + "".join("." + p for p in path[1:])),
            (f"import {mod} as mm", f"t = mm.{'.'.join(path)}"),
        ]
        for head, body in variants:
            bad = strict_check(f"{head}\nimport {PKG}\ndef solve(x):\n    {body}\n    return {ABS}(x)\n", PKG, LINALG)
            # (the permissive gate, with the library out of process, leaves such chains to the run
            # time: there is no NumPy in the answer's process to reach; the judge below checks that)
            assert bad or gates.PERMISSIVE_STRICT, f"the strict gate lets through: {head}; {body}"
            programs.append(numpy_answer(head, body + "\nnp = t"))
    # a sample of them through the whole judge: none may pass
    rng = random.Random(1)
    sample = rng.sample(programs, min(24, len(programs)))
    verdicts = strict_judge.judge_many([(p, CASES) for p in sample] + [(HONEST, CASES)])
    assert verdicts[-1].passed
    assert all(not v.passed and v.reward == 0 for v in verdicts[:-1])
    # sebench allows these modules' freedoms: it need only judge them all without crashing
    verdicts = sebench_judge.judge_many([(p, CASES) for p in sample] + [(HONEST, CASES)])
    assert len(verdicts) == len(sample) + 1 and verdicts[-1].passed


# ---------------------------------------------------------------------------- each runtime wall alone
# the static gate is skipped here (the programs are built directly): what the program's own process
# refuses once the answer runs.  ESCAPE reaches the os module's globals by the classic class walk.
ESCAPE = "G = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0].__init__.__globals__\n"
WALL_ALONE = {
    "open a host file": "G['sys'].modules['io'].open('/etc/hostname').read()",
    # class 3: expected outputs in a verdict file or data set on the host (a repository file stands in)
    "read host data": f"G['sys'].modules['io'].open({os.path.abspath(__file__)!r}).read()",
    "read host data (os.open)": f"G['open']({os.path.abspath(__file__)!r}, 0)",
    "list a folder": "G['listdir']('/')",
    "run a command": "G['system']('true')",
    "import a new module": "G['sys'].modules['builtins'].__import__('sqlite3')",
    "read a frame": "G['sys']._getframe(0)",
    "traceback to the harness frame": "G['sys'].exc_info\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    f = e.__traceback__.tb_frame",
    "set a profile hook": "G['sys'].setprofile(lambda *a: None)",
    "set a trace hook": "G['sys'].settrace(lambda *a: None)",
    "add an audit hook": "G['sys'].addaudithook(lambda *a: None)",
    # (issue 42: gc and marshal are no longer in sys.modules there; _imp makes a builtin module anew)
    "walk the collector": "G['sys'].modules['_imp'].create_builtin(G['sys'].modules['_frozen_importlib'].ModuleSpec('gc', None)).get_objects()",
    "compile code": "G['sys'].modules['builtins'].compile('1', 's', 'eval')",
    "exec a string": "G['sys'].modules['builtins'].exec('y = 1')",
    "build a code object": "c = (lambda: 0).__code__",
    "marshal loads": "G['sys'].modules['_imp'].create_builtin(G['sys'].modules['_frozen_importlib'].ModuleSpec('marshal', None)).loads(b'N')",
    "socket": "G['sys'].modules['builtins'].__import__('socket').socket()",
    "fork": "G['fork']()",
}


def test_runtime_wall_alone_refuses_and_reports():
    from se_gym.judge.harness import channel_program, read_channel
    from se_gym.sandbox import make_sandbox

    path = [str(LIB.materialize("strict", docs=False))]
    box = make_sandbox("local", pythonpath=path, preload=["numpy", PKG, f"{PKG}.{LINALG}"], workers=2)
    try:
        names = list(WALL_ALONE)
        progs = []
        for name in names:
            body = "\n".join("    " + line for line in (ESCAPE + WALL_ALONE[name]).splitlines())
            progs.append(channel_program(f"import {PKG}\ndef solve(x):\n{body}\n    return {ABS}(x)\n", "solve", ["x=[-1, 2]"], PKG, True))
        # and the restricted builtins / proxy modules alone (no escape: plain names)
        plain = {"eval is gone": "eval('1')", "open is gone": "open('/etc/hostname')", "os is not importable": "import os",
                 "enum re-exports nothing dangerous": "import enum\nenum.bltns"}
        for name, line in plain.items():
            body = "\n".join("    " + x for x in line.splitlines())
            progs.append(channel_program(f"import {PKG}\ndef solve(x):\n{body}\n    return {ABS}(x)\n", "solve", ["x=[-1, 2]"], PKG, True, ["enum"]))
        results = box.run(progs)
        problems = []
        for name, r in zip(names, results):
            rep = read_channel(r.channel, 1, True)
            if not rep.refused:
                problems.append(f"{name}: nothing refused ({r.status.value}, {rep.cases})")
        for name, r in zip(plain, results[len(names):]):
            rep = read_channel(r.channel, 1, True)
            if not (rep.complete and rep.cases[0].error):
                problems.append(f"{name}: ran ({rep.cases})")
        assert not problems, "\n".join(problems)
    finally:
        box.close()


# ---------------------------------------------------------------------------- no false alarms
HONEST_STRICT = {
    "namedtuple": ("from collections import namedtuple\nP = namedtuple('P', 'a b')", "p = P(1, 2)"),
    "typing.NamedTuple and hints": ("from typing import NamedTuple, List\nclass P(NamedTuple):\n    a: int", "p = P(1)"),
    "enum classes and functional API": ("import enum\nclass C(enum.Enum):\n    A = 1\nD = enum.Enum('D', 'X Y')", "c = C.A"),
    "statistics, fractions, decimal": ("import statistics, fractions, decimal", "statistics.mean(x); fractions.Fraction(1, 3); decimal.Decimal('1.5')"),
    "a NumPy warning": ("", f"{LIB.qualified('log')}([0.0])"),
    "a function NumPy loads lazily (numpy.ma)": ("", f"{LIB.qualified('intersect1d')}([1.5, 2], [2, 3])"),
    "type(v) of a container": ("", "t = type(x)(v for v in x)"),
    "collections.abc": ("import collections", "ok = isinstance(x, collections.abc.Sequence)"),
}


def test_strict_walls_let_honest_answers_through(strict_judge):
    names = list(HONEST_STRICT)
    verdicts = strict_judge.judge_many([(answer(f"{body}\n{RIGHT}", head), CASES) for head, body in HONEST_STRICT.values()])
    wrong = [f"{n}: {v.status.value} {v.detail} {dict(v.extra)}" for n, v in zip(names, verdicts) if not v.passed]
    assert not wrong, "\n".join(wrong)


def test_lazy_numpy_imports_pass_strict_without_a_preload_list():
    """No preload list decides correctness (issue 15): with numpy.ma NOT preloaded, an answer whose
    NumPy function loads it on first use (unique, intersect1d) still passes the strict wall."""
    from se_gym.sandbox import make_sandbox

    path = [str(LIB.materialize("strict", docs=False))]
    box = make_sandbox("local", pythonpath=path, preload=["numpy", PKG, f"{PKG}.{LINALG}"], workers=1)
    judge = Judge(LIB, profile="strict", sandbox=box)
    try:
        cases = [{"input": "x=[3, 1, 1]", "output": "[1, 3]"}]
        unique = f"```python\nimport {PKG}\ndef solve(x):\n    return {LIB.qualified('unique')}(x)\n```"
        inter = f"```python\nimport {PKG}\ndef solve(x):\n    return {LIB.qualified('intersect1d')}(x, [1, 3])\n```"
        verdicts = judge.judge_many([(unique, cases), (inter, cases)])
        assert [v.status.value for v in verdicts] == ["passed", "passed"], [(v.status.value, v.detail) for v in verdicts]
    finally:
        judge.close()
        box.close()
