"""Strict (issue 42, class 2): the harness's secrets out of the answer's reach.

The strict harness runs the answer in a process of its own (a child of the harness's process): the
nonce, the result channel, the harness's connection to the library server and the list of results
are never there; that process takes a seccomp filter (no signal handler, process, exec, signal to
another process or tracing) and drops the modules the worker left loaded; the harness's process
checks every line the answer's process reports and reads each array result from the library server
itself.  Each hostile answer below returns a WRONG value computed with the library and wins only if
its route works (a signal handler's frame walked into the harness, a client function the harness
calls after the cases, a nonce stolen to forge the channel, the results list rewritten, the wall's
own state switched off, a forged report); under a fraction reward none may pass even one case.
Then the honest forms strict refused, and the edges (a partial frame on the library socket, results
past the output cap, a library server killed from outside, the server's CPU for one program
whatever ran before it, the kept server after array results: issue 43 defect 6).

The judges here run without the library dependence check (wall 2c, ``dependence=False``): these
are the walls alone, and the probes and controls below return values computed in Python, which the
check would refuse (a route that worked would then still earn nothing, and go unnoticed).
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from _gate_corpus import CASES, block
from _isolation_cases import backend_suite, gamed, head, routes
from _isolation_cases import forging as _forging
from conftest import legit_skip
from se_gym.judge import Judge, Status, gates
from se_gym.library import mint, writer
from se_gym.sandbox import Limits

if not writer.uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: strict runs the in-process library")

LIB = mint(7)
P, ABS, ARR, Q = LIB.package, LIB.qualified("abs"), LIB.qualified("array"), LIB.qualified
HEAD = head(LIB)
ROUTES = routes(LIB)


def forging(setup: str, ret: str = "wrong") -> str:
    return _forging(LIB, setup, ret)


@pytest.fixture(scope="module")
def judge():
    assert gates.PERMISSIVE_STRICT
    with Judge(LIB, profile="strict", dependence=False, workers=2, reward="fraction") as j:
        yield j


def test_no_route_from_the_answer_changes_what_the_judge_reads(judge):
    wrong, got = gamed(judge, LIB, {n: forging(s) for n, s in ROUTES.items()})
    assert not wrong, "\n".join(wrong)
    # a report the answer wrote itself is forbidden, never a result
    assert got["a forged report on every pipe"].status is Status.FORBIDDEN, got["a forged report on every pipe"].detail


def _probe(judge: Judge, body: str, expected: str) -> tuple[bool, str]:
    """What the answer's process sees, returned as the answer's value (``expected``: its print)."""
    code = block(f"{HEAD}def solve(x):\n" + "\n".join("    " + line for line in body.splitlines()) + f"\n    {ABS}(x)\n")
    v = judge.judge(code, [{"input": "x=[1]", "output": expected}], "solve")
    return v.passed, f"{v.status.value}: got {v.cases[0].got if v.cases else None!r} ({v.detail[:200]})"


def test_the_answers_process_holds_none_of_the_workers_leftover_modules(judge):
    """ctypes, gc, marshal, fcntl, resource, signal... are not in sys.modules there, nor one step
    away from a module that is (a module's globals)."""
    ok, why = _probe(judge, (
        "bad = {'ctypes', '_ctypes', 'gc', 'fcntl', 'resource', 'signal', '_signal', 'select', 'socket', '_socket',"
        " 'termios', 'mmap', 'subprocess', '_posixsubprocess'}\n"
        "found = sorted(m for m in bad | {'marshal'} if m in MODS)\n"
        "for name, m in list(MODS.items()):\n"
        "    for k, v in list(G(m, '__di~ct__').items()):\n"
        "        if type(v) is type(SYS) and G(v, '__name__') in bad:\n"
        "            found.append(name + '.' + k)\n"
        "return sorted(set(found))"), "[]")
    assert ok, why


def test_the_walls_tables_made_once_per_worker_are_the_walls_own_and_out_of_reach(judge):
    """Issue 49: the strict worker's warm-up builds the wall's tables once (harness.STRICT_WARMUP);
    they equal what the wall builds itself, the wall takes them only under its key, and the
    answer's process no longer holds them in sys.modules when the answer runs."""
    import ast
    import subprocess
    import sys

    from se_gym.judge import harness
    from se_gym.judge.core import sandbox_warmup

    assert harness.STRICT_WARMUP in sandbox_warmup(LIB, "strict") and harness.STRICT_WARMUP not in sandbox_warmup(LIB, "sebench")
    script = harness.STRICT_WARMUP + (
        "\nimport ast, sys\nkey, nodes, ids, stdlib, words, no_import, dropped = sys.modules['__sg_wall_memo'].tables\n"
        "assert list(sys.modules)[-1] == '__sg_wall_memo'\n"
        "assert set(dropped) == {m for m in sys.modules if m.split('.')[0] in " + repr(set(harness.DROP_MODULES)) + "}\n"
        "todo, own = [ast.AST], set()\n"
        "while todo:\n    c = todo.pop(); own.add(id(c)); todo.extend(type.__subclasses__(c))\n"
        "print(key, own == ids, stdlib == frozenset(sys.stdlib_module_names),"
        " sorted((k.__name__, v) for k, v in nodes.items()) == sorted((k.__name__, k._fields) for k in nodes), len(nodes),"
        " sorted(words), sorted(no_import))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split(" ", 5)
    assert out[:5] == [harness._WALL_KEY, "True", "True", "True", str(len(harness._DC_NODE_NAMES))]
    assert out[5].strip() == f"{sorted(harness._DC_REFUSED_WORDS)} {sorted(harness.NO_IMPORT)}"
    assert {n for n in harness._DC_NODE_NAMES} <= {c.__name__ for c in vars(ast).values() if isinstance(c, type)}
    ok, why = _probe(judge, "return '__sg_wall_memo' in MODS", "False")
    assert ok, why


def test_modules_loaded_after_the_walls_tables_are_dropped_too():
    """The answer's process scans only the modules loaded since the warm-up listed its own (issue 49):
    a worker whose warm-up loads more after that (pickle, mmap, socket here) still has them dropped."""
    from se_gym.judge.core import sandbox_preload, sandbox_warmup
    from se_gym.sandbox import make_sandbox

    box = make_sandbox("local", workers=1, pythonpath=[str(LIB.materialize("strict", docs=False))], preload=sandbox_preload(LIB),
                       warmup=sandbox_warmup(LIB, "strict") + ["import mmap, pickle, socket"])
    with box, Judge(LIB, profile="strict", sandbox=box, dependence=False) as j:
        ok, why = _probe(j, "return sorted(m for m in ('mmap', 'pickle', '_pickle', 'socket', '_socket', 'termios') if m in MODS)", "[]")
    assert ok, why


def test_the_library_client_hands_out_no_module_that_reaches_the_system(judge):
    ok, why = _probe(judge, (
        "return sorted(k for k, v in G(C, '__di~ct__').items() if type(v) is type(SYS)"
        " and G(v, '__name__') in ('os', 'posix', 'sys', 'subprocess', 'ctypes'))"), "[]")
    assert ok, why


def test_the_answers_process_cannot_install_a_signal_handler(judge):
    ok, why = _probe(judge, (
        "S = MODS['_imp'].create_builtin(MODS['_frozen_importlib'].ModuleSpec('_signal', None))\n"
        "try:\n    S.signal(10, lambda *a: None)\n    return 'installed'\nexcept OSError:\n    return 'refused'"),
        "refused")
    assert ok, why


# ---------------------------------------------------------------------------- honest forms
HONEST = {
    # the library's function taken by name, after the array constructor (its only other call)
    "getattr(PKG, name) after the constructor": (f"a = {ARR}(x)\nreturn getattr({P}, {LIB.names['abs']!r})(a)", ""),
    "getattr(PKG, name, default)": (f"f = getattr({P}, {LIB.names['abs']!r}, None)\nreturn f({ARR}(x))", ""),
    "sys.setrecursionlimit": ("sys.setrecursionlimit(10 ** 6)\nreturn " + ABS + "(x)", "import sys"),
    "from sys import setrecursionlimit": ("setrecursionlimit(5000)\nreturn " + ABS + "(x)", "from sys import setrecursionlimit"),
    # type rules: a tuple for a list, the printed array as text
    "a tuple where a list is expected": (f"return tuple(float(v) for v in {ABS}(x))", ""),
}


def test_honest_forms_strict_refused_pass(judge):
    answers = {n: block(f"import {P}\n{head}\ndef solve(x):\n" + "\n".join("    " + ln for ln in body.splitlines()) + "\n")
               for n, (body, head) in HONEST.items()}
    verdicts = judge.judge_many([(a, CASES, "solve") for a in answers.values()])
    wrong = [f"{n}: {v.status.value} {v.detail[:200]}" for n, v in zip(answers, verdicts) if not v.passed]
    assert not wrong, "\n".join(wrong)


def test_setrecursionlimit_is_bounded(judge):
    ok, why = _probe(judge, "import sys\nsys.setrecursionlimit(10 ** 9)\nreturn sys.getrecursionlimit()", "100000")
    assert ok, why


def test_the_type_rules(judge):
    """A str passes where the expected print is exactly its text (the printed array, say); a str
    that only parses to the expected value, or holds other cases' prints, does not; a tuple passes
    for a list (docs/security.md, "Type rules")."""
    cases = [{"input": f"x={ARR}([-1.5, 2.0])", "output": "[1.5 2. ]"}, {"input": f"x={ARR}([-3.0])", "output": "[3.]"}]
    answers = {
        "str of the library's array": (f"return str({ABS}(x))", True),
        "str of a list where the print is an array's": (f"return str([float(v) for v in {ABS}(x)])", False),
        "str carrying both cases' prints": (f"return str({ABS}(x)) + '\\n#\\n[3.]'", False),
        "the array itself": (f"return {ABS}(x)", True),
    }
    verdicts = judge.judge_many([(block(f"import {P}\ndef solve(x):\n    {body}\n"), cases, "solve") for body, _ in answers.values()])
    wrong = [f"{n}: {v.status.value} {v.detail[:160]}" for (n, (_, want)), v in zip(answers.items(), verdicts) if v.passed != want]
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------------------- edges
def test_a_partial_frame_left_on_the_library_socket_does_not_hang_the_harness(judge):
    """The answer leaves half a request on its server socket and returns an array: the harness
    reads the array over its own connection (before, its marker request went into the half frame
    and it waited for a reply until the wall: timeout)."""
    code = block(f"{HEAD}def solve(x):\n    a = {ABS}({ARR}(x))\n    OS.write(4, (1000).to_bytes(4, 'big') + b'[\"len\", ')\n    return a\n")
    v = judge.judge(code, [{"input": "x=[-1.5, 2.0]", "output": "[1.5 2. ]"}], "solve")
    assert v.passed, (v.status, v.detail)


def test_results_past_the_output_cap_are_output_limit_not_forbidden(judge):
    cases = [{"input": f"x={k}", "output": "0"} for k in range(4)]
    code = block(f"import {P}\ndef solve(x):\n    {ABS}([x])\n    return 'ab' * 95_000\n")
    v = judge.judge(code, cases, "solve")
    assert v.status is Status.OUTPUT_LIMIT and not v.infrastructure, (v.status, v.detail)


def _our_servers(judge: Judge) -> list[int]:
    """The library servers of this judge's workers (sandbox/worker.py names them se-gym-libsrv)."""
    from _procs import descendants

    roots = [t.proc.pid for t in judge.sandbox._workers if t is not None]  # (bwrap, or the worker itself)
    return sorted(p for r in roots for p in descendants(r) if _comm(p) == "se-gym-libsrv")


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_a_library_server_killed_from_outside_is_infrastructure():
    """Killed while the answer waits on a call: an infrastructure failure, never the answer's 0
    (before: runtime_error, reward 0, and so never retried).  (The judge retries an infrastructure
    failure once: the program is run here once, and its result judged.)"""
    import signal

    code = block(f"import {P}\ndef solve(x):\n    a = {Q('arange')}(3000000)\n    for _ in range(60):\n"
                 f"        a = {Q('sort')}({Q('sin')}(a))\n    return {ABS}(x)\n")
    killed = []

    def kill_when_busy(judge):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            for pid in _our_servers(judge):
                try:
                    with open(f"/proc/{pid}/stat", "rb") as f:
                        busy = int(f.read().rsplit(b")", 1)[1].split()[11]) > 20  # (0.2 s of CPU: serving the loop)
                except OSError:
                    continue
                if busy:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.02)

    with Judge(LIB, profile="strict", dependence=False, workers=1, limits=Limits(wall_s=120, cpu_s=60)) as judge:
        assert judge.judge(block(f"import {P}\ndef solve(x):\n    return {ABS}(x)\n"), CASES, "solve").passed  # (up, a server kept)
        t = threading.Thread(target=kill_when_busy, args=(judge,))
        t.start()
        p = judge._prepare(0, (code, CASES, "solve"))
        (r,) = judge.sandbox.run([p.program], judge.limits)
        t.join()
        v = judge._finish_contained(p, r)
    assert killed, "no library server was found busy"
    assert v.status is Status.SANDBOX_ERROR and v.infrastructure and v.reward == 0, (v.status, v.detail)
    assert "library server died" in v.detail, v.detail


def test_a_programs_library_cpu_does_not_depend_on_what_ran_before():
    """The same program, once on a fresh server and once on a server kept from a small program: the
    same verdict (before, a kept server had up to its limit + 1 s, a fresh one its limit)."""
    from se_gym.sandbox.local import LocalSandbox

    heavy = (f"import {P}\na = {Q('arange')}(2000000)\nfor _ in range(45):\n    b = {Q('sort')}({Q('sin')}(a))\n"
             "print('done')")  # (some 1.5 s of the server's CPU: past its 1 s)
    small = f"import {P}\nprint({Q('sum')}({ARR}([1, 2])))"
    limits = Limits(cpu_s=1, wall_s=120)
    path = LIB.materialize("strict", docs=False)
    pre = ["numpy", "numpy.ma", P, f"{P}.{LIB.linalg}"]
    with LocalSandbox(pythonpath=[str(path)], preload=pre, workers=1) as box:
        fresh = box.run([heavy], limits)[0]
    with LocalSandbox(pythonpath=[str(path)], preload=pre, workers=1) as box:
        box.run([small], limits)
        kept = box.run([heavy], limits)[0]
    assert (fresh.status, kept.status) == ("timeout", "timeout"), (fresh.status, fresh.detail, kept.status, kept.detail)


def test_array_results_keep_the_library_server():
    """Issue 43 defect 6: the harness's own read of an array result no longer marks the server
    unfit; a worker's answers that return arrays are served by one server."""
    answers = [block(f"import {P}\ndef solve(x):\n    return {ABS}({ARR}(x)) + {k}\n") for k in range(6)]
    cases = [{"input": "x=[-1.5, 2.0]", "output": "[1.5 2. ]"}]
    seen = []
    with Judge(LIB, profile="strict", dependence=False, workers=1) as judge:
        for a in answers:
            judge.judge(a, cases, "solve")
            seen.append(tuple(_our_servers(judge)))
    assert len(set(seen)) == 1 and len(seen[0]) == 1, seen


# ---------------------------------------------------------------------------- every backend
def _check_suite(judge: Judge, lib) -> list[str]:
    suite = backend_suite(lib)
    verdicts = judge.judge_many([(answer, cases, "solve") for _, answer, cases, _ in suite])
    return [f"{name}: {v.status.value} reward={v.reward} infra={v.infrastructure} ({v.detail[:160]})"
            for (name, _, _, must), v in zip(suite, verdicts)
            if (v.passed != must) or (not must and (v.reward > 0 or v.infrastructure))]


@pytest.mark.parametrize("level", ["bwrap", "unshare", "rlimits"])
def test_the_routes_give_nothing_at_every_isolation_level(level):
    from se_gym.sandbox.local import LocalSandbox, bwrap_status, unshare_status

    ok, why = {"bwrap": bwrap_status, "unshare": unshare_status}.get(level, lambda: (True, ""))()
    if not ok:
        legit_skip(f"isolation level {level} unavailable here: {why}")
    path = LIB.materialize("strict", docs=False)
    box = LocalSandbox(pythonpath=[str(path)], preload=["numpy", "numpy.ma", P, f"{P}.{LIB.linalg}"], workers=1, isolation=level)
    with box, Judge(LIB, profile="strict", dependence=False, sandbox=box, reward="fraction") as judge:
        wrong = _check_suite(judge, LIB)
    assert not wrong, "\n".join(wrong)


def test_the_routes_give_nothing_on_docker(docker_daemon):
    from conftest import missing
    from se_gym.sandbox import make_sandbox

    path = LIB.materialize("strict", docs=False)
    try:
        box = make_sandbox("docker", pythonpath=[str(path)], workers=1, preload=["numpy", "numpy.ma", P, f"{P}.{LIB.linalg}"])
    except RuntimeError as exc:
        missing(f"docker backend unavailable: {exc}")
    with box, Judge(LIB, profile="strict", dependence=False, sandbox=box, reward="fraction") as judge:
        wrong = _check_suite(judge, LIB)
    assert not wrong, "\n".join(wrong)


def test_the_routes_give_nothing_over_http():
    """`se-gym sandbox serve --library 7 --profile strict`, as a user runs it, and a strict judge."""
    from _procs import sandbox_server

    with sandbox_server("--library", "7", "--profile", "strict") as url:
        with Judge(LIB, profile="strict", dependence=False, sandbox="http", http_url=url + "/run", reward="fraction") as judge:
            assert judge.sandbox.has_channel
            wrong = _check_suite(judge, LIB)
    assert not wrong, "\n".join(wrong)


def test_the_routes_give_nothing_in_a_multi_turn_episode():
    """Each turn of a strict multi-turn episode is judged by the same harness: the routes earn
    nothing turn after turn, the feedback carries nothing of the harness's (no nonce, no tag), and
    the honest answer then passes."""
    import re

    from se_gym.envs.sebench import SEBenchEnv
    from se_gym.tasks import Task

    task = Task(id="isolation-0", split="single_test", source="test", query="Return the absolute values of x.",
                function_name="def solve(x):", test_cases=[(c["input"], c["output"]) for c in CASES],
                example=(CASES[0]["input"], CASES[0]["output"]), functions=("abs",),
                reference_solution="import numpy as np\ndef solve(x):\n    return np.abs(x).tolist()")
    env = SEBenchEnv(tasks=[task], library=LIB, profile="strict", max_turns=len(ROUTES) + 1, return_messages=True)
    try:
        env.reset(options={"index": 0})
        for name, setup in ROUTES.items():
            _, reward, terminated, _, info = env.step(forging(setup))
            assert reward == 0.0 and not terminated, (name, info["verdict"].detail)
            assert not re.search(r"[0-9a-f]{32}", info["messages"][-1]["content"]), name
        _, reward, terminated, _, info = env.step(block(f"import {P}\ndef solve(x):\n    return [float(v) for v in {ABS}(x)]\n"))
        assert reward == 1.0 and terminated, info["verdict"].detail
    finally:
        env.close()
