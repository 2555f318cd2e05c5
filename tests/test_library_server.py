"""The strict profile's library server (issue 31): the answer's process never holds NumPy; the
library is a client whose calls cross to a per-program server that checks every request."""
from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys

import pytest

from conftest import legit_skip
from se_gym.library import mint
from se_gym.library.writer import uses_server

LIB = mint(0)
if not uses_server("strict"):
    legit_skip("SE_GYM_STRICT_SERVER=0: strict runs the in-process library")


def _frame(sock, msg):
    body = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
    sock.sendall(struct.pack(">I", len(body)) + body)
    head = sock.recv(4, socket.MSG_WAITALL)
    return json.loads(sock.recv(struct.unpack(">I", head)[0], socket.MSG_WAITALL))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    out = LIB.write(tmp_path_factory.mktemp("strict") / "lib", profile="strict", with_docs=False)
    mine, theirs = socket.socketpair()
    proc = subprocess.Popen([sys.executable, str(out / LIB.package / "_server.py"), str(theirs.fileno())],
                            pass_fds=[theirs.fileno()])
    theirs.close()
    yield mine
    mine.close()
    proc.wait(timeout=30)


def test_the_server_speaks_only_the_library_api(server):
    array, inv = LIB.names["array"], f"{LIB.linalg}.{LIB.names['linalg.inv']}"
    ok = _frame(server, ["call", [], array, [[1.0, 2.0]], {}])
    assert ok[0] == "ok" and set(ok[1]) == {"h"}  # an array is a handle
    h = ok[1]["h"]
    assert _frame(server, ["list", [], h]) == ["ok", [1.0, 2.0]]
    assert _frame(server, ["attr", [], h, "dtype"]) == ["ok", {"d": "float64"}]
    refused = [
        ["list", [], h + 1000],  # unknown handle
        ["call", [], "no_such_function", [], {}],  # unknown function
        ["call", [], "__import__", ["os"], {}],  # (a name outside the table, however real)
        ["attr", [], h, "__class__"],  # an attribute the array type does not offer
        ["call", [], array, [{"x": 1}], {}],  # not plain data
        ["call", [], array, [{"h": "1"}], {}],  # a malformed handle
        ["getattr", [], h, "base"],  # no generic operation
        ["op", [], h, "__getattribute__", 1, False],
    ]
    for req in refused:
        reply = _frame(server, req)
        assert reply[0] == "err" and reply[1] == "TypeError", (req, reply)
    assert _frame(server, b"not json")[:2] == ["err", "TypeError"]
    # NumPy's errors cross as a type name and text, never as objects
    sing = _frame(server, ["call", [], array, [[[0.0, 0.0], [0.0, 0.0]]], {}])[1]
    reply = _frame(server, ["call", [], inv, [sing], {}])
    assert reply[0] == "err" and reply[1] == "LinAlgError" and all(type(x) is str for x in reply[1:])
    # freed handles are gone
    assert _frame(server, ["len", [h], h])[:2] == ["err", "TypeError"]


def test_client_refuses_what_is_not_plain_data_and_raises_its_own_errors(tmp_path):
    out = LIB.write(tmp_path / "lib", profile="strict", with_docs=False)
    code = f"""
import sys
import {LIB.package} as L
A, inv, s = getattr(L, {LIB.names['array']!r}), getattr(L.{LIB.linalg}, {LIB.names['linalg.inv']!r}), getattr(L, {LIB.names['sum']!r})
class Hook:
    def __array__(self, *a):
        return 1
for bad in (Hook(), {{1: 2}}, {{1, 2}}, iter([1]), (x for x in [1])):
    try:
        s(bad)
        print("accepted", type(bad).__name__)
    except TypeError:
        pass
try:
    inv(A([[0.0, 0.0], [0.0, 0.0]]))
except ValueError as e:
    print(type(e).__name__, type(e).__module__, e.__cause__, e.__context__, sorted(vars(e)))
print("numpy" in sys.modules)
vec = getattr(L, {LIB.names['vectorize']!r})
# a call-back that calls the library itself: the server's request loop is re-entrant
print(list(vec(lambda v: s(A([v, v])))(A([1.0, 2.5]))))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(out), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:3] == [f"LinAlgError {LIB.package}._client None None []", "False", "[2.0, 5.0]"]


def _program_box(tmp_path):
    from se_gym.sandbox.local import LocalSandbox

    path = LIB.materialize("strict", docs=False)
    return LocalSandbox(pythonpath=[str(path)], preload=["numpy", "numpy.ma", LIB.package, f"{LIB.package}.{LIB.linalg}"],
                        workers=1)


def test_the_strict_answer_process_never_holds_numpy(tmp_path):
    pkg, arr, total = LIB.package, LIB.names["array"], LIB.names["sum"]
    prog = f"""
import gc, sys, types
import {pkg}
a = {pkg}.{arr}([[1.0, 2.0], [3.0, 4.0]])
print({pkg}.{total}(a))
mods = [m for m in sys.modules if m.split(".")[0] == "numpy"]
objs = [o for o in gc.get_objects() if "numpy" in str(getattr(type(o), "__module__", ""))]
reach = []
for m in list(sys.modules.values()):
    for v in list(getattr(m, "__dict__", {{}}).values()):
        if isinstance(v, types.FunctionType):
            reach += [g for g in v.__globals__.values() if isinstance(g, types.ModuleType) and g.__name__.startswith("numpy")]
            reach += [c.cell_contents for c in (v.__closure__ or ()) if type(c.cell_contents).__module__.startswith("numpy")]
print(mods, len(objs), len(reach))
"""
    with _program_box(tmp_path) as box:
        assert box.worker_info.get("library_server") is True and box.worker_info.get("numpy") is None
        (r,) = box.run([prog])
    assert r.ok, r.stderr
    assert r.stdout.split("\n")[:2] == ["10.0", "[] 0 0"]


def test_a_program_cannot_read_its_library_server(tmp_path):
    """The server is not dumpable and runs under another uid where the worker can give one: the
    program can open none of its /proc files that expose memory (nor ptrace it, by the same rule)."""
    pkg, arr = LIB.package, LIB.names["array"]
    prog = f"""
import os, {pkg}
{pkg}.{arr}([1])  # (its server is up)
me, seen, opened = os.getpid(), 0, []
for name in os.listdir("/proc"):
    if name.isdigit() and int(name) != me:
        seen += 1
        for what in ("mem", "environ", "maps"):
            try:
                with open("/proc/%s/%s" % (name, what), "rb") as f:
                    f.read(1)
                opened.append(what)
            except OSError:
                pass
print(seen > 0, opened)
"""
    with _program_box(tmp_path) as box:
        (r,) = box.run([prog])
    assert r.stdout.split("\n")[0] == "True []", (r.stdout, r.stderr)


def test_no_state_crosses_programs(tmp_path):
    pkg, arr = LIB.package, LIB.names["array"]
    first = f"import {pkg}\na = {pkg}.{arr}([1, 2, 3])\na[0] = 99\nprint(repr(a))"
    # the next program forges the first one's handle (1): its server never gave it out
    second = f"""
import {pkg}
from {pkg} import _client
try:
    print(repr(_client._array(1)))
except TypeError as e:
    print("refused:", e)
print(repr({pkg}.{arr}([1, 2, 3])))
"""
    with _program_box(tmp_path) as box:
        r1, r2 = box.run([first]), box.run([second])
    assert r1[0].stdout.strip() == "ZWCArray([99, 2, 3])"
    assert r2[0].stdout.split("\n")[:2] == ["refused: unknown handle", "ZWCArray([1, 2, 3])"]


def test_the_docker_worker_runs_the_same_server(docker_daemon):
    """The image runs this very worker.py: a strict library on its path brings the zygote there too."""
    from conftest import missing
    from se_gym.sandbox import make_sandbox

    pkg, arr, total = LIB.package, LIB.names["array"], LIB.names["sum"]
    path = LIB.materialize("strict", docs=False)
    try:
        box = make_sandbox("docker", pythonpath=[str(path)], workers=1,
                           preload=["numpy", "numpy.ma", pkg, f"{pkg}.{LIB.linalg}"])
    except RuntimeError as exc:
        missing(f"docker backend unavailable: {exc}")
    prog = f"import sys, {pkg}\nprint({pkg}.{total}({pkg}.{arr}([1, 2])), 'numpy' in sys.modules)"
    with box:
        results = box.run([prog, prog])
    assert [r.stdout.strip() for r in results] == ["3 False"] * 2, results[0].stderr
