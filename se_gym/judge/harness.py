"""The programs the judge runs, and reading back what they report.

Two harnesses:

* :func:`official_program` is SE-Bench's harness, byte for byte: the answer's code, then
  ``import PKG``, then a main block calling the entry function once per test case, printing a
  separator and each result followed by ``#``.  The official gates inspect this text, and it is
  what runs on a backend without a result channel (the official HTTP server); that path is
  exactly as forgeable as the official judge (a program may print the separator and fake results,
  then exit).
* :func:`channel_program` is what runs on backends with a result channel (fd 3).  Trusted code runs
  first: it makes a random nonce (``os.urandom``; nothing the program can read before, main.py
  included, holds it) and writes ``{"hello": nonce}`` as the channel's first line, before any of
  the answer's code exists in the process.  It compiles everything, keeps its own references,
  then executes the answer's code (and the ``import PKG`` the official harness adds) in
  ``__main__``'s namespace, calls the entry function once per test case, and only after every case
  has run (collector off, profile/trace hooks cleared) converts the results (printed form, and for
  ``strict`` a canonical JSON value made by trusted code) and writes them to fd 3 as JSON lines
  tagged with the nonce, then a final ``done`` record.  :func:`read_channel` accepts exactly that:
  any other line (another nonce, not JSON, a case twice, a field too many, a strict record without
  its value, anything after ``done``) makes the answer ``forbidden``.

Profile ``strict`` (issue 42) runs the answer in a process of its own: the program's process is
the harness (``__sg_strict``), which compiles, loads the answer's imports, forks the answer's
process and only then makes the nonce; the answer's process (``__sg_answer``) never holds the
nonce, the channel, the harness's connection to the library server or the harness's results.
Before any answer code exists it takes the worker's answer filter (``__sg_fence``: seccomp, no
signal handlers, processes, exec, signals to others or tracing), drops the modules the worker
left loaded (:data:`DROP_MODULES`), announces a tag of its own on a pipe to the harness, and puts up
the run-time wall (issue 21): the answer's builtins lose everything :data:`.gates.FORBIDDEN_BUILTINS`
names, its ``__import__`` hands out allowed modules only as proxies holding their allow-listed
attributes (``sys.setrecursionlimit`` bounded), and an audit hook (``sys.addaudithook``) refuses
every event but a few harmless ones: files outside the interpreter's, NumPy's and the library's
folders, any write, exec/compile of code the harness did not make (collections.namedtuple's and
dataclasses' generated code excepted), imports the answer could name, frames (``sys._getframe``
except for namedtuple/typing/enum, tracebacks' and generators' frames, code objects), the
collector's object walks, profile/trace/audit hooks, marshal/pickle, sockets, processes, and
``__array*`` set on a class.  A refusal is reported on the pipe and ends the answer's process.
After the cases it converts each result with exact types (arrays as library handles) and writes
its report, each line with its tag; nothing of the answer runs after the cases.  The harness's
process checks every line of that report (anything its harness does not write is ``forbidden``),
reads each array from the library server over its own connection (fd 5, served once the answer's
socket is closed), makes the printed form and the canonical value itself and writes the records
to fd 3; it ends as the answer's process did.

In profile ``sebench`` the answer runs with the official freedoms, so in-process introspection can
still find the nonce (the harness's frame) and forge its records before exiting; printing,
replacing ``print`` or ``sys.stdout``, ``atexit`` hooks, exiting early, reading main.py or writing
to the channel without the nonce do not help it, and nothing it reports can crash the judge.
"""
from __future__ import annotations

import ast
import hashlib
import json
import marshal
import re
import sys
from dataclasses import dataclass
from typing import Any, Sequence

from ..sandbox.base import Program
from .compare import SEPARATOR
from .gates import FRAME_ATTRIBUTES, OPEN_BUILTINS, OPEN_FORBIDDEN_ATTRIBUTES, VIRTUAL_MODULES
from .parsing import parse

MAX_PRINTED = 200_000  # characters of one printed result carried back
MAX_NODES = 200_000  # elements of one canonical value
# strict wall: audit events an honest answer (and the library under it) may raise; every other
# event, and "open"/"exec"/"compile"/"object.__setattr__" outside their narrow cases, is refused
HARMLESS_EVENTS = frozenset({"time.sleep", "builtins.id", "os.urandom", "random.seed", "array.__new__"})
# standard-library modules the strict wall never lets load after the answer starts (threads would run
# beside the harness's post-processing; the others exist to reach the system)
NO_IMPORT = frozenset({"_thread", "threading", "ctypes", "_ctypes", "socket", "_socket", "ssl", "_ssl", "subprocess",
                       "_signal", "_posixshmem", "_tracemalloc", "_lsprof", "termios", "grp", "pwd", "_curses", "readline",
                       "_posixsubprocess", "multiprocessing", "_multiprocessing", "concurrent", "asyncio", "signal",
                       "mmap", "pty", "fcntl", "resource", "select", "selectors", "pickle", "_pickle", "shelve", "dbm",
                       "sqlite3", "_sqlite3", "http", "urllib", "ftplib", "smtplib", "webbrowser", "code", "codeop",
                       "pdb", "bdb", "trace", "tracemalloc", "faulthandler", "zipimport", "runpy", "pkgutil",
                       "gc", "marshal", "tempfile", "shutil", "glob", "os", "posix", "sys", "builtins"})
# strict (issue 42): modules the worker left loaded that the answer's process drops from sys.modules
# before the answer runs (memory, frames, signals, fds, processes: reachable otherwise through any
# module's sys, or a function's globals)
DROP_MODULES = frozenset({"ctypes", "_ctypes", "gc", "marshal", "fcntl", "resource", "signal", "_signal", "select",
                          "selectors", "socket", "_socket", "termios", "mmap", "_posixsubprocess", "subprocess",
                          "threading", "faulthandler", "tracemalloc", "_tracemalloc", "pickle", "_pickle",
                          "multiprocessing", "_multiprocessing", "_posixshmem", "asyncio"})
MAX_REPORT = 64 << 20  # bytes of the answer's report the harness reads (far past what the channel carries)
REFUSED_EXIT = 87  # the answer's process's exit status when the wall ended it
# round 6's modules written on the real one's classes: the harness loads the real module before the wall
VIRTUAL_ON_REAL = frozenset({"datetime"})
RECURSION_MAX = 100_000  # what sys.setrecursionlimit may set in the answer's process (higher is clamped)
# the source collections.namedtuple compiles for a tuple's __new__
NAMEDTUPLE_TEMPLATE = rb"lambda _cls, [\w, ]*: _tuple_new\(_cls, \([\w, ]*\)\)"


# words generated dataclass code may not hold (the permissive gate's refused attributes and names)
_DC_REFUSED_WORDS = (OPEN_FORBIDDEN_ATTRIBUTES | OPEN_BUILTINS | FRAME_ATTRIBUTES | {"getattr", "setattr", "delattr"}) - {"hash"}

_WORDS = r"\w+"  # (how the strict wall splits the strings of generated dataclass code into words)
# the node classes dataclasses' templates use (the strict wall checks generated code against them)
_DC_NODE_NAMES = ("Module", "FunctionDef", "arguments", "arg", "Return", "Assign", "Expr", "If", "Raise", "Pass", "Name",
                  "Attribute", "Call", "keyword", "Constant", "Tuple", "Dict", "Compare", "BoolOp", "BinOp", "UnaryOp",
                  "IfExp", "JoinedStr", "FormattedValue", "Load", "Store", "And", "Or", "Not", "Is", "IsNot", "Eq",
                  "NotEq", "Lt", "LtE", "Gt", "GtE", "In", "NotIn", "Add")

# what the strict wall's tables are made of: the tables the worker's warm-up made (STRICT_WARMUP) are
# taken only under this key, so that a worker started by other code never hands the wall stale ones
# (20 hex digits: no program text holds a run of 32, the length of a nonce; test_redteam checks it)
_WALL_KEY = hashlib.sha256(repr((_DC_NODE_NAMES, sorted(_DC_REFUSED_WORDS), sorted(NO_IMPORT), sorted(DROP_MODULES))).encode()).hexdigest()[:20]

_NP_ARRAY = re.compile(r"\bnp\.array\b")


def rewrite_inputs(inputs: Sequence[str], package: str, array_ctor: str) -> list[str]:
    """The official rewrite of ``np.array`` in test inputs to the library's constructor."""
    to = f"{package}.{array_ctor}"  # (the pattern needs "np.array" in the text: the others stay as they are)
    return [_NP_ARRAY.sub(to, s) if "np.array" in s else s for s in inputs]


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


_PRELUDE = r"""

def __sg_no_json(o):
    raise TypeError("not JSON")


def __sg_server_reader(scan, write, read, fstat, _str, _type, _int, _len, _list, _tuple, _complex, _dict, _BaseException):
    # strict, library server: the harness's own read of an array result over its own connection to
    # the program's library server (fd 5, issue 42), which the server serves once the answer's
    # process has closed its own (fd 4).  The answer's process never holds this socket, so no
    # request of the answer's, partial frame or unread reply stands between the harness and its
    # replies.  Returns read(handle, shown): (printed form, data), the printed form only when shown.
    try:
        st = fstat(5)
        if st.st_mode & 0o170000 != 0o140000 or scan is None:
            return None
    except _BaseException:
        return None

    class Unread(Exception):
        pass

    buf = [b""]

    def send(text):
        body = text.encode("utf-8")
        data = _len(body).to_bytes(4, "big") + body
        while data:
            data = data[write(5, data):]

    def exact(n):
        b = buf[0]
        while _len(b) < n:
            chunk = read(5, max(n - _len(b), 65536))
            if not chunk:
                raise Unread("the library server is gone")
            b += chunk
        buf[0] = b[n:]
        return b[:n]

    def recv():
        n = _int.from_bytes(exact(4), "big")
        if n > 256 << 20:
            raise Unread("reply too large")
        text = exact(n).decode("utf-8")
        msg, end = scan(text, 0)
        if end != _len(text) or _type(msg) is not _list or not msg:
            raise Unread("malformed reply")
        return msg

    def plain(v):
        t = _type(v)
        if t is _list:
            return [plain(x) for x in v]
        if t is _dict and _len(v) == 1:
            if "c" in v and _type(v["c"]) is _list and _len(v["c"]) == 2:
                return _complex(v["c"][0], v["c"][1])
            if "t" in v and _type(v["t"]) is _list:
                return _tuple([plain(x) for x in v["t"]])
            raise Unread("unsupported element")
        return v

    def read_array(h, shown):
        send('["' + ("show" if shown else "list") + '", [], ' + _int.__repr__(h) + "]")
        msg = recv()
        if msg[0] != "ok" or _len(msg) != 2:
            raise Unread("the library server refused the read")
        if not shown:
            return None, plain(msg[1])
        if _type(msg[1]) is not _list or _len(msg[1]) != 2 or _type(msg[1][0]) is not _str:
            raise Unread("unexpected reply")
        return msg[1][0], plain(msg[1][1])

    return read_array


def __sg_prepare(SRC, CASES, pre, _compile, _str, _type, _BaseException):
    # both harnesses: how an exception is described, and the answer's and each case's code compiled
    # before the answer runs (the worker's, where it compiled them: se_gym.sandbox.Program)
    def describe(e):
        try:
            name = _type(e).__name__
            msg = _str(e)[:2000]
            if _type(name) is not _str:
                name = "Exception"
        except _BaseException:
            name, msg = "Exception", "(unprintable exception)"
        return [name, msg if _type(msg) is _str else "", ""]

    loaded = code = None
    try:
        code = pre[0] if pre[0] is not None else _compile(SRC, "<answer>", "exec")
    except _BaseException as e:
        loaded = describe(e)
    units = []
    for i, src in enumerate(CASES):
        try:
            units.append(pre[i + 1] if pre[i + 1] is not None else _compile(src, "<test case " + _str(i) + ">", "eval"))
        except _BaseException as e:
            units.append(describe(e))
    return describe, code, loaded, units


def __sg_run(code, loaded, units, g, _exec, _eval, _type, _list, _BaseException, describe):
    # both harnesses: the answer's code, then each case: (True, its value) or (False, its error)
    outcomes = []
    if loaded is None:
        try:
            _exec(code, g)
        except _BaseException as e:
            loaded = describe(e)
    for i, unit in enumerate(units):
        if loaded is not None:
            outcomes.append((False, loaded))
        elif _type(unit) is _list:
            outcomes.append((False, unit))
        else:
            try:
                outcomes.append((True, _eval(unit, g)))
            except _BaseException as e:
                outcomes.append((False, describe(e)))
    return outcomes


def __sg_canonical(Rejected, other):
    # strict: a result as a canonical JSON value, exact builtin types only (no code of the answer
    # runs: a subclass is not its base); ``other(v, type, budget, top)`` for the rest (arrays)
    import builtins
    _type, _bool, _int, _str, _float, _complex, _list, _tuple, _dict, _repr = (
        builtins.type, builtins.bool, builtins.int, builtins.str, builtins.float, builtins.complex, builtins.list,
        builtins.tuple, builtins.dict, builtins.repr)
    inf, ninf = _float("inf"), _float("-inf")

    def canon(v, budget, top):
        budget[0] -= 1
        if budget[0] < 0:
            raise Rejected("result too large")
        t = _type(v)
        if v is None or t is _bool or t is _int or t is _str:
            return v
        if t is _float:
            return v if v == v and v != inf and v != ninf else {"$f": _repr(v)}
        if t is _complex:
            return {"$c": [canon(v.real, budget, False), canon(v.imag, budget, False)]}
        if t is _list:
            return [canon(x, budget, False) for x in v]
        if t is _tuple:
            return {"$t": [canon(x, budget, False) for x in v]}
        if t is _dict:
            return {"$d": [[canon(k, budget, False), canon(x, budget, False)] for k, x in v.items()]}
        return other(v, t, budget, top)

    return canon


def __sg_harness(SRC, CASES, PKG, STRICT, MODS, ROOTS, ATTRS, DENY):
    import builtins, gc, os, sys
    _setprofile, _settrace = sys.setprofile, sys.settrace
    _setprofile(None)
    _settrace(None)
    g = sys.modules["__main__"].__dict__
    g.pop("__sg_harness", None)
    _wall, _strict = g.pop("__sg_wall", None), g.pop("__sg_strict", None)
    _answer = g.pop("__sg_answer", None)
    _no_json, _server_reader = g.pop("__sg_no_json", None), g.pop("__sg_server_reader", None)
    _fence = g.pop("__sg_fence", None)
    _prepare, _run, _canonical = g.pop("__sg_prepare", None), g.pop("__sg_run", None), g.pop("__sg_canonical", None)  # the worker's (se_gym/sandbox/worker.py: _fence), where it gives one
    # what the worker compiled for us before the fork (se_gym.sandbox.Program): the very code
    # objects compile() below would make; None where it did not (then compiled here)
    pre = g.pop("__sg_units", None)
    if type(pre) is not tuple or len(pre) != 1 + len(CASES):
        pre = (None,) * (1 + len(CASES))
    if STRICT:  # (issue 42: the answer in a process of its own, this one holds the channel)
        return _strict(SRC, CASES, PKG, MODS, ROOTS, ATTRS, DENY, g, pre, _fence, _wall, _answer, _no_json, _server_reader,
                       _prepare, _run, _canonical)
    _write, _urandom = os.write, os.urandom
    # the nonce exists only from here on, in this frame, and is announced as the channel's first
    # record before any answer code exists in the process
    NONCE = _urandom(16).hex()
    _write(3, ('{"hello": "' + NONCE + '"}\n').encode())
    # builtins taken before the answer runs (it may replace them); only those this profile uses:
    # each one bound is a write to a page the forked program shares with its worker (a copy)
    _str, _type, _len, _list, _int = builtins.str, builtins.type, builtins.len, builtins.list, builtins.int
    _exec, _eval, _compile, _BaseException = builtins.exec, builtins.eval, builtins.compile, builtins.BaseException
    _gc_disable = gc.disable
    # records hold only strings, ints and lists of strings here: written as json.dumps writes
    # them (strings escaped by json's own function), without an encoder's Python calls per record
    _esc = __import__("json").encoder.encode_basestring_ascii

    def record(rec):
        out = []
        for k, x in rec.items():
            t = _type(x)
            out.append('"' + k + '": ' + (_esc(x) if t is _str else _str(x) if t is _int else "[" + ", ".join([_esc(y) for y in x]) + "]"))
        return "{" + ", ".join(out) + "}"

    describe, code, loaded, units = _prepare(SRC, CASES, pre, _compile, _str, _type, _BaseException)
    # -- the answer's code runs from here on ------------------------------------------------------
    outcomes = _run(code, loaded, units, g, _exec, _eval, _type, _list, _BaseException, describe)
    # -- post-processing: nothing of the answer may run any more (no hooks, no collector) ---------
    try:
        _gc_disable()
        _setprofile(None)
        _settrace(None)
    except _BaseException:
        pass
    try:
        lines = []
        for i, (ran, v) in enumerate(outcomes):
            rec = {"n": NONCE, "i": i}
            if not ran:
                rec["e"] = v
            else:
                try:
                    p = _str(v)
                    if _type(p) is not _str:
                        raise TypeError("__str__ returned a non-string")
                    rec["p"] = p if _len(p) <= %(max_printed)d else p[:%(max_printed)d]
                    if _len(p) > %(max_printed)d:
                        rec["r"] = "printed result too long"
                except _BaseException as e:
                    rec["e"] = describe(e)
            try:
                lines.append(record(rec))
            except _BaseException:
                lines.append(record({"n": NONCE, "i": i, "e": ["HarnessError", "result not serializable", ""]}))
        lines.append(record({"n": NONCE, "done": _len(outcomes)}))
        data = ("\n".join(lines) + "\n").encode("utf-8", "replace")
        while data:
            data = data[_write(3, data):]
    except _BaseException:
        pass  # no done record: the run counts as a crash


def __sg_strict(SRC, CASES, PKG, MODS, ROOTS, ATTRS, DENY, g, pre, fence, wall, answer, no_json, server_reader, prepare, run,
                canonical):
    # strict (issue 42): this process is the harness.  It compiles, loads what the answer imports,
    # then forks the ANSWER'S PROCESS, which takes the worker's answer filter, drops the modules
    # no answer needs, puts up the run-time wall and runs the answer and its cases, and sends each
    # case's value back over a pipe as plain data (arrays as library handles).  Only after the
    # fork does this process make the nonce and announce it on the channel (fd 3), which the
    # answer's process never holds; it is not dumpable, so that process (the same uid) can neither
    # trace it nor read it.  It reads the answer's report, checks every line, reads each array
    # result from the library server over a connection of its own (fd 5), makes the printed form
    # and the canonical value itself, and writes the records.  Nothing of the answer ever runs here.
    import builtins, os, sys
    _str, _type, _len, _list, _int, _tuple, _dict, _bool, _float, _complex, _repr, _id = (
        builtins.str, builtins.type, builtins.len, builtins.list, builtins.int, builtins.tuple, builtins.dict,
        builtins.bool, builtins.float, builtins.complex, builtins.repr, builtins.id)
    _compile, _BaseException = builtins.compile, builtins.BaseException
    _write, _read, _close = os.write, os.read, os.close
    _json = __import__("json")
    try:
        _cenc = _json.encoder.c_make_encoder(None, no_json, _json.encoder.encode_basestring_ascii, None, ": ", ", ",
                                             False, False, False)
        _scan = _json.scanner.c_make_scanner(_json.JSONDecoder(parse_constant=builtins.float))
        _join = "".join
        _dumps = lambda rec: _join(_cenc(rec, 0))
        # the client's frames (the deferred arrays sent after the cases): NaN and infinities as the
        # client writes them (records never hold them: the strict JSON above refuses them)
        _fenc = _json.encoder.c_make_encoder(None, no_json, _json.encoder.encode_basestring_ascii, None, ":", ",",
                                             False, False, True)
        _frame = lambda msg: _join(_fenc(msg, 0))
    except _BaseException:  # (an interpreter without json's C parts)
        _scan, _dumps = None, _json.JSONEncoder(allow_nan=False).encode
        _frame = _json.JSONEncoder(separators=(",", ":")).encode

    describe, code, loaded, units = prepare(SRC, CASES, pre, _compile, _str, _type, _BaseException)
    for m in MODS:  # what the answer imports (allowed by the gate): loaded before the wall
        try:
            __import__(m)
        except _BaseException:
            pass
    # the library's array type: a client of a library server (issue 31), or the in-process runtime
    # (SE_GYM_STRICT_SERVER=0)
    Array = handle = arrdata = pending = read_array = None
    NAME = "Array"
    try:
        core = __import__(PKG + "._client", fromlist=["_client"])
        Array, pending = core.Array, _type(sys).__getattribute__(core, "_CHANNEL").__dict__
        handle = Array.__dict__["_h"].__get__
        read_array = server_reader(_scan, _write, _read, os.fstat, _str, _type, _int, _len, _list, _tuple, _complex,
                                   _dict, _BaseException)
    except _BaseException:
        try:
            core = __import__(PKG + "._core", fromlist=["_core"])
            Array = _type(sys).__getattribute__(core, "Array")
            arrdata = _type(sys).__getattribute__(core, "_arr_data")
        except _BaseException:
            Array = None
    if Array is not None:
        NAME = Array.__name__
    # the library's scalar classes (se_gym/library/scalars.py), each with its base type's own
    # reading of the value, taken before any answer code exists
    scalars = ()
    try:
        scalars = _tuple((c, _float.__float__ if _float in c.__mro__ else _int.__int__)
                         for c in _type(sys).__getattribute__(core, "_SCALARS").values())
    except _BaseException:
        pass
    served = handle is not None
    try:  # (looked at before the pipe below is made: it may take a number neither holds)
        answer_socket = os.fstat(4).st_mode & 0o170000 == 0o140000
    except _BaseException:
        answer_socket = False
    roots = []  # what the answer's process may still read and run: the interpreter's own files and
    # the library's (warnings print source lines, NumPy in process loads some submodules lazily)
    for m in ("os", "numpy", PKG):
        f = getattr(sys.modules.get(m), "__file__", None)
        if f:
            roots.append(os.path.normpath(os.path.dirname(f)) + "/")
    roots = _tuple(roots) + _tuple(ROOTS)
    _waitpid, _kill, _getpid, _exit = os.waitpid, os.kill, os.getpid, os._exit
    _signals = sys.modules.get("signal")
    r = w = -1
    try:
        r, w = os.pipe()
        if fence is not None:
            fence("harness")  # (the answer's process inherits it: neither can be traced by the other)
        pid = fence("fork") if fence is not None else os.fork()
    except _BaseException as e:
        pid, failed = -1, describe(e)
    if pid == 0:  # -- the answer's process ---------------------------------------------------------
        _close(r)
        _close(3)  # the channel
        if read_array is not None:
            _close(5)  # the harness's connection to the library server
        # its filter (se_gym/sandbox/worker.py: _ANSWER_REFUSED); without it, no answer runs here
        fenced = fence is not None and fence("answer") is True
        fence = None
        answer(w, code, loaded, units, g, PKG, ATTRS, DENY, roots, wall, Array, handle, arrdata, pending, served, _dumps,
               _frame, fenced, run, describe, canonical, scalars)
        return  # (no answer ran: it ends the answer's process itself after its report)
    # -- the harness's process ----------------------------------------------------------------------
    if w >= 0:
        _close(w)
    if answer_socket:
        _close(4)  # (the answer's socket: the server sees its end once the answer's process is gone)
    NONCE = os.urandom(16).hex()

    def emit(recs):
        data = _join_lines([_dumps(dict(rec, n=NONCE)) for rec in recs])
        while data:
            data = data[_write(3, data):]

    _join_lines = lambda lines: ("\n".join(lines) + "\n").encode("utf-8", "replace")
    _write(3, ('{"hello": "' + NONCE + '"}\n').encode())
    if pid < 0:  # no process for the answer: the sandbox's failure, never the answer's
        emit([{"infrastructure": "the answer's process could not be started: " + failed[0] + ": " + failed[1]}])
        return
    chunks, total, over = [], 0, False
    while True:
        try:
            b = _read(r, 1 << 16)
        except InterruptedError:
            continue
        if not b:
            break
        total += _len(b)
        if total > %(max_report)d:  # (far past what the channel can carry: the rest is not read)
            over = True
            try:
                _kill(pid, 9)
            except _BaseException:
                pass
            break
        chunks.append(b)
    _close(r)
    status = _waitpid(pid, 0)[1]
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) and not over else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0 if over else 1

    def finish():
        # this process ends as the answer's did: its exit status or its signal (the worker reads
        # the CPU and memory limits, and an uncaught MemoryError, from those)
        if sig and _signals is not None:
            try:
                _signals.signal(sig, _signals.SIG_DFL)
                _kill(_getpid(), sig)
            except _BaseException:
                pass
        if sig or code:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except _BaseException:
                pass
            _exit(code or 1)

    n = _len(CASES)
    if over:  # (its report was not read to the end)
        emit([{"i": i, "r": "results too large", "p": "<results too large>"} for i in range(n)] + [{"done": n}])
        return finish()
    # the answer's report, line by line: exactly what the answer's harness writes, or forbidden
    refusals, found, done, bad = [], {}, False, ""
    report = b"".join(chunks).split(b"\n")
    if report and not report[-1]:
        report.pop()
    tag = None
    for k, raw in enumerate(report):
        try:
            text = raw.decode("ascii")
            rec, end = _scan(text, 0) if _scan is not None else (_json.loads(text), _len(text))
            if end != _len(text) or _type(rec) is not _dict:
                raise ValueError
        except _BaseException:
            bad = bad or "line %%d is not one of its records" %% (k + 1)
            break
        if k == 0:  # its announcement, written before any answer code existed there
            tag = rec.get("hello")
            if rec.keys() != {"hello"} or _type(tag) is not _str or _len(tag) != 32:
                bad = "it does not start with its harness's announcement"
                break
            continue
        if rec.pop("t", None) != tag:
            bad = "line %%d does not carry its harness's tag" %% (k + 1)
            break
        keys = rec.keys()
        if done:
            bad = "line %%d follows its done record" %% (k + 1)
            break
        if "infrastructure" in rec:
            if keys != {"infrastructure"} or _type(rec["infrastructure"]) is not _str or k != 1:
                bad = "a malformed harness record"
                break
            emit([{"infrastructure": rec["infrastructure"][:300]}])
            return finish()
        if "refused" in rec:
            if keys != {"refused", "what"} or _type(rec["refused"]) is not _str or _type(rec["what"]) is not _str:
                bad = "a malformed refusal"
                break
            refusals.append({"refused": rec["refused"][:200], "what": rec["what"][:200]})
        elif "done" in rec:
            if keys != {"done"} or rec["done"] != n or _type(rec["done"]) is not _int or _len(found) != n:
                bad = "a done record that does not match the cases"
                break
            done = True
        else:
            i = rec.get("i")
            e, kind = rec.get("e"), (keys - {"i"})
            if _type(i) is not _int or not 0 <= i < n or i in found or _len(kind) != 1:
                bad = "line %%d names no case, or a case twice" %% (k + 1)
                break
            kind = "v" if "v" in kind else "r" if "r" in kind else "e" if "e" in kind else ""
            if (kind == "" or kind == "r" and _type(rec["r"]) is not _str or kind == "e" and not (
                    _type(e) is _list and _len(e) == 2 and _type(e[0]) is _str and _type(e[1]) is _str)):
                bad = "line %%d is a malformed record" %% (k + 1)
                break
            found[i] = (kind, rec[kind])
    if refusals or code == %(refused_exit)d and not sig:
        emit(refusals[:20] or [{"refused": "wall", "what": "the answer's process was ended by the wall (its report was lost)"}])
        return finish()
    if bad:
        emit([{"refused": "report", "what": "the answer's process reported what its harness does not write: " + bad}])
        return finish()
    if not done:
        return finish()  # (it ended before its report: no done record, as when a program crashes)

    class Rejected(Exception):
        pass

    class Bad(Exception):
        pass

    class Shown:  # an array in a result: its printed form (as print shows it inside a container) and data
        __slots__ = ("text", "data")

        def __init__(self, text, data):
            self.text, self.data = text, data

        def __repr__(self):
            return self.text

    def build(v, budget, top):
        # the answer's value (its harness's canonical form, arrays as handles) as a Python value,
        # each array read from the library server (or, in process, as reported)
        budget[0] -= 1
        if budget[0] < 0:
            raise Rejected("result too large")
        t = _type(v)
        if v is None or t is _bool or t is _int or t is _str or t is _float:
            return v
        if t is _list:
            return [build(x, budget, False) for x in v]
        if t is _dict and _len(v) == 1:
            (tag, x), = v.items()
            if tag == "$f" and x in ("nan", "inf", "-inf"):
                return _float(x)
            if tag == "$c" and _type(x) is _list and _len(x) == 2:
                re, im = build(x[0], budget, False), build(x[1], budget, False)
                if _type(re) in (_int, _float) and _type(im) in (_int, _float):
                    return _complex(re, im)
            elif tag == "$t" and _type(x) is _list:
                return _tuple([build(y, budget, False) for y in x])
            elif tag == "$d" and _type(x) is _list:
                out = {}
                for kv in x:
                    if _type(kv) is not _list or _len(kv) != 2:
                        raise Bad("a malformed dict")
                    key = build(kv[0], budget, False)
                    try:
                        out[key] = build(kv[1], budget, False)
                    except TypeError:
                        raise Bad("an unhashable key")
                return out
            elif tag == "$h" and served and _type(x) is _int:
                if read_array is None:
                    raise Rejected("result could not be read: no connection to the library server")
                try:
                    text, data = read_array(x, top)
                except RecursionError:
                    raise Rejected("result nested too deeply")
                except _BaseException as e:
                    raise Rejected("result could not be read: " + _type(e).__name__)
                return Shown(text if top else NAME + "(" + _repr(data) + ")", data)
            elif (tag == "$a" and not served and Array is not None and _type(x) is _list and _len(x) == 2
                  and _type(x[0]) is _str):
                return Shown(x[0], build(x[1], budget, False))
        raise Bad("a value its harness does not write")

    def shown(v, t, budget, top):
        if t is Shown:
            return canon(v.data, budget, False)
        raise Rejected("unsupported result type " + t.__name__)

    canon = canonical(Rejected, shown)

    recs = []
    for i in range(n):
        kind, v = found[i]
        if kind == "e":
            recs.append({"i": i, "e": [v[0][:200], v[1][:2000], ""]})
            continue
        if kind == "r":
            recs.append({"i": i, "r": v[:300], "p": "<" + v[:300] + ">"})
            continue
        try:
            obj = build(v, [%(max_nodes)d], True)
            value = canon(obj, [%(max_nodes)d], True)
        except Rejected as e:
            recs.append({"i": i, "r": e.args[0], "p": "<" + e.args[0] + ">"})
            continue
        except RecursionError:
            recs.append({"i": i, "r": "result nested too deeply", "p": "<result nested too deeply>"})
            continue
        except _BaseException as e:
            emit([{"refused": "report", "what": "the answer's process reported what its harness does not write: "
                   + (e.args[0] if _type(e) is Bad else "case %%d" %% i)}])
            return finish()
        try:
            p = obj.text if _type(obj) is Shown else _str(obj)
        except _BaseException as e:  # (an int past the digits str() prints, say)
            recs.append({"i": i, "e": describe(e)})
            continue
        if _len(p) > %(max_printed)d:
            recs.append({"i": i, "r": "printed result too long", "p": p[:%(max_printed)d]})
        else:
            recs.append({"i": i, "v": value, "p": p})
    lines = []
    for rec in recs:
        try:
            lines.append(_dumps(dict(rec, n=NONCE)))
        except _BaseException:
            lines.append(_dumps({"n": NONCE, "i": rec["i"], "e": ["HarnessError", "result not serializable", ""]}))
    lines.append(_dumps({"n": NONCE, "done": n}))
    data = _join_lines(lines)
    while data:
        data = data[_write(3, data):]
    return finish()


def __sg_virtual(Module, err_write, real_datetime=None):
    # strict, issue 42's honest forms round 6: the harmless part of os, os.path, time, logging,
    # traceback and sys's streams, written here (no function of the real modules: their globals hold
    # os, sys and the process).  Each name reaches only these functions, plain values, `print` and
    # the stderr stream's write (what print(file=sys.stderr) reaches anyway).  Nothing here reads
    # the process, its files, its environment or a real clock.
    def _text(p):
        if type(p) is not str:
            raise TypeError("expected str, not " + type(p).__name__)
        return p

    def join(a, *p):
        path = _text(a)
        for b in p:
            b = _text(b)
            if b.startswith("/"):
                path = b
            elif not path or path.endswith("/"):
                path += b
            else:
                path += "/" + b
        return path

    def split(p):
        p = _text(p)
        i = p.rfind("/") + 1
        head, tail = p[:i], p[i:]
        if head and head != "/" * len(head):
            head = head.rstrip("/")
        return head, tail

    def basename(p):
        p = _text(p)
        return p[p.rfind("/") + 1:]

    def dirname(p):
        return split(p)[0]

    def splitext(p):
        p = _text(p)
        s, d = p.rfind("/"), p.rfind(".")
        if d > s:
            for c in p[s + 1:d]:
                if c != ".":
                    return p[:d], p[d:]
        return p, ""

    def isabs(p):
        return _text(p).startswith("/")

    def normcase(p):
        return _text(p)

    def normpath(p):
        p = _text(p)
        if not p:
            return "."
        lead = 2 if p.startswith("//") and not p.startswith("///") else 1 if p.startswith("/") else 0
        out = []
        for c in p.split("/"):
            if c in ("", "."):
                continue
            if c != ".." or (not lead and not out) or (out and out[-1] == ".."):
                out.append(c)
            elif out:
                out.pop()
        return "/" * lead + "/".join(out) or "."

    def commonprefix(m):
        if not m:
            return ""
        lo, hi = min(m), max(m)
        for i, c in enumerate(lo):
            if c != hi[i]:
                return lo[:i]
        return lo

    def getenv(key, default=None):
        _text(key)
        return default  # (an empty environment: the sandbox's would tell nothing honest)

    def cpu_count():
        return 1

    path = Module("os.path")
    path.__dict__.update(join=join, split=split, basename=basename, dirname=dirname, splitext=splitext, isabs=isabs,
                         normcase=normcase, normpath=normpath, commonprefix=commonprefix, sep="/", extsep=".",
                         curdir=".", pardir="..")
    os = Module("os")
    os.__dict__.update(path=path, sep="/", altsep=None, extsep=".", pathsep=":", linesep="\n", curdir=".", pardir="..",
                       devnull="/dev/null", name="posix", getenv=getenv, cpu_count=cpu_count)

    # a virtual clock: it starts at the same value in every program and moves by one millisecond at
    # each reading (and by what sleep asks, without sleeping), so its readings depend only on the
    # program's own calls: the dependence check's two runs read the same values
    now = [0]
    EPOCH = 1_700_000_000 * 10 ** 9

    def tick():
        now[0] += 1_000_000
        return now[0]

    def time_ns():
        return EPOCH + tick()

    def time():
        return (EPOCH + tick()) / 1e9

    def perf_counter_ns():
        return tick()

    def perf_counter():
        return tick() / 1e9

    def sleep(secs):
        if type(secs) not in (int, float, bool):
            raise TypeError("sleep() takes a number of seconds")
        if secs != secs:
            raise ValueError("Invalid value NaN (not a number)")
        if secs < 0:
            raise ValueError("sleep length must be non-negative")
        now[0] += int(min(secs, 1e9) * 1e9)

    clock = Module("time")
    clock.__dict__.update(time=time, time_ns=time_ns, perf_counter=perf_counter, perf_counter_ns=perf_counter_ns,
                          monotonic=perf_counter, monotonic_ns=perf_counter_ns, process_time=perf_counter,
                          process_time_ns=perf_counter_ns, sleep=sleep)

    # the streams: write-only, as print writes (output is not scored)
    def out_write(s):
        print(_text(s), end="")
        return len(s)

    def err_write_(s):
        err_write(_text(s))
        return len(s)

    class Stream:
        encoding, errors = "utf-8", "strict"

        def __init__(self, name, write):
            self.name, self.write = name, write

        def writelines(self, lines):
            for s in lines:
                self.write(s)

        def flush(self):
            pass

        def isatty(self):
            return False

        def writable(self):
            return True

    streams = Module("sys")
    streams.__dict__.update(stdout=Stream("<stdout>", out_write), stderr=Stream("<stderr>", err_write_))

    # logging: loggers that record nothing (no handler, no file, no thread)
    NOTSET, DEBUG, INFO, WARNING, ERROR, CRITICAL = 0, 10, 20, 30, 40, 50

    def nothing(*args, **kwargs):
        pass

    class Handler:
        def __init__(self, *args, **kwargs):
            self.level = NOTSET

        def setLevel(self, level):
            self.level = level

        setFormatter = addFilter = removeFilter = flush = close = nothing

    class NullHandler(Handler):
        pass

    class Formatter:
        def __init__(self, *args, **kwargs):
            pass

        def format(self, record):
            return str(record)

    class StreamHandler(Handler):
        pass

    loggers = {}

    class Logger:
        def __init__(self, name, level=NOTSET):
            self.name, self.level, self.handlers, self.propagate, self.disabled = name, level, [], True, False

        def setLevel(self, level):
            self.level = level

        def getEffectiveLevel(self):
            return self.level or WARNING

        def isEnabledFor(self, level):
            return False

        def hasHandlers(self):
            return bool(self.handlers)

        def addHandler(self, h):
            if h not in self.handlers:
                self.handlers.append(h)

        def removeHandler(self, h):
            if h in self.handlers:
                self.handlers.remove(h)

        def getChild(self, suffix):
            return getLogger(self.name + "." + _text(suffix))

        debug = info = warning = warn = error = exception = critical = fatal = log = addFilter = removeFilter = nothing

    def getLogger(name=None):
        key = "root" if name is None or name == "root" else _text(name)
        got = loggers.get(key)
        if got is None:
            got = loggers[key] = Logger(key, WARNING if key == "root" else NOTSET)
        return got

    logging = Module("logging")
    logging.__dict__.update(getLogger=getLogger, basicConfig=nothing, debug=nothing, info=nothing, warning=nothing,
                            warn=nothing, error=nothing, exception=nothing, critical=nothing, fatal=nothing, log=nothing,
                            disable=nothing, captureWarnings=nothing, Logger=Logger, Handler=Handler,
                            NullHandler=NullHandler, StreamHandler=StreamHandler, Formatter=Formatter, NOTSET=NOTSET, DEBUG=DEBUG, INFO=INFO,
                            WARNING=WARNING, WARN=WARNING, ERROR=ERROR, CRITICAL=CRITICAL, FATAL=CRITICAL)

    # traceback: the exception's type and message, no frames (those below the answer's are the harness's)
    def format_exception_only(exc, value=None):
        e = value if value is not None or isinstance(exc, type) else exc
        if e is None:
            return ["NoneType: None\n"]
        msg = str(e)
        return [type(e).__name__ + (": " + msg if msg else "") + "\n"]

    def format_exception(exc, value=None, tb=None, limit=None, chain=True):
        return ["Traceback (most recent call last):\n", "  (frames not shown under strict)\n"] + format_exception_only(exc, value)

    def format_exc(limit=None, chain=True):
        try:
            raise  # (the exception being handled, as sys.exc_info would give it)
        except RuntimeError as e:
            if str(e) == "No active exception to reraise":
                return "NoneType: None\n"
            return "".join(format_exception(e))
        except BaseException as e:
            return "".join(format_exception(e))

    def print_exc(limit=None, file=None, chain=True):
        (file or streams.stderr).write(format_exc())

    def print_exception(exc, value=None, tb=None, limit=None, file=None, chain=True):
        (file or streams.stderr).write("".join(format_exception(exc, value)))

    # datetime: the real classes' arithmetic, parsing and formatting, with now(), today() and
    # utcnow() read from the virtual clock (subclasses: what they make is of the same subclass)
    dates = Module("datetime")
    if real_datetime is not None:
        rd = real_datetime
        utc = rd.timezone.utc

        class date(rd.date):
            __slots__ = ()

            @classmethod
            def today(cls):
                return cls.fromtimestamp(time())

        class datetime(rd.datetime, date):
            __slots__ = ()

            @classmethod
            def now(cls, tz=None):
                return cls.fromtimestamp(time(), tz)

            @classmethod
            def today(cls):
                return cls.fromtimestamp(time())

            @classmethod
            def utcnow(cls):
                return cls.fromtimestamp(time(), utc).replace(tzinfo=None)

        date.__module__ = datetime.__module__ = "datetime"
        dates.__dict__.update(date=date, datetime=datetime, time=rd.time, timedelta=rd.timedelta, timezone=rd.timezone,
                              tzinfo=rd.tzinfo, MINYEAR=rd.MINYEAR, MAXYEAR=rd.MAXYEAR, UTC=utc)
        rd = None

    traceback = Module("traceback")
    traceback.__dict__.update(format_exc=format_exc, print_exc=print_exc, format_exception=format_exception,
                              format_exception_only=format_exception_only, print_exception=print_exception)
    return {"os": os, "os.path": path, "time": clock, "logging": logging, "traceback": traceback, "sys": streams,
            "datetime": dates}


def __sg_answer(w, code, loaded, units, g, PKG, ATTRS, DENY, ROOTS, wall, Array, handle, arrdata, pending, served, dumps,
                frame, fenced, run, describe, canonical, scalars=()):
    # strict: the answer's process (see __sg_strict).  Nothing here is trusted once the answer has
    # run (the harness's process checks all it reports); what matters is that nothing here is
    # worth having: no nonce, no channel, no connection of the harness's, no module that reaches
    # the system (dropped below), no signal handler (the worker's answer filter), and the wall.
    import builtins, sys
    _str, _type, _len, _list, _int, _tuple, _dict, _bool, _float, _complex, _repr, _id = (
        builtins.str, builtins.type, builtins.len, builtins.list, builtins.int, builtins.tuple, builtins.dict,
        builtins.bool, builtins.float, builtins.complex, builtins.repr, builtins.id)
    _exec, _eval, _BaseException, _reversed = builtins.exec, builtins.eval, builtins.BaseException, builtins.reversed
    _os = __import__("os")
    _write, _read, _exit = _os.write, _os.read, _os._exit
    _tname = _type.__dict__["__name__"].__get__  # (a class's own name, whatever its metaclass says)
    _modules = sys.modules
    _gc_disable = _modules["gc"].disable
    _flushes = (sys.stdout.flush, sys.stderr.flush)  # (the streams the worker gave: C methods)
    # this process's own tag on each line it reports, announced before any answer code exists:
    # a line without it is one the answer wrote (the harness's process then forbids the report)
    TAG = _os.urandom(16).hex()
    _os = None
    hello = ('{"hello": "' + TAG + '"}\n').encode()
    if not fenced:  # (the sandbox could not put the answer's filter on this process: its failure)
        hello += ('{"t": "' + TAG + '", "infrastructure": "the sandbox cannot filter the answer\'s process"}\n').encode()
    while hello:
        hello = hello[_write(w, hello):]
    if not fenced:
        return
    # what the worker left loaded and no answer needs: the ways to memory, frames, signals, files
    # and processes (reachable through any module's sys, or a function's globals, otherwise)
    drop, names = %(drop_modules)r, None
    memo = _modules.get("__sg_wall_memo")  # (the wall takes it out, below)
    memo = memo.__dict__.get("tables") if _type(memo) is _type(sys) else None
    if _type(memo) is _tuple and _len(memo) == 7 and memo[0] == %(wall_key)r and _type(memo[6]) is _tuple:
        # those the worker's warm-up found as it ended (STRICT_WARMUP), and those loaded since: it put
        # the memo into sys.modules last, and nothing takes that name out or puts it back before the
        # wall does, so every module loaded since lies after it (a scan of the newest names only:
        # the whole scan wrote to every page holding a module's name)
        names = _list(memo[6])
        for m in _reversed(_modules):
            if m == "__sg_wall_memo":
                break
            if m.split(".")[0] in drop:
                names.append(m)
        else:
            names = None
    if names is None:
        names = [m for m in _modules if m.split(".")[0] in drop]
    for name in names:
        _modules.pop(name, None)
    memo = None
    ours = {_id(c) for c in units if _type(c) is not _list}
    if code is not None:
        ours.add(_id(code))
    # the answer's builtins: without the forbidden ones, and an __import__ that hands out
    # allowed modules as proxies holding only their allow-listed attributes
    safe = _dict(builtins.__dict__)
    for name in DENY:
        safe.pop(name, None)
    _import, _Module, proxies = builtins.__import__, _type(sys), {}
    _setrec = sys.setrecursionlimit
    # round 6's modules, written by the harness (__sg_virtual), made at their first import
    virtual, made, _errw = g.pop("__sg_virtual", None), [], sys.stderr.write

    def setrecursionlimit(limit):  # (sys's, bounded: issue 42)
        return _setrec(limit if _type(limit) is not _int or limit <= %(recursion_max)d else %(recursion_max)d)

    VIRTUAL = frozenset(%(virtual)r)

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level != 0 or _type(name) is not _str:
            raise ImportError("relative imports are not allowed")
        if name == PKG or name.startswith(PKG + "."):
            return _import(name, None, None, fromlist, 0)
        if not fromlist and name in VIRTUAL and "." in name:
            name = name.partition(".")[0]  # (`import os.path` binds os)
        proxy = proxies.get(name)
        if proxy is None:
            if name not in ATTRS:
                raise ImportError("import of " + name + " is not allowed")
            if (name in VIRTUAL or name == "sys") and not made and virtual is not None:
                made.append(virtual(_Module, _errw, _modules.get("datetime")))
            if name in VIRTUAL:
                real = made[0][name]
            else:
                real = _modules.get(name) or (_import(name) and _modules[name])
            over = made[0]["sys"].__dict__ if name == "sys" and made else {}
            proxy = _Module(name)
            for a in ATTRS[name]:
                if name == "sys" and a in ("stdout", "stderr") and a not in over:
                    continue  # (only the harness's write-only streams, never the real ones)
                try:
                    proxy.__dict__[a] = setrecursionlimit if name == "sys" and a == "setrecursionlimit" else over[a] if a in over else real.__dict__[a]
                except _BaseException:
                    pass
            proxies[name] = proxy
        return proxy

    safe["__import__"] = guarded_import
    wall(w, TAG, ours, ROOTS, _write, dumps, served)
    g["__builtins__"] = safe  # (after the wall: functions made from now on resolve builtins there)
    # -- the answer's code runs from here on ------------------------------------------------------
    outcomes = run(code, loaded, units, g, _exec, _eval, _type, _list, _BaseException, describe)
    # -- after the cases: nothing of the answer's runs any more (no collector: its __del__ methods;
    # no client function: the answer can rebind them; exact types only, read with C functions
    # taken before it ran; and the process ends right after its report, before any exit handler
    # or finaliser of the answer's could change an array the harness then reads) ---------------
    try:
        _gc_disable()
    except _BaseException:
        pass
    if pending is not None:
        # arrays the client made without a round trip (plain numbers) reach the server now: the
        # client's own request, written and its reply read here (the harness's process reads them
        # over its own connection once this process is gone)
        try:
            defs = pending.get("defs")
            if _type(defs) is _list and defs:
                body = frame(["defs", [], defs, ["sync", []]]).encode("ascii")  # (NaN allowed: an array may hold it)
                data = _len(body).to_bytes(4, "big") + body
                while data:
                    data = data[_write(4, data):]
                got, need = b"", 4
                while _len(got) < need:
                    chunk = _read(4, need - _len(got))
                    if not chunk:
                        break
                    got += chunk
                    if need == 4 and _len(got) == 4:
                        need = 4 + min(_int.from_bytes(got, "big"), 1 << 20)
        except _BaseException:
            pass

    class Rejected(Exception):
        pass

    def array(v, t, budget, top):
        if Array is not None and t is Array:
            if served:
                return {"$h": handle(v, Array)}
            return {"$a": [_str(v) if top else _repr(v), canon(arrdata(v).tolist(), budget, False)]}
        for cls, plain in scalars:  # (the library's own scalar: its value, read by the base type)
            if t is cls:
                return canon(plain(v), budget, top)
        raise Rejected("unsupported result type " + _tname(t))

    canon = canonical(Rejected, array)

    lines = []
    for i, (ran, v) in enumerate(outcomes):
        if not ran:
            rec = {"t": TAG, "i": i, "e": v[:2]}
        else:
            try:
                rec = {"t": TAG, "i": i, "v": canon(v, [%(max_nodes)d], True)}
            except Rejected as r:
                rec = {"t": TAG, "i": i, "r": r.args[0]}
            except RecursionError:
                rec = {"t": TAG, "i": i, "r": "result nested too deeply"}
            except _BaseException as e:
                rec = {"t": TAG, "i": i, "r": "result could not be read: " + _tname(_type(e))}
        try:
            lines.append(dumps(rec))
        except _BaseException as e:  # (an int past the digits repr() prints, say: as str() of it would)
            lines.append(dumps({"t": TAG, "i": i, "e": describe(e)[:2]}))
    lines.append(dumps({"t": TAG, "done": _len(outcomes)}))
    data = ("\n".join(lines) + "\n").encode("ascii", "replace")
    status = 0
    try:
        while data:
            data = data[_write(w, data):]
    except _BaseException:
        status = 1
    for flush in _flushes:  # (what the answer printed, as `python main.py` flushes it at exit)
        try:
            flush()
        except _BaseException:
            status = status or 120
    _exit(status)


def __sg_wall(SINK, TAG, OURS, ROOTS, _write, _dumps, SERVER):
    # strict: the runtime wall, an audit hook refusing what no honest answer needs (issue 21), in the
    # answer's own process (issue 42).  A refusal is reported on SINK (the pipe to the harness's
    # process) and ends that process at once: nothing the answer does after it counts.
    # SERVER: the library is a client of a library server (issue 31): NumPy is never loaded here.
    # Everything the hook uses is bound here, before the answer runs, and is C code or immutable:
    # no global name lookup and no Python function of a module the answer can patch (a patched
    # posixpath.normpath once showed it every path as one inside the roots).
    _type, _str, _id, _len, _BaseException, _bytes, _PermissionError = type, str, id, len, BaseException, bytes, PermissionError
    _exit = __import__("os")._exit
    _norm = getattr(__import__("posix"), "_path_normpath", None)
    if _norm is None:  # (a Python without posix._path_normpath: the same rules, on builtins only)
        _split, _slash = str.split, "/".join

        def _norm(p):
            parts, rooted = [], _startswith(p, "/")
            for part in _split(p, "/"):
                if part == "" or part == ".":
                    continue
                if part == "..":
                    if parts and parts[-1] != "..":
                        parts.pop()
                    elif not rooted:
                        parts.append(part)
                    continue
                parts.append(part)
            return ("/" if rooted else "") + _slash(parts) or "."
    _startswith, _endswith, _fullmatch = str.startswith, str.endswith, __import__("re").compile(%(nt)r).fullmatch
    _isidentifier, _list, _compile, _words = str.isidentifier, list, compile, __import__("re").compile(%(words)r).findall
    # dataclasses' generated methods (issue 31): dataclasses compiles their source from templates
    # with the field names written in, and field names come from the answer (any string, through
    # __annotations__).  Such source runs only where its syntax tree stays inside what the templates
    # use, and every name, attribute, argument and string word in it is one the permissive gate would
    # let the answer write itself (no dunder but the templates' own, no frame/code/hook attribute):
    # so the generated code can do nothing the answer's own code could not.  The tree is made by the
    # builtin compile (no Python of a module the answer could patch), and the AST classes are read
    # through the identities taken here, their attributes frozen by the hook (object.__setattr__).
    import ast as _ast_mod
    _ONLY_AST = _ast_mod.PyCF_ONLY_AST
    # the tables below as the worker's warm-up made them (STRICT_WARMUP: once per worker, not once per
    # program, where building them wrote to ~200 pages the fork shares with the worker); trusted
    # code made them before any program ran, and this process takes them out before the answer runs
    _memo = __import__("sys").modules.pop("__sg_wall_memo", None)
    _memo = _memo.__dict__.get("tables") if _type(_memo) is _type(_ast_mod) else None
    if (_type(_memo) is tuple and _len(_memo) == 7 and _memo[0] == %(wall_key)r and _type(_memo[1]) is dict
            and _type(_memo[2]) is frozenset and _type(_memo[3]) is frozenset and _type(_memo[4]) is frozenset
            and _type(_memo[5]) is frozenset):
        DC_NODES, AST_TYPES, STDLIB, REFUSED_WORDS, NO_IMPORT = _memo[1:6]
    else:
        DC_NODES = {}  # the node classes dataclasses' templates use -> their fields
        for _n in %(dc_node_names)r:
            DC_NODES[getattr(_ast_mod, _n)] = tuple(getattr(_ast_mod, _n)._fields)
        AST_TYPES = set()
        _todo = [_ast_mod.AST]
        while _todo:
            _c = _todo.pop()
            AST_TYPES.add(_id(_c))
            _todo.extend(type.__subclasses__(_c))
        STDLIB = frozenset(__import__("sys").stdlib_module_names)
        REFUSED_WORDS = frozenset(%(refused_words)r)
        NO_IMPORT = frozenset(%(no_import)r)
    _memo = None
    _getattr, _range, _scalars = getattr, range, (bool, int)
    _Name, _Attribute, _arg, _Constant, _FunctionDef, _Return = (
        _ast_mod.Name, _ast_mod.Attribute, _ast_mod.arg, _ast_mod.Constant, _ast_mod.FunctionDef, _ast_mod.Return)
    DC_DUNDERS = frozenset({"__create_fn__", "__dataclass_builtins_object__", "__dataclass_self__", "__class__",
                            "__qualname__", "__setattr__", "__delattr__", "__post_init__", "__init__", "__repr__",
                            "__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"})

    def dc_word(w):
        if _startswith(w, "__"):
            return w in DC_DUNDERS
        return w not in REFUSED_WORDS

    def dataclass_source(src):
        try:
            tree = _compile(src, "<dataclass>", "exec", _ONLY_AST, True)
        except _BaseException:
            return False
        outer = tree.body
        if _len(outer) != 1 or _type(outer[0]) is not _FunctionDef or outer[0].name != "__create_fn__" or outer[0].decorator_list:
            return False
        inner = outer[0].body
        if not inner or _type(inner[-1]) is not _Return:
            return False
        todo = [tree]
        while todo:
            n = todo.pop()
            fields = DC_NODES.get(_type(n))
            if fields is None:
                return False
            t = _type(n)
            if t is _Name:
                w = n.id
            elif t is _Attribute:
                w = n.attr
            elif t is _arg:
                w = n.arg
            elif t is _FunctionDef:
                w = n.name
                if n.decorator_list:
                    return False
            elif t is _Constant:
                v = n.value
                if _type(v) is _str:
                    for w in _words(v):
                        if not dc_word(w):
                            return False
                elif v is not None and _type(v) not in _scalars:
                    return False
                continue
            else:
                w = "x"
            if _type(w) is not _str or not _isidentifier(w) or not dc_word(w):
                return False
            for f in fields:
                v = _getattr(n, f, None)
                if _type(v) is _list:
                    todo.extend(v)
                elif _id(_type(v)) in AST_TYPES:
                    todo.append(v)
        return True

    # where a function's code, defaults or keyword defaults may be read: typing.overload keys its
    # registry by the first line number; inspect.signature reads them for the docstring dataclasses
    # writes (only under dataclasses' class processing).  Nothing of the code reaches the caller.
    CODE_READERS = {"typing.py": ("overload",), "inspect.py": ("_signature_from_function", "_signature_is_functionlike")}
    ALLOWED = frozenset(%(harmless)r)
    state = [0, 0, 0]  # the next exec is a namedtuple's template; .pyc files read; inside our own look
    _sys = __import__("sys")
    _getframe, _os = _sys._getframe, __import__("os")
    CWD = _norm(_os.getcwd()) + "/"
    _lib = _os.path.dirname(_os.__file__)
    DATACLASSES = _norm(_os.path.join(_lib, "dataclasses.py"))
    CODE_FILES = {_norm(_os.path.join(_lib, f)): names for f, names in CODE_READERS.items()}
    PROCESS_CLASS = (DATACLASSES, "_process_class")
    FRAME_USERS = {
        _norm(_os.path.join(_lib, "collections", "__init__.py")): ("namedtuple",),
        _norm(_os.path.join(_lib, "typing.py")): ("_caller", "NamedTuple", "TypedDict", "__init__"),
        _norm(_os.path.join(_lib, "enum.py")): ("_create_", "__call__", "_convert_"),
    }

    def refuse(event, what):
        try:
            data = (_dumps({"t": TAG, "refused": event, "what": what[:200]}) + "\n").encode("ascii", "replace")
            while data:
                data = data[_write(SINK, data):]
        except _BaseException:
            pass
        _exit(%(refused_exit)d)
        raise _PermissionError("se-gym strict: " + event + " is not allowed")

    def code_reader():
        # typing.overload, or inspect's signature reading under dataclasses' _process_class
        state[2] = 1
        try:
            caller = _getframe(2).f_code
            names = CODE_FILES.get(_norm(caller.co_filename), ())
            if caller.co_name not in names:
                return False
            if names[0] == "overload":
                return True
            for depth in _range(3, 16):
                c = _getframe(depth).f_code
                if (_norm(c.co_filename), c.co_name) == PROCESS_CLASS:
                    return True
            return False
        except _BaseException:
            return False
        finally:
            state[2] = 0

    def hook(event, args):
        if event in ALLOWED or state[2]:
            return  # (state[2]: events of the hook's own look at its caller)
        if event == "open":
            path, mode = args[0], args[1]
            if _type(path) is _str and (mode is None or mode in ("r", "rb")) and (args[2] or 0) & 3 == 0:
                p = _norm(path)
                for root in ROOTS:
                    if _startswith(p, root):
                        if _endswith(p, ".pyc"):
                            state[1] += 1  # the import system unmarshals what it just read
                        return
            refuse(event, _str(path))
        elif event == "marshal.loads" and state[1] > 0:
            state[1] -= 1
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
            if _type(path) is _str:
                p = _norm(path) + "/"
                if p == CWD:
                    return  # the import system looks into sys.path[0], the program's own folder
                for root in ROOTS:
                    if _startswith(p, root):
                        return  # ... and into NumPy's folders
            refuse(event, _str(path))
        elif event == "sys._getframe":
            # collections.namedtuple, typing and enum read their caller's module name this way; a
            # frame handed to anyone else could lead to the harness's
            state[2] = 1
            try:
                caller = _getframe(1).f_code
                where = (_norm(caller.co_filename), caller.co_name)
            except _BaseException:
                where = None
            finally:
                state[2] = 0
            if where is not None and where[1] in FRAME_USERS.get(where[0], ()):
                return
            refuse(event, "")
        elif event == "exec":
            c = args[0]
            if _id(c) in OURS:
                return
            if state[0]:
                state[0] = 0
                return
            try:
                f = c.co_filename
            except _BaseException:
                f = None
            if _type(f) is _str and c.co_name == "<module>":
                if _startswith(f, "<frozen "):
                    return  # a module frozen into the interpreter (code cannot be made any more)
                p = _norm(f)
                if SERVER and "/numpy/" in p:
                    refuse(event, p)  # (NumPy's files, loaded under another name: nothing here needs them)
                for root in ROOTS:
                    if _startswith(p, root):
                        return  # a module of the interpreter, NumPy or the library, loading
            refuse(event, _str(f))
        elif event == "import":
            # NumPy loads some submodules lazily, and they the standard library: the answer cannot
            # name either (its __import__ only hands out allowed modules), and what they could do
            # (files, processes, sockets, frames, code) is refused by the events below
            name = args[0]
            if _type(name) is _str:
                top = name.partition(".")[0]
                if top == "numpy" and not SERVER or top in STDLIB and top not in NO_IMPORT:
                    return
            refuse(event, _str(name))
        elif event == "compile":
            src = args[0]
            if _type(src) is _bytes and _fullmatch(src) and args[1] == "<string>":
                state[0] = 1  # collections.namedtuple builds its __new__ this way
                return
            if _type(src) is _bytes and args[1] == "<string>":
                state[2] = 1
                try:
                    caller = _getframe(1).f_code
                    ok = (_norm(caller.co_filename) == DATACLASSES and caller.co_name in ("_create_fn", "add_fns_to_class")
                          and dataclass_source(src))
                except _BaseException:
                    ok = False
                finally:
                    state[2] = 0
                if ok:
                    state[0] = 1  # the exec of the code just compiled
                    return
            refuse(event, _str(args[1]))
        elif event == "object.__getattr__":
            # numpy.ma (loaded lazily by unique, intersect1d...) builds its docstrings by reading
            # functions' __code__/__defaults__ in numpy/_utils/_inspect.py: allowed from there only
            state[2] = 1
            try:
                f = _norm(_getframe(1).f_code.co_filename)
            except _BaseException:
                f = ""
            finally:
                state[2] = 0
            if _endswith(f, "/numpy/_utils/_inspect.py") and not SERVER:
                for root in ROOTS:
                    if _startswith(f, root):
                        return
            if args[1] in ("__code__", "__defaults__", "__kwdefaults__") and code_reader():
                return
            refuse(event, args[1] if _type(args[1]) is _str else "")
        elif event == "object.__setattr__":
            name = args[1]
            # NumPy's hooks on a class; a function's code swapped; the AST classes the dataclass
            # check above reads (a property on ast.Name could show it another name)
            if _type(name) is _str and (_startswith(name, "__array") or name == "__code__") or _id(args[0]) in AST_TYPES:
                refuse(event, name if _type(name) is _str else "")
        else:
            what = ""
            try:
                what = _str(args[0]) if _type(args[0]) is _str else ""
            except _BaseException:
                pass
            refuse(event, what)

    __import__("sys").addaudithook(hook)
""" % {"max_nodes": MAX_NODES, "max_printed": MAX_PRINTED, "nt": NAMEDTUPLE_TEMPLATE, "harmless": sorted(HARMLESS_EVENTS),
       "max_report": MAX_REPORT, "refused_exit": REFUSED_EXIT, "recursion_max": RECURSION_MAX,
       "drop_modules": DROP_MODULES, "virtual": sorted(VIRTUAL_MODULES),
       "no_import": sorted(NO_IMPORT), "refused_words": sorted(_DC_REFUSED_WORDS), "dc_node_names": _DC_NODE_NAMES, "words": _WORDS,
       "wall_key": _WALL_KEY}


def _only(prelude: str, names: tuple[str, ...]) -> str:
    """The prelude less the functions not in ``names`` (its text cut at each top-level ``def``)."""
    blocks = re.split(r"(?m)^(?=def )", prelude)
    return "".join(b for b in blocks if not b.startswith("def ") or b[4:b.index("(")] in names)


# The prelude a program carries: strict's whole (its two processes, the wall, the server reader),
# sebench's only the three functions it calls (__sg_harness takes the others out of the globals as
# None and, not strict, never uses them): ~6 KB instead of ~52 KB in each program the judge sends,
# the worker reads and writes to main.py (~40 us of copying per program).  Round 6's modules
# (__sg_virtual, ~10 KB) travel only with the programs of answers that import them or name sys's
# streams ("virtual"): a program's text past 64 KB is compiled in its child, not cached by the worker,
# and the strict prelude with them is ~63 KB (with them in every program: +0.9 ms of program CPU per
# parity_dev program, measured)
_PRELUDES = {True: _only(_PRELUDE, tuple(n for n in re.findall(r"(?m)^def (\w+)", _PRELUDE) if n != "__sg_virtual")),
             False: _only(_PRELUDE, ("__sg_prepare", "__sg_run", "__sg_harness")), "virtual": _PRELUDE}

# Code each strict worker runs once before its first program (the judge's warm-up, se_gym.judge.core
# sandbox_warmup): what the answer's process would otherwise build afresh, page by copied page, in
# every program.  The two patterns the wall compiles, left in re's cache (the wall's compile then
# finds them); the wall's tables of the AST classes (__sg_wall, which takes them out of sys.modules
# in the answer's process and builds them itself where they are missing; the modules the answer's
# process drops that were loaded by then, so that it scans only the names loaded since; the patterns of words
# and names it checks, under their key).  Measured alone (the answer's process timed from inside on
# parity_dev's 508 strict programs, medians, load 11-25: benchmarks/strict_profile.py stages): the
# wall's set-up 1.06 -> 0.32 ms of CPU, 427 -> 78 page faults; the modules' drop 0.29 -> 0.12 ms,
# 88 -> 43 page faults.
STRICT_WARMUP = f"""
import ast, re, sys, types
re.compile({NAMEDTUPLE_TEMPLATE!r})
re.compile({_WORDS!r})
memo = types.ModuleType("__sg_wall_memo")
nodes = {{}}
for name in {_DC_NODE_NAMES!r}:
    nodes[getattr(ast, name)] = tuple(getattr(ast, name)._fields)
ids, todo = set(), [ast.AST]
while todo:
    c = todo.pop()
    ids.add(id(c))
    todo.extend(type.__subclasses__(c))
drop = frozenset({sorted(DROP_MODULES)!r})
memo.tables = ({_WALL_KEY!r}, nodes, frozenset(ids), frozenset(sys.stdlib_module_names),
               frozenset({sorted(_DC_REFUSED_WORDS)!r}), frozenset({sorted(NO_IMPORT)!r}),
               tuple(m for m in sys.modules if m.split(".")[0] in drop))
sys.modules.pop("__sg_wall_memo", None)
sys.modules["__sg_wall_memo"] = memo  # (last: the answer's process finds the modules loaded since after it)
"""


# Compiling in the judge's own process: the worker forks a program after each request, so every page
# it writes between two forks faults (compiling there cost as much as it saved the child); here it
# costs nothing more than the compile.  Only where compiling certainly warns of nothing (a warning
# belongs on the program's stderr, as `python main.py` prints it): the rules below follow
# CPython 3.11-3.13's compiler (literal `is` comparisons, literal calls and subscripts, assert on a
# tuple) and tokenizer (escape sequences, a number run into a keyword); elsewhere the worker compiles.
_PARENT_COMPILE = sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13)
_NUMBER_THEN_KEYWORD = re.compile(r"\d(?:and|else|for|if|in|is|not|or)")
_PLAIN = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)
_SINGLETONS = (None, True, False, Ellipsis)
_WATCHED = frozenset({ast.Compare, ast.Call, ast.Subscript, ast.Assert})  # (AST node classes are final)
_TREES = {"exec": ast.Module, "eval": ast.Expression, "single": ast.Interactive}


def _compiles_silently(source: str, nodes: Sequence[ast.AST]) -> bool:
    """Whether compiling ``source`` (parsed into ``nodes``, gates.walk order) emits no warning."""
    if "\\" in source or _NUMBER_THEN_KEYWORD.search(source):
        return False
    watch = _WATCHED
    for n in nodes:
        if type(n) not in watch:
            continue
        if isinstance(n, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):
                for o in (n.left, *n.comparators):
                    if not (isinstance(o, _PLAIN) or isinstance(o, ast.Constant) and any(o.value is x for x in _SINGLETONS)):
                        return False
        elif isinstance(n, ast.Call):
            if not isinstance(n.func, _PLAIN):
                return False
        elif isinstance(n, ast.Subscript):
            if not isinstance(n.value, _PLAIN):
                return False
        elif isinstance(n, ast.Assert):
            if isinstance(n.test, ast.Tuple):
                return False
    return True


def compiled_unit(source: str, filename: str, mode: str, nodes: Sequence[ast.AST] | None = None) -> bytes | None:
    """``marshal.dumps(compile(source, filename, mode, 0, True))`` when that certainly warns of
    nothing (None otherwise, and for source that does not compile: the worker or the program then
    compiles it and meets its errors and warnings).  ``nodes``: the parsed source, if at hand."""
    if not _PARENT_COMPILE or "\\" in source or _NUMBER_THEN_KEYWORD.search(source):
        return None  # (before parsing: the tokenizer warns of these)
    try:
        if nodes is None:
            from .gates import walk

            nodes = walk(parse(source, mode=mode))
        if not _compiles_silently(source, nodes):
            return None
        # from the tree at hand, not parsing the text again: the same code (compared field by field,
        # positions included, on every answer of parity_dev.jsonl)
        tree = nodes[0] if type(nodes[0]) is _TREES.get(mode) else source
        return marshal.dumps(compile(tree, filename, mode, 0, True))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


_HEAD_LINES_OF = {strict: "\n" * (p.count("\n") + 1) for strict, p in _PRELUDES.items()}  # what precedes the call
_HEAD_LINES = _HEAD_LINES_OF[True]


def channel_program(code: str, entry: str, inputs: Sequence[str], package: str, strict: bool,
                    modules: Sequence[str] = (), roots: Sequence[str] = (), units: Sequence | None = None) -> str:
    from .gates import ALLOWED_MODULES, FORBIDDEN_BUILTINS, module_attributes

    """The program run on backends with a result channel (see the module docstring).  No secret is
    in it: the harness makes its nonce itself and announces it as the channel's first record.
    ``modules``: what the answer imports (strict: loaded before the wall goes up); ``roots``:
    folders the strict wall lets the program read (the interpreter's and the library's)."""
    src = code + f"import {package}\n"  # the official concatenation, so syntax is judged alike
    cases = [f"{entry}({inp})" for inp in inputs]
    key = bool(strict)
    if strict and any(m in VIRTUAL_MODULES or m == "sys" and ("stdout" in code or "stderr" in code) for m in modules):
        key = "virtual"  # (without it, the sys proxy has no streams: never the real ones)
    prelude = _PRELUDES[key]
    if strict and any(m in VIRTUAL_MODULES and "." in m for m in modules):
        modules = sorted(set(modules) | {m.partition(".")[0] for m in modules if m in VIRTUAL_MODULES})  # (`import os.path` binds os)
    attrs = {m: sorted(module_attributes(m)) for m in modules if m in ALLOWED_MODULES} if strict else {}
    # (the harness writes round 6's modules itself: the real ones are not loaded for them)
    modules = [m for m in modules if m not in VIRTUAL_MODULES or m in VIRTUAL_ON_REAL] if strict else modules
    deny = sorted(FORBIDDEN_BUILTINS) if strict else []
    # the call's text, piece by piece (their lengths place each argument's columns: see _call_code)
    parts = [repr(src), repr(cases), repr(package), repr(bool(strict)), repr(list(modules)), repr(list(roots)), repr(attrs), repr(deny)]
    call = "__sg_harness(" + ", ".join(parts) + ")\n"
    if units is None or units[0][0] != src or [u[0] for u in units[1:]] != cases:
        # (source, filename, mode[, marshalled code]) of the answer, then of each case
        units = ((src, "<answer>", "exec"),) + tuple((c, f"<test case {i}>", "eval") for i, c in enumerate(cases))
    tail = None
    if _PARENT_COMPILE:  # the call: literals only (reprs), so nothing in it can warn
        try:
            code = _call_code(src, cases, package, bool(strict), list(modules), list(roots), attrs, deny, parts) if key != "virtual" else None
            if code is None:
                code = compile(_HEAD_LINES_OF[key] + call, "main.py", "exec", 0, True)
            tail = (len(prelude) + 1, marshal.dumps(code))
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            tail = None
    return Program(prelude + "\n" + call, ("__sg_units", tuple(units)), tail)


# The call's code without compiling it.  Compiling the call line cost ~95 us per answer (its
# literals hold the whole answer); its code differs from one answer to the next only in the
# constants and in the columns of the call's line, once the shape is fixed (how many items each list
# has, up to 3: CPython loads a list of three or more constants as one tuple).  So the call is compiled
# once per shape with placeholder strings; for each answer its values are put in their place and its
# line's columns are those of this answer's text (each argument's span follows from the lengths of the
# pieces before it): the same code, positions included, as compiling the text (the location table is
# written in its long form throughout: the same positions, in other bytes).
_CALL_SHAPES: dict[tuple, Any] = {}
_SLOT = "\x00se-gym slot %d\x00"  # (no literal of a real call can hold NUL: reprs escape it)
_CALLEE = "__sg_harness"


def _call_code(src, cases, package, strict, modules, roots, attrs, deny, parts):
    """The code of ``_HEAD_LINES_OF[strict] + call`` as compile() makes it; None where this shape is not
    covered (an answer's strict imports: a dict of lists).  ``parts``: the call's argument texts."""
    if attrs:
        return None
    lists = (cases, modules, roots, deny)
    key = (strict,) + tuple(min(len(v), 3) for v in lists)
    shape = _CALL_SHAPES.get(key)
    if shape is None:
        shape = _CALL_SHAPES[key] = _call_shape(key)
    if shape is False:
        return None
    template, slots, plan = shape
    values = [src, package]
    for v in lists:
        if len(v) > 2:
            values.append(tuple(v))
        else:
            values.extend(v)
    consts = list(template.co_consts)
    seen = set(consts)
    for i, k in slots:
        value = values[k]
        if value in seen:
            return None  # CPython shares one constant between equal literals: compile the text
        seen.add(value)
        consts[i] = value
    # where each argument's text begins and ends on the line, in UTF-8 bytes (as code positions count)
    spans, at = [], len(_CALLEE) + 1
    for part in parts:
        n = len(part) if part.isascii() else len(part.encode("utf-8", "surrogatepass"))
        spans.append((at, at + n))
        at += n + 2
    spans.append((0, at - 1))  # the whole call, closing parenthesis included
    spans.append((0, len(_CALLEE)))
    return template.replace(co_consts=tuple(consts), co_linetable=_location_table(plan, spans))


def _call_shape(key):
    """(template code, [(const index, value index)], its location plan) or False."""
    strict, counts = key[0], key[1:]
    n = 0

    def slot():
        nonlocal n
        n += 1
        return _SLOT % (n - 1)

    src, pkg = slot(), slot()
    lists = [[slot() for _ in range(c)] for c in counts]
    parts = [repr(src), repr(lists[0]), repr(pkg), repr(strict), repr(lists[1]), repr(lists[2]), "{}", repr(lists[3])]
    head = _HEAD_LINES_OF[bool(strict)]
    line = head.count("\n") + 1
    try:
        code = compile(head + "__sg_harness(" + ", ".join(parts) + ")\n", "main.py", "exec", 0, True)
        spans, at = [], len(_CALLEE) + 1
        for part in parts:
            spans.append((at, at + len(part)))
            at += len(part) + 2
        spans += [(0, at - 1), (0, len(_CALLEE))]
        runs = _location_runs(code, line, spans)
        if runs is None:
            return False
        plan = _location_plan(code.co_firstlineno, runs, line)
        again = code.replace(co_linetable=_location_table(plan, spans))
        if list(again.co_positions()) != list(code.co_positions()) or list(again.co_lines()) != list(code.co_lines()):
            return False  # (the table is not written as this Python reads it)
    except Exception:  # noqa: BLE001 - a Python whose tables differ: compile each call's text
        return False
    order = {src: 0, pkg: 1}
    k = 2
    for items in lists:
        if len(items) > 2:
            order[tuple(items)] = k
            k += 1
        else:
            for s in items:
                order[s] = k
                k += 1
    slots = [order.get(c) if type(c) in (str, tuple) else None for c in code.co_consts]
    if sorted(i for i in slots if i is not None) != list(range(k)):
        return False  # a placeholder not found as its own constant: not the layout assumed
    return code, [(i, j) for i, j in enumerate(slots) if j is not None], plan


def _location_runs(code, line: int, spans: list) -> list | None:
    """The code's location entries as ``(code units, position)``: the entries CPython wrote (so that
    co_lines() reads the same ranges), each with its position, where one on the call's ``line`` is
    the index of its span in ``spans`` and any other is kept as it is; None when a position on that
    line is not one of those spans."""
    table, positions = code.co_linetable, list(code.co_positions())  # (a position per code unit)
    runs: list = []
    i = unit = 0
    while i < len(table):
        kind, size = (table[i] >> 3) & 15, (table[i] & 7) + 1
        i += 1
        if kind < 10:  # short form: one byte of columns
            i += 1
        elif kind < 13:  # one-line forms: two bytes of columns
            i += 2
        elif kind < 15:  # no columns (a signed varint), or the long form (four varints)
            for _ in range(4 if kind == 14 else 1):
                while table[i] & 64:
                    i += 1
                i += 1
        pos = positions[unit]
        unit += size
        if pos[0] == line:
            if pos[1] != line or (pos[2], pos[3]) not in spans:
                return None
            pos = spans.index((pos[2], pos[3]))
        runs.append((size, pos))
    return runs if unit == len(positions) else None


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 64:
        out.append((value & 63) | 64)
        value >>= 6
    out.append(value)
    return bytes(out)


def _location_plan(first: int, runs: list, line: int) -> list:
    """A location table (CPython's Objects/locations.md, 3.11-3.13) in its long form, as pieces:
    bytes, or the index of a span (``spans`` of _location_table) whose columns go there.  ``line``:
    the call's."""
    plan: list = []
    at = first
    for size, pos in runs:
        span = pos if type(pos) is int else None
        if span is not None:
            pos = (line, line, 0, 0)
        if pos[0] is None:
            plan.append(bytes([0xF8 | (size - 1)]))  # no location
            continue
        if None in pos:
            raise ValueError("a position without columns")
        delta = pos[0] - at
        at = pos[0]
        # the long form: line delta (signed), lines spanned, then column + 1 and end column + 1
        head = bytes([0xF0 | (size - 1)]) + _varint((-delta << 1) | 1 if delta < 0 else delta << 1) + _varint(pos[1] - pos[0])
        plan.append(head)
        plan.append(span if span is not None else _varint(pos[2] + 1) + _varint(pos[3] + 1))
    return plan


def _location_table(plan: list, spans: list) -> bytes:
    cols = [_varint(lo + 1) + _varint(hi + 1) for lo, hi in spans]
    return b"".join(cols[p] if type(p) is int else p for p in plan)


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
    forged: int  # records the harness did not write: wrong nonce, not JSON, duplicates, bad fields
    refused: tuple[str, ...] = ()  # what the strict wall refused
    problem: str = ""  # the first forged record, described
    infrastructure: str = ""  # the strict harness could not run the answer (the sandbox's failure, not the answer's)

    @property
    def valid(self) -> bool:
        return not self.forged and not self.refused


_NONCE = re.compile(r"[0-9a-f]{32}")


def _case(rec: dict, i: int, strict: bool) -> CaseReport | None:
    """One case record, exactly as the harness writes it, or None."""
    keys = set(rec) - {"n", "i"}
    p = rec.get("p")
    if "e" in rec:
        err = rec["e"]
        if keys != {"e"} or not isinstance(err, list) or len(err) != 3 or not all(isinstance(x, str) for x in err):
            return None
        return CaseReport(i, None, error=(err[0], err[1], err[2]))
    if not isinstance(p, str):
        return None
    if "r" in rec:
        if keys != {"r", "p"} or not isinstance(rec["r"], str):
            return None
        return CaseReport(i, p, rejected=rec["r"])
    if strict:
        if keys != {"v", "p"}:
            return None  # strict: a printed form without the value is not a result
        return CaseReport(i, p, rec["v"], True)
    if keys != {"p"}:
        return None
    return CaseReport(i, p)


_SCAN = json.JSONDecoder().scan_once  # json.loads' own decoder (the C scanner where there is one)
_SPACE = json.decoder.WHITESPACE.match


def _json_line(line: str) -> Any:
    """``json.loads(line)`` for a str, in one call instead of five (raises ValueError alike)."""
    try:
        obj, end = _SCAN(line, _SPACE(line, 0).end())
    except StopIteration as exc:
        raise ValueError(f"Expecting value at {exc.value}") from None
    if _SPACE(line, end).end() != len(line):
        raise ValueError(f"Extra data at {end}")
    return obj


def read_channel(channel: bytes | None, n_cases: int, strict: bool = False) -> ChannelReport:
    """Parse the harness's records.  The first line is the harness's announcement of its nonce,
    written before any answer code ran; every other line must be one of its records with that
    nonce, each case exactly once, then one ``done``.  Anything else counts as forged."""
    if not channel:
        return ChannelReport(False, (), 0)
    if channel.isascii():  # what the harness writes: one decode, and the decoder without json.loads' wrappers
        lines, loads = channel.decode("ascii").split("\n"), _json_line
    else:
        lines, loads = channel.split(b"\n"), json.loads
    if lines and not lines[-1]:
        lines.pop()
    try:
        hello = loads(lines[0])
        nonce = hello["hello"] if isinstance(hello, dict) and set(hello) == {"hello"} else None
    except (ValueError, UnicodeDecodeError, RecursionError, IndexError):
        nonce = None
    if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
        return ChannelReport(False, (), len(lines), problem="the channel does not start with the harness's announcement")
    found: dict[int, CaseReport] = {}
    refused: list[str] = []
    infra = ""
    done = False
    forged = 0
    problem = ""

    def bad(why: str) -> None:
        nonlocal forged, problem
        forged += 1
        problem = problem or why

    for k, raw in enumerate(lines[1:], 2):
        try:
            rec = loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            bad(f"line {k} is not JSON")
            continue
        if not isinstance(rec, dict) or rec.get("n") != nonce:
            bad(f"line {k} does not carry the harness's nonce")
            continue
        if done:
            bad(f"line {k} follows the done record")
        elif "refused" in rec:
            if set(rec) == {"n", "refused", "what"} and isinstance(rec["refused"], str) and isinstance(rec["what"], str):
                refused.append(f"{rec['refused']} {rec['what']}".strip())
            else:
                bad(f"line {k} is a malformed refusal")
        elif "infrastructure" in rec:
            if set(rec) == {"n", "infrastructure"} and isinstance(rec["infrastructure"], str) and k == 2:
                infra = rec["infrastructure"] or "the harness failed"
            else:
                bad(f"line {k} is a malformed harness record")
        elif "done" in rec:
            if set(rec) != {"n", "done"} or type(rec["done"]) is not int or rec["done"] != n_cases or len(found) != n_cases:
                bad(f"line {k} is a done record that does not match the cases")
            done = True
        else:
            i = rec.get("i")
            if type(i) is not int or not 0 <= i < n_cases:
                bad(f"line {k} names no case")
            elif i in found:
                bad(f"line {k} repeats case {i}")
            else:
                case = _case(rec, i, strict)
                if case is None:
                    bad(f"line {k} is a malformed record of case {i}")
                else:
                    found[i] = case
    cases = tuple(found[i] for i in sorted(found))
    return ChannelReport(done and not forged and len(cases) == n_cases, cases, forged, tuple(refused), problem, infra)
