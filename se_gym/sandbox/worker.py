"""A sandbox worker: imports NumPy (and the preload modules) once, then runs each program in a
fresh forked child with its own session, resource limits, temp dir, empty environment and an
unprivileged uid.

Stand-alone on purpose (standard library only, no se_gym imports): the docker image runs this very
file as a script.  Protocol on the worker's stdin/stdout: frames of a 4-byte big-endian length and
a body (JSON, or marshal when the config's ``wire`` asks for it).  The first frame out is ``{"hello": {...}}``; then one reply per request
``{"id", "code", "limits"}``.  Invoked with one argument, a JSON config
``{"preload": [...], "pythonpath": [...], "workdir": str, "uid": int | null, "name": str, "cpu": int,
"site_packages": [...], "wire": "json" | "marshal"}``
(``cpu``, optional: the one CPU to run on; ``site_packages``: folders to add when started with -S;
``wire``: how frame bodies are encoded, JSON unless marshal is asked for; ``fast_paths``, default
true: false turns off the CPython-internal speed-ups, see main()).

When a preloaded package is a client of a library server (it has a ``_server.py``: the strict
profile, issue 31), or the config names one (``"server": {"path": ".../_server.py", "preload":
[...]}``), the worker itself never imports NumPy (the ``numpy*`` preloads go to the zygote): a
zygote forked from it imports NumPy and the library server module, and forks a server when the
worker asks for one.  Each program finds one end of a socket pair on fd 4, and of a second on fd 5
(the strict harness's own, which the server serves once fd 4 is closed: issue 42); the worker hands
the other ends to its server.  The server keeps the worker's hardening, takes the program's rlimits (its
CPU limit per program, on top of what it used before), another uid where the worker can give one,
and is not dumpable (the program can neither trace nor read it).  Once the program is gone the
server drops every handle and resets NumPy's state, and says so on a control socket of its own to
the worker, which keeps it for the next program; after an error, a call-back, a refused request,
other limits, no word within _SERVER_IDLE_S (still busy with what the program left it), or a
bound on its programs, CPU or memory, the worker kills it (the zygote reaps it) and a fresh one
is forked.  Each program gets the same CPU in its server (an interval timer per program); a server
that dies under its program makes the program's status ``timeout`` (its CPU) or ``sandbox_error``
(anything else); the reply says whether the server was forked for it (``server_forked``).
A request's ``library_mode`` (issue 42: the judge's dependence check) goes to the server with the
program's sockets, on the server's control socket, and what the server says of it comes back as
the reply's ``library_report``.

Every program finds ``__sg_fence`` in its ``__main__`` (see _fence): the strict harness's way to
fork the answer's process and put the answer filter on it (issue 42).
"""
import atexit
import binascii
import ctypes
import fcntl
import gc
import io
import json
import marshal
import os
import resource
import select
import signal
import struct
import sys
import time
import types
import warnings

MEMORY_EXIT = 86  # exit status of a child that died of an uncaught MemoryError
_STARTED = b"\x01"  # what a child writes on the channel once its set-up is done, before the program
_TICK = 0.02  # seconds between looks at a running program's output
_TICK_MS = 20
_SELECT = select.select
# The first wait on a child (run_program): a poll object made once, before the arenas move to the
# heap (see _arenas_in_heap), on an fd number of its own that each child's pidfd is dup2()ed onto.
# select() would allocate 48 KB and a list there, splitting a 2 MB page of our heap while the child
# shares it; this touches only objects made before the move (and the child's pid and pidfd).
_POLL = None
_WAIT_FD = -1
_FORK_HANDLE = None  # libc's fork, made before the move too
_NONE = []  # (select's unused lists: made once, not between a fork and the first wait)
_PIPE_MAX = 1 << 20  # /proc/sys/fs/pipe-max-size, read by _setup()
_MIN_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# Common, light standard-library modules a solution may import, loaded once here so that children
# find them ready.  Heavier ones (decimal, statistics, dataclasses: 1.2 MB that every fork would
# copy) are imported by the programs that use them, or preloaded by the pool where the program uid
# cannot read the Python install (local.py).
# (ast: the strict harness's run-time wall reads dataclasses' generated code with it in every
# program; imported there it cost ~2 ms of each strict program's CPU where NumPy, which imports it,
# lives in the library server's zygote and not here)
_STDLIB = ("math", "cmath", "itertools", "functools", "collections", "heapq", "bisect", "re", "json",
           "random", "typing", "string", "copy", "operator", "io", "atexit", "array",
           "numbers", "textwrap", "linecache", "ast")


# ---------------------------------------------------------------------------------------- frames
_WIRES = {"json": (lambda obj: json.dumps(obj).encode(), json.loads), "marshal": (marshal.dumps, marshal.loads)}
_DUMPS, _LOADS = _WIRES["json"]  # main() sets the configured wire


def read_frame(fd):
    head = _read_exact(fd, 4)
    if head is None:
        return None
    body = _read_exact(fd, struct.unpack(">I", head)[0])
    if body is None:
        return None
    return _LOADS(body)


def _read_exact(fd, n):
    chunk = os.read(fd, n)
    if len(chunk) == n or not chunk:  # the usual case: all of it at once (or the end)
        return chunk or None
    buf = bytearray(chunk)
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def write_frame(fd, obj):
    body = _DUMPS(obj)
    data = struct.pack(">I", len(body)) + body
    while data:
        data = data[os.write(fd, data):]


# ---------------------------------------------------------------------------------------- child
_LIBC_FORK = None  # set by main() when the worker is single-threaded


def _fork():
    """fork(2) straight from libc when we can: os.fork() also runs CPython's after-fork machinery in
    the child (thread-state reinitialisation, at-fork hooks), which writes to (and so copies) some
    200 pages, about a fifth of a short program's cost; a single-threaded worker needs none of it.
    (run_program does the same in line: see there why.)"""
    if _LIBC_FORK is None:
        return os.fork()
    if "random" in sys.modules:
        # the one at-fork hook that matters to a program: fresh entropy, as `python main.py` gets.
        # Seeded here, just before the fork, rather than in the child, where the same writes would
        # each copy a page the child shares with us.
        sys.modules["random"].seed()
    pid = _LIBC_FORK()
    if pid < 0:
        return os.fork()  # it failed (errno is not kept): the real thing, to fail with the reason
    return pid


# Huge pages for the worker's heap.  A fork copies one page-table entry per 4 KB page the worker
# has (some 4,700 of them) and the child's exit drops them all again: that and the faults after it
# were about half of a short program's cost.  Collapsed into 2 MB pages (MADV_COLLAPSE, Linux >=
# 6.1, whatever the THP setting but "never"), the heap costs the fork one entry per 2 MB, and a
# program that writes into one splits only its own mapping of it.  The worker's own mapping is
# split only when the worker writes there while a child lives, which run_program avoids; what the
# heap grows by later is collapsed every _COLLAPSE_EVERY programs, once the child is gone (and
# sooner at first: the first programs' one-off work splits some; after that hardly anything does).
_MADVISE = None  # libc's madvise, set by _harden()
_COLLAPSE_EVERY = 64
_COLLAPSE_NEXT = [2]  # programs until the next collapse: 2, 8, 32, then every _COLLAPSE_EVERY
_COLLAPSED = [0, 0]  # programs since the last collapse; MB the first one covered (for the hello)
_HUGE_ERROR = []  # why a collapse failed, the first time one did (for the hello)


def _collapse_heap():
    """MADV_COLLAPSE every whole 2 MB of the worker's private anonymous memory (the malloc heap,
    anonymous mappings); returns how many MB that covers.  Failures only cost speed: ignored."""
    if _MADVISE is None:
        return 0
    huge, done = 1 << 21, 0
    try:
        with open("/proc/self/maps", "rb") as f:
            lines = f.read().split(b"\n")
    except OSError:
        return 0
    for line in lines:
        parts = line.split()
        if len(parts) < 5 or parts[1][:3] != b"rw-" or parts[1][3:4] != b"p" or (len(parts) > 5 and parts[5] != b"[heap]"):
            continue  # (a named mapping is a file's, the stack's or a special one)
        start, end = (int(x, 16) for x in parts[0].split(b"-"))
        lo, hi = -(-start // huge) * huge, end // huge * huge
        if hi > lo:
            if _MADVISE(lo, hi - lo, 25) == 0:  # MADV_COLLAPSE
                done += (hi - lo) >> 20
            elif not _HUGE_ERROR:
                _HUGE_ERROR.append(os.strerror(ctypes.get_errno()))
    return done


# pymalloc's arenas in the heap.  CPython maps each 1 MB arena of small objects on its own, at
# addresses no 2 MB page can cover: some 1,300 page-table entries that every fork copies and every
# program's exit drops again.  Taken from malloc instead (above which size malloc maps memory on its
# own raised past an arena's), they lie in the heap, which _collapse_heap turns into 2 MB pages.
# Only C functions of the interpreter are wired in (no callback into Python): malloc through the
# raw domain's allocator, and the default arena release (munmap), which leaves an arena that came
# from malloc where it is (munmap refuses an address inside a malloc block, or unmaps just that
# block's pages, which malloc never hands out again) -- a bounded leak in the worker, whose arenas
# are rarely released.  Each child starts with the default back (run_program puts it back for the
# fork and takes the heap's again once it has waited): a program that releases arenas, or
# data-stack chunks in deep recursion, gets its memory back as under `python main.py`.
# (Programs keep malloc's raised threshold: blocks up to 4 MB come from their heap rather than
# mappings of their own; the same memory, counted alike by the address-space limit.)
class _ArenaAllocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("alloc", ctypes.c_void_p), ("free", ctypes.c_void_p)]


class _RawAllocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", ctypes.c_void_p), ("calloc", ctypes.c_void_p),
                ("realloc", ctypes.c_void_p), ("free", ctypes.c_void_p)]


_ARENA_DEFAULT = None  # the interpreter's own arena allocator, for the children
_ARENA_HEAP = None  # ours (kept alive: set again after each fork)
_ARENA_ADDRESSES = (0, 0)  # their addresses: (default, ours)
_SET_ARENA = None  # PyObject_SetArenaAllocator
_ARENAS = ["default"]  # where the worker's arenas come from (for the hello)


def _early_handles():
    """What run_program uses between a fork and the child's exit, made before _arenas_in_heap()."""
    global _POLL, _WAIT_FD, _FORK_HANDLE
    try:
        fork = ctypes.PyDLL(None).fork  # (no use_errno: see _harden)
        fork.restype, fork.argtypes = ctypes.c_int, []
        _FORK_HANDLE = fork
        if hasattr(os, "pidfd_open") and hasattr(select, "poll"):
            fd = os.open(os.devnull, os.O_RDONLY)  # holds the number until a pidfd takes its place
            poll = select.poll()
            poll.register(fd, select.POLLIN)
            poll.poll(0)  # (its fd array is made on the first call)
            _POLL, _WAIT_FD = poll, fd
    except Exception:  # select() and a handle made later do the same, a little slower
        pass


def _arenas_in_heap():
    global _ARENA_DEFAULT, _ARENA_HEAP, _ARENA_ADDRESSES, _SET_ARENA
    try:
        api = ctypes.pythonapi
        default = _ArenaAllocator()
        api.PyObject_GetArenaAllocator(ctypes.byref(default))
        raw = _RawAllocator()
        api.PyMem_GetAllocator(0, ctypes.byref(raw))  # PYMEM_DOMAIN_RAW
        if not (default.alloc and default.free and raw.malloc) or os.environ.get("PYTHONMALLOC") or sys.flags.dev_mode:
            _ARENAS[0] = "default (another allocator is in use)"
            return
        if ctypes.CDLL(None).mallopt(-3, 4 << 20) != 1:  # M_MMAP_THRESHOLD: an arena is served from the heap
            _ARENAS[0] = "default (mallopt refused)"
            return
        setter = api.PyObject_SetArenaAllocator
        setter.restype, setter.argtypes = None, [ctypes.c_void_p]
        ours = _ArenaAllocator(raw.ctx, raw.malloc, default.free)
        setter(ctypes.addressof(ours))  # (copied by the interpreter)
        _ARENA_DEFAULT, _ARENA_HEAP, _SET_ARENA = default, ours, setter
        _ARENA_ADDRESSES = (ctypes.addressof(default), ctypes.addressof(ours))
        _ARENAS[0] = "heap"
    except Exception as e:  # only speed is at stake
        _ARENAS[0] = "default (%s: %s)" % (type(e).__name__, e)


def _vm_bytes():
    fd = os.open("/proc/self/statm", os.O_RDONLY)
    try:
        return int(os.read(fd, 256).split()[0]) * resource.getpagesize()
    finally:
        os.close(fd)


# Set once by _setup(), in the worker, so that each child inherits them instead of making them:
# whatever a child does in Python writes to (and so copies) pages it shares with the worker.
_WORKDIR = None  # the one folder programs run in (a worker runs one program at a time)
_MAIN_PY = None  # its main.py
_STREAMS = None  # sys.stdin/stdout/stderr for programs, on fds 0/1/2 of the child
_MAIN = None  # the programs' __main__ module
_PRECOMPILE_MAX = 1 << 16  # bytes of source the worker compiles for a program
_PRCTL = None
_SECCOMP = None  # a pointer to the filter that refuses new user namespaces (built by _setup)
_IPC_PER_PROGRAM = False  # each program unshares its own System V IPC namespace
_IPC_PRIVATE = False  # our IPC namespace is this worker's own (bwrap, unshare): everything in it is ours
_DROP_CAPS = False  # root of a user namespace of our own: programs drop every capability
_HARDEN_REQUIRED = False
_UNSHARE = None
# prctl and unshare for the children, from a handle without use_errno: ctypes' errno bookkeeping
# around a call writes to (so, in a fresh fork, copies) some 25 more of the worker's pages
_CHILD_PRCTL = _CHILD_UNSHARE = None
_FILTERED = False  # NO_NEW_PRIVS and the seccomp filter hold for the worker itself (so for every child)


def _unshare(flags):
    if _UNSHARE(flags) != 0:
        raise OSError(ctypes.get_errno(), "unshare(%#x) failed" % flags)


def _drop_caps():
    """Give up every capability for good (the worker is root of its own user namespace): root
    stays root by number only, and exec can never give them back."""
    if _PRCTL(28, 0xEF, 0, 0, 0) != 0:  # PR_SET_SECUREBITS: NOROOT, NO_SETUID_FIXUP, locked
        raise OSError("PR_SET_SECUREBITS failed")
    for cap in range(64):
        if _PRCTL(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP until past the last capability
            break
    _PRCTL(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    if _LIBC.capset(header, data) != 0:
        raise OSError("capset failed")


_LIBC = None
_READ_CAP = False  # programs keep CAP_DAC_READ_SEARCH (rlimits as root, install unreadable to others)


def _become(uid):
    """Switch to the program's private uid; with _READ_CAP it keeps the one capability to read the
    host's files (in rlimits mode, where only that lets it import an install other uids cannot
    read): it still cannot write root's files nor signal us."""
    if _READ_CAP:
        for cap in range(64):
            if cap != 2 and _PRCTL(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP all but DAC_READ_SEARCH
                break
        _PRCTL(8, 1, 0, 0, 0)  # PR_SET_KEEPCAPS across setresuid
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if _READ_CAP:
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)(1 << 2, 1 << 2, 0, 0, 0, 0)  # effective, permitted, inheritable
        if _LIBC.capset(header, data) != 0:
            raise OSError("capset failed")


def _seccomp_filter():
    """A BPF program refusing new user namespaces (unshare/clone with CLONE_NEWUSER; clone3, whose
    flags it cannot read, says ENOSYS so that libc falls back to clone), POSIX message queues, the
    kernel's keyrings (add_key, request_key, keyctl), io_uring and userfaultfd, and every other
    syscall ABI (x32, 32-bit).  None on architectures it does not know."""
    import platform

    machine = platform.machine()
    # arch, unshare, clone, clone3, then the calls refused whatever their arguments: mq_open,
    # add_key, request_key, keyctl, userfaultfd, io_uring_setup
    table = {"x86_64": (0xC000003E, 272, 56, 435, (240, 248, 249, 250, 323, 425)),
             "aarch64": (0xC00000B7, 97, 220, 435, (180, 217, 218, 219, 282, 425))}
    if machine not in table:
        return None
    # - POSIX queues would outlive the program in our IPC namespace;
    # - keys live in keyrings shared by every process of a uid or a session (so by the programs of
    #   one worker) and outlive them, past the judge: a channel between programs.  With the three
    #   calls refused no keyring (the session's inherited from the worker included) can be read,
    #   searched, joined or written, so no program needs a fresh one;
    # - io_uring and userfaultfd: kernel attack surface no program needs (Docker's profile refuses
    #   them too); without io_uring_setup there is no ring to enter
    arch, nr_unshare, nr_clone, nr_clone3, refused = table[machine]
    LD, JEQ, JSET, JGE, RET = 0x20, 0x15, 0x45, 0x35, 0x06
    ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    n = len(refused)
    flags, deny, nosys = 10 + n, 12 + n, 14 + n  # where the blocks after the checks start

    def to(pc, target):  # a jump's offset: from the instruction after pc
        return target - pc - 1

    prog = [
        (LD, 0, 0, 4),  # 0: arch
        (JEQ, 1, 0, arch),
        (RET, 0, 0, EPERM),
        (LD, 0, 0, 0),  # 3: syscall number
        (JGE, 0, 1, 0x40000000),  # x32
        (RET, 0, 0, EPERM),
        (JEQ, to(6, flags), 0, nr_unshare),  # 6
        (JEQ, to(7, flags), 0, nr_clone),
        (JEQ, to(8, nosys), 0, nr_clone3),
        *[(JEQ, to(9 + i, deny), 0, nr) for i, nr in enumerate(refused)],
        (RET, 0, 0, ALLOW),  # 9 + n
        (LD, 0, 0, 16),  # flags: args[0], low half: the flags of unshare and clone
        (JSET, 0, 1, 0x10000000),  # CLONE_NEWUSER
        (RET, 0, 0, EPERM),  # deny
        (RET, 0, 0, ALLOW),
        (RET, 0, 0, ENOSYS),  # nosys
    ]
    assert len(prog) == nosys + 1
    return _bpf(prog)


# The answer's own process under the strict harness (issue 42): the harness runs in the program's
# process and forks the answer into a child of its own, which takes this second filter on top of
# the worker's before any of the answer's code exists.  It refuses what only an escape would use,
# whatever the run-time wall (an audit hook in that process) lets through: signal handlers
# (rt_sigaction: no audit event covers them, and a handler is handed a frame, from which f_back
# walks into the wall's and the harness's state), new processes and threads, exec, signals to
# other processes (the harness, the library server), tracing, another session or process group.
#   x86_64: rt_sigaction, clone, fork, vfork, execve, kill, setpgid, ptrace, setsid,
#           rt_sigqueueinfo, tkill, tgkill, rt_tgsigqueueinfo, process_vm_readv/writev, execveat,
#           pidfd_send_signal, pidfd_open, clone3, pidfd_getfd
_ANSWER_REFUSED = {
    "x86_64": (0xC000003E, (13, 56, 57, 58, 59, 62, 109, 101, 112, 129, 200, 234, 297, 310, 311, 322, 424, 434, 435, 438)),
    "aarch64": (0xC00000B7, (134, 220, 221, 129, 154, 117, 157, 138, 130, 131, 240, 270, 271, 281, 424, 434, 435, 438)),
}
_ANSWER_SECCOMP = None  # a pointer to that filter (built by _harden), or None where it cannot be had


def _answer_filter():
    """The BPF program of the answer's process (see _ANSWER_REFUSED): those calls fail with EPERM,
    every other syscall ABI too.  None on architectures it does not know."""
    import platform

    found = _ANSWER_REFUSED.get(platform.machine())
    if found is None:
        return None
    arch, refused = found
    LD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    ALLOW, EPERM = 0x7FFF0000, 0x00050000 | 1
    n = len(refused)
    deny = 6 + n  # where the refusal is
    prog = [(LD, 0, 0, 4), (JEQ, 1, 0, arch), (RET, 0, 0, EPERM), (LD, 0, 0, 0), (JGE, _jump_to(4, deny), 0, 0x40000000)]
    prog += [(JEQ, _jump_to(5 + i, deny), 0, nr) for i, nr in enumerate(refused)]
    prog += [(RET, 0, 0, ALLOW), (RET, 0, 0, EPERM)]
    assert len(prog) == deny + 1
    return _bpf(prog)


def _jump_to(pc, target):
    """A BPF jump's offset from the instruction after ``pc`` to ``target``."""
    return target - pc - 1


def _bpf(prog):
    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Insn))]

    insns = (Insn * len(prog))(*[Insn(*i) for i in prog])
    fprog = Prog(len(prog), insns)
    fprog._keep = insns
    return fprog


def _fence(role):
    """What the strict harness asks of its worker (bound as ``__sg_fence`` in every program's
    ``__main__``; the harness takes it out before any answer code exists): ``"harness"`` makes
    the program's process not dumpable (the answer's process, the same uid, can then neither trace
    it nor read its memory or open its fds through /proc), ``"fork"`` forks the answer's process
    (libc's fork where the worker uses it), ``"answer"`` puts the answer's filter on the calling
    process.  Returns whether it holds (the fork: its pid)."""
    if role == "fork":
        if _LIBC_FORK is not None:
            pid = _LIBC_FORK()
            if pid >= 0:
                return pid
        return os.fork()
    if _CHILD_PRCTL is None:
        return False
    if role == "harness":
        return _CHILD_PRCTL(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE 0
    if role == "answer":
        return _ANSWER_SECCOMP is not None and _CHILD_PRCTL(22, 2, _ANSWER_SECCOMP, 0, 0) == 0
    return False


_VM = [0, 0]  # the worker's size, and how many more programs may use it before it is read again


def _rlimits(limits, uid):
    """The (resource, (soft, hard)) pairs for one program, computed in the worker."""
    mb = 1 << 20
    cpu = max(1, int(-(-limits["cpu_s"] // 1)))
    if _VM[1] <= 0:  # our size barely moves once we serve: a read per 64 programs follows it
        _VM[:] = _vm_bytes(), 64
    _VM[1] -= 1
    memory = _VM[0] + int(limits["memory_mb"] * mb)  # on top of what the fork shares with us
    rl = [
        (resource.RLIMIT_AS, (memory, memory)),
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_NOFILE, (int(limits["open_files"]),) * 2),
        (resource.RLIMIT_FSIZE, (int(limits["file_size_mb"] * mb),) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
    ]
    if uid is not None or os.getuid() != 0:
        # NPROC counts every process of the uid: this child, the answer's own process under the
        # strict harness (issue 42), plus the extras it may start (the uid is private to this
        # worker; without a uid of our own the worker counts too, and the library servers' zygote,
        # its server and one being replaced)
        nproc = int(limits["processes"]) + 2 + (0 if uid is not None else 1 + (3 if _ZYGOTE is not None else 0))
        rl.append((resource.RLIMIT_NPROC, (nproc, nproc)))
    return rl


def _child(code, compiled, rlimits, uid, fds):
    """Runs in the forked child; never returns.  Its stdin is the worker's (/dev/null)."""
    status = 1
    try:
        os.setsid()
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.dup2(fds[2], 3)  # os.dup2's copies are inheritable: fd 3 is the program's to keep
        if len(fds) > 4 and fds[4] == SERVER_FD:  # (never, as the worker's fds are laid out: dup2 below would close it)
            fds = fds[:4] + [os.dup(fds[4])]
        for k, fd in enumerate(fds[3:]):
            os.dup2(fd, SERVER_FD + k)  # its library server (strict): the answer's socket, then the harness's
        os.closerange(SERVER_FD + len(fds) - 3, 1 << 16)
        for what, value in rlimits:
            resource.setrlimit(what, value)
        if _IPC_PER_PROGRAM and _CHILD_UNSHARE(0x08000000) != 0:  # CLONE_NEWIPC: System V objects die with the program
            raise OSError("unshare(CLONE_NEWIPC) failed")
        if uid is not None:
            _become(uid)
        if _DROP_CAPS:
            _drop_caps()
        if _PRCTL is not None:
            if not _FILTERED:  # (where the worker could not take them on itself)
                if _CHILD_PRCTL(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
                    raise OSError("PR_SET_NO_NEW_PRIVS failed")
                if _SECCOMP is not None and _CHILD_PRCTL(22, 2, _SECCOMP, 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
                    raise OSError("seccomp filter refused")
            _CHILD_PRCTL(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self belongs to the program's uid again
        elif _HARDEN_REQUIRED:
            raise OSError("no prctl: cannot set NO_NEW_PRIVS")
        # set-up done: the channel's first byte says so (the worker takes it off), and no program
        # can take it back, so a failure after it is never the sandbox's (issue 21)
        os.write(3, _STARTED)
        status = _run_main(code, compiled)
    except BaseException:  # the sandbox set-up itself failed: say so on stderr
        try:
            import traceback

            os.write(2, ("se-gym sandbox: child set-up failed\n" + traceback.format_exc()).encode())
        except BaseException:
            pass
        status = 125
    os._exit(status)


def _run_main(code, compiled):
    """``python main.py``, minus the start-up: the interpreter, sys.argv, sys.path, the streams, the
    current folder and the __main__ module were made ready by the worker (_setup, run_program)."""
    status = 0
    try:
        if compiled is None:
            exec(compile(code, "main.py", "exec"), _MAIN.__dict__)
        elif type(compiled) is tuple:  # a cached head, then the tail (see _precompile)
            exec(compiled[0], _MAIN.__dict__)
            exec(compiled[1], _MAIN.__dict__)
        else:
            exec(compiled, _MAIN.__dict__)
    except SystemExit as e:
        status = _exit_status(e.code)
    except MemoryError:
        _print_exc()
        status = MEMORY_EXIT
    except BaseException:
        _print_exc()
        status = 1
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            status = status or 120  # like CPython when flushing stdout fails at exit
    return status


_FILTERS = warnings.filters  # the list the C warnings machinery reads
_ERROR_FILTER = ("error", None, Warning, None, 0)
_MUTATED = getattr(warnings, "_filters_mutated", None)  # CPython's private hook; else catch_warnings


def _precompile(code, given=None):
    """Compile the program in the worker, so that the child gets the code object for free.  Only
    for code that compiles silently: a syntax error or a compile-time warning is left for the child
    to meet, where the program's stderr receives it as `python main.py` would print it.

    Programs made by one harness share a long constant head (a judge's harness definitions) and
    differ in their last statement (the call with this answer and its cases): compiling the head
    was most of a program's cost (~11 KB of source per answer).  So the program is split before its
    last top-level statement; the head's code is cached (by its text) and only the tail compiled.
    Executing both in turn is executing the whole: the split is used only when each part compiles
    on its own (a head ending inside a block or a bracket does not), the tail is compiled with the
    head's __future__ flags and at its own line numbers, and never when the tail could change
    meaning on its own (a `from __future__` import, a leading string that would become __doc__).

    ``given`` (marshal wire only): ``[cut, marshalled tail code]`` from our caller, who compiled the
    tail as we would (se_gym.sandbox.Program.tail): used where ``cut`` is our own split and the head
    has no __future__ flags, instead of compiling here (every page we write between forks faults)."""
    if len(code) > _PRECOMPILE_MAX:
        return None  # a huge program compiles in the child, under its limits
    cut = _split_point(code)
    if cut:
        last = _LAST_HEAD[0]
        if last is not None and len(last[0]) == cut and code.startswith(last[0]):
            # the head of the program before (a judge's every program shares it): compared in place,
            # without slicing ~20 KB off the request and hashing it for the lookup below
            head, cached = last
        else:
            head = code[:cut]
            cached = _HEADS.get(head)
        tail = code[cut:]
        if cached is None:
            head_code = _compile_quiet(head, 0)
            cached = (head_code, head.count("\n"))
            if head_code is not None:
                if len(_HEADS) >= 16:
                    del _HEADS[next(iter(_HEADS))]
                _HEADS[head] = cached
        if cached[0] is not None and (last is None or last[1] is not cached):
            _LAST_HEAD[0] = (head, cached)
        head_code, lines = cached
        if head_code is not None and "__future__" not in tail and not _STRING_START.match(tail):
            flags = head_code.co_flags & _FUTURE_FLAGS
            tail_code = None
            if given is not None and _LOADS is marshal.loads and not flags:
                try:
                    if given[0] == cut and type(given[1]) is bytes:
                        tail_code = marshal.loads(given[1])
                        if type(tail_code) is not types.CodeType:
                            tail_code = None
                except (TypeError, ValueError, EOFError, IndexError):
                    tail_code = None
            if tail_code is None:
                tail_code = _compile_quiet("\n" * lines + tail, flags)
            if tail_code is not None:
                return head_code, tail_code
    return _compile_quiet(code, 0)


def _units(spec):
    """A request's ``units`` (``[name, [[source, filename, mode], ...]]``, se_gym.sandbox.Program):
    ``(name, (code or None, ...))``, bound to ``name`` in the child's ``__main__``.  A harness
    compiles the answer and each test case: done here, before the fork, it costs the child none of
    the parser's and compiler's writes to pages it shares with us.  Each code object is exactly
    what ``compile(source, filename, mode, 0, True)`` makes in the child; a source that does not
    compile silently here (an error, a warning), or units past _PRECOMPILE_MAX in all, get None
    for the program to compile itself, where its errors and warnings then reach it as they would.
    With the marshal wire, an entry may instead be ``[marshalled code, filename, "code"]``: code
    our caller compiled in its own process (where work costs no fork anything: every page we write
    between forks faults, compiling here cost as much as it saved the child)."""
    try:
        name, sources = spec
        if type(name) is not str or not name.isidentifier() or len(sources) > 4096:
            return None
        total, out = 0, []
        for source, filename, mode in sources:
            if mode == "code" and type(source) is bytes and _LOADS is marshal.loads:
                code = marshal.loads(source)
                out.append(code if type(code) is types.CodeType else None)
                continue
            if type(source) is not str or type(filename) is not str or mode not in ("exec", "eval", "single"):
                return None
            total += len(source)
            out.append(_compile_quiet(source, 0, filename, mode) if total <= _PRECOMPILE_MAX else None)
        return name, tuple(out)
    except (TypeError, ValueError, EOFError):
        return None


_HEADS = {}  # head text -> its code (see _precompile)
_LAST_HEAD = [None]  # (head text, its _HEADS entry): the last head used, compared first
_FUTURE_FLAGS = 0
for _name in __import__("__future__").all_feature_names:
    _FUTURE_FLAGS |= getattr(__import__("__future__"), _name).compiler_flag
_STRING_START = __import__("re").compile(r"[rRbBuUfF]{0,2}['\"]")


def _split_point(code):
    """Where the last line starting a top-level statement begins (0: none found)."""
    i = len(code)
    while True:
        i = code.rfind("\n", 0, i)
        if i < 0:
            return 0
        c = code[i + 1:i + 2]
        if c and (c.isalpha() or c == "_"):
            return i + 1


def _compile_quiet(code, flags, filename="main.py", mode="exec"):
    if _MUTATED is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                return compile(code, filename, mode, flags, True)
        except BaseException:
            return None
    try:
        # what warnings.catch_warnings() + simplefilter("error") do, without their Python-level
        # calls: each of those touches (so, after a fork, faults in) more of the worker's pages
        _FILTERS.insert(0, _ERROR_FILTER)
        _MUTATED()
        try:
            return compile(code, filename, mode, flags, True)
        finally:
            del _FILTERS[0]
            _MUTATED()
    except BaseException:
        return None


def _print_exc():
    """Report the uncaught exception as `python main.py` does: through sys.excepthook (CPython's
    own printer in C, unless the program set its own), with the traceback starting at the program,
    not at this runner.  (It also keeps the traceback module out of every fork.)"""
    try:
        kind, value, tb = sys.exc_info()
        tb = tb.tb_next if tb is not None else None
        value.__traceback__ = tb
        try:
            sys.excepthook(kind, value, tb)
        except BaseException:
            sys.__excepthook__(kind, value, tb)
    except BaseException:
        try:
            os.write(2, b"MemoryError\n")
        except BaseException:
            pass


def _exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except BaseException:
        pass
    return 1


# --------------------------------------------------------------------------------------- parent
# Orphans of a program become our children (we are a child subreaper, or PID 1 in a container), so
# the kernel's list of our children is the list of every process a program left behind: reading
# it costs one small file instead of a scan of /proc.
_CHILDREN_FILE = None  # set by _setup() when the kernel offers /proc/<pid>/task/<tid>/children
_CHILDREN_FD = -1  # that file, kept open: each pread() at 0 lists the children anew


def _children():
    return [int(p) for p in os.pread(_CHILDREN_FD, 1 << 16, 0).split()]


def _kill_leftovers(child, uid):
    """Kill and reap whatever the program left running, once ``child`` itself is reaped."""
    if _CHILDREN_FILE is not None:
        for _ in range(1000):  # each round kills one generation; fork bombs are capped by NPROC
            left = [p for p in _children() if p != child and p != _ZYGOTE_PID[0]]
            if not left:
                return
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            for p in left:
                try:
                    os.waitpid(p, 0)
                except ChildProcessError:
                    pass
    _sweep_uid(uid, child)


def _parent(pid):
    """The parent of process ``pid`` (a /proc name), from its stat line."""
    with open("/proc/%s/stat" % pid, "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def _sweep_uid(uid, child):
    """Fallback without the children file: kill every process of the program's private uid (or, as
    PID 1 of a container, everything but us), then wait until they are gone."""
    if uid is None and os.getpid() != 1:
        return
    me = os.getpid()

    def leftovers():
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in (child, me, _ZYGOTE_PID[0]):
                try:
                    if uid is None or os.stat("/proc/" + name).st_uid == uid:
                        if _ZYGOTE_PID[0] > 0 and _parent(name) == _ZYGOTE_PID[0]:
                            continue  # a library server: the zygote's to end
                        found.append(int(name))
                except OSError:
                    pass
        return found

    give_up = time.monotonic() + 2.0
    while time.monotonic() < give_up:
        left = leftovers()
        if not left:
            break
        if uid is None and _ZYGOTE_PID[0] > 0:
            # kill -1 would take the zygote too: one by one (what they fork meanwhile, next round)
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            pid = None
        else:
            pid = os.fork()
        if pid == 0:
            try:
                if uid is not None:
                    os.setresuid(uid, uid, uid)
                # as that uid it reaches only that uid's processes; as PID 1 (which kill -1
                # spares) it reaches everything but us
                os.kill(-1, signal.SIGKILL)
            except BaseException:
                pass
            os._exit(0)
        if pid is not None:
            os.waitpid(pid, 0)
        while True:  # reap the orphans that died
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        time.sleep(0.002)


_SCRATCH = ()  # private writable folders emptied after each program (set by _setup)
_SCRATCH_KEEP = frozenset()  # what the mount plan put there (a venv, a library under /tmp): never touched
_WORKBASE = None  # the folder holding _WORKDIR
_RETIRE = [""]  # set when this worker should be replaced (its private /tmp is then freed whole)


def remove_tree(path):
    """Remove ``path`` and everything under it, whatever a program did to it: no recursion (a
    tree thousands of levels deep), no full paths (past PATH_MAX), folders made unreadable or
    unwritable are opened up again, symlinks are never followed.  Works through folder fds of a
    bounded depth: deeper folders are first moved up next to ``path``.  True when all is gone."""
    parent, name = os.path.split(os.path.abspath(path))
    try:
        base = os.open(parent or "/", _DIR_FLAGS)
    except OSError:
        return not os.path.lexists(path)
    roots, moved, stack = [name], 0, []
    try:
        while roots:
            top = roots.pop()
            try:
                if not stat_isdir(os.lstat(top, dir_fd=base).st_mode):
                    os.unlink(top, dir_fd=base)
                    continue
            except FileNotFoundError:
                continue
            stack.append((base, top, _open_dir(base, top)))
            while stack:
                pfd, d, fd = stack[-1]
                sub = None
                with os.scandir(fd) as it:
                    for entry in it:
                        if entry.is_dir(follow_symlinks=False):
                            sub = entry.name
                            break
                        os.unlink(entry.name, dir_fd=fd)
                if sub is None:
                    stack.pop()
                    os.close(fd)
                    os.rmdir(d, dir_fd=pfd)
                elif len(stack) >= 64:  # too deep to hold fds for: move it up, next to `path`
                    moved += 1
                    new = "%s.deep-%d-%d" % (name, os.getpid(), moved)
                    os.rename(sub, new, src_dir_fd=fd, dst_dir_fd=base)
                    roots.append(new)
                else:
                    stack.append((fd, sub, _open_dir(fd, sub)))
        return not os.path.lexists(path)
    except OSError:
        return False
    finally:
        for _, _, fd in stack:
            os.close(fd)
        os.close(base)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(pfd, name):
    """A folder's fd, with the rights to empty it (it may have been made 000 by its owner)."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=pfd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
    try:
        os.fchmod(fd, 0o700)  # unlinking in it needs write and search rights, and no sticky bit
    except OSError:
        pass
    return fd


def stat_isdir(mode):
    return (mode & 0o170000) == 0o040000


def _remove_sysv_ipc(uid):
    """Remove the System V objects the last program left, so that the next program cannot see
    them: all of them where our IPC namespace is our own, else (the host's, rlimits) only those
    its private uid created; none when it has no uid of its own there."""
    if _LIBC is None or (not _IPC_PRIVATE and uid is None):
        return
    for kind, rm in (("shm", lambda i: _LIBC.shmctl(i, 0, None)), ("sem", lambda i: _LIBC.semctl(i, 0, 0)),
                     ("msg", lambda i: _LIBC.msgctl(i, 0, None))):  # IPC_RMID = 0
        try:
            with open("/proc/sysvipc/" + kind, "rb") as f:
                lines = f.read().split(b"\n")
        except OSError:
            continue
        if len(lines) < 2 or not lines[1].strip():
            continue  # the usual case: nothing there
        head = lines[0].split()
        cuid = head.index(b"cuid") if b"cuid" in head else None
        for line in lines[1:]:
            cols = line.split()
            if len(cols) > 1 and (_IPC_PRIVATE or (cuid is not None and int(cols[cuid]) == uid)):
                rm(int(cols[1]))


def _fresh_workdir(uid):
    """An empty ``_WORKDIR`` owned by the program's uid.  What a program left that we cannot delete
    (say, a folder it made unreadable, when we are not root) is moved aside instead."""
    try:
        os.mkdir(_WORKDIR, 0o700)
    except FileExistsError:
        os.rename(_WORKDIR, "%s.stale-%d" % (_WORKDIR, time.monotonic_ns()))
        os.mkdir(_WORKDIR, 0o700)
    if uid is not None:
        os.chown(_WORKDIR, uid, uid)
    os.chdir(_WORKDIR)  # the children inherit it: one call less in each of them


def run_program(req, uid):
    limits = req["limits"]
    _fresh_workdir(uid)
    main_py = _MAIN_PY
    fd = os.open(main_py, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        data = req["code"].encode("utf-8", "replace")  # lone surrogates: the file is only for tracebacks
        while data:
            data = data[os.write(fd, data):]
        if uid is not None:
            os.fchown(fd, uid, uid)
    finally:
        os.close(fd)
    rlimits = _rlimits(limits, uid)
    cap = int(limits["output_bytes"])
    pipes = [list(os.pipe()) for _ in range(3)]  # stdout, stderr, channel: [read, write]
    sizes = [_widen(r, cap + 1) for r, _ in pipes]
    for r, _ in pipes:
        os.set_blocking(r, False)
    compiled = _precompile(req["code"], req.get("tail"))
    units = _units(req.get("units")) if req.get("units") else None
    first_wait = min(float(limits["wall_s"]), _TICK)
    first_ms = _TICK_MS if first_wait == _TICK else max(1, int(first_wait * 1000))
    if _LIBC_FORK is not None and "random" in sys.modules:
        sys.modules["random"].seed()  # (see _fork)
    # What the child would otherwise do first, done here: every page a child writes is copied, and
    # the same writes here cost nothing (these pages are ours again once the last child is gone)
    fds = [w for _, w in pipes]
    # (the program's two sockets to its server, raw fds; the program's library mode goes to the
    # server with them and is gone from our memory before the fork: see _request_server)
    if _ZYGOTE:
        server = _request_server(limits, req.pop("library_mode", None))
    else:
        server = None
        req.pop("library_mode", None)  # (no server to tell; nothing of it left for the program either)
    if server is not None:
        fds += server
    main = _MAIN.__dict__
    if units is not None:
        main[units[0]] = units[1]  # (see _units; taken out again below)
    start = time.monotonic()
    if _SET_ARENA is not None:
        _SET_ARENA(_ARENA_ADDRESSES[0])  # the child starts with CPython's own (see _arenas_in_heap)
    # _fork() in line: until the child is gone, every page we write to is copied, and a Python
    # function's return writes to its code object (a reference dropped), which lives in the
    # malloc heap when large: that would split our huge page there (see _collapse_heap).  So up
    # to the first wait on the child nothing but C functions runs here.
    pid = _LIBC_FORK() if _LIBC_FORK is not None else -1
    if pid == 0:
        _child(req["code"], compiled, rlimits, uid, fds)  # closes the read ends too
    pidfd = -1
    try:
        if pid < 0:
            pid = os.fork()  # no libc fork, or it failed (errno is not kept): the real thing
            if pid == 0:
                _child(req["code"], compiled, rlimits, uid, fds)
        if server is not None:
            # the program has its own copies: its server sees the end of the answer's input as soon
            # as the answer is gone (not up to a tick later, while the harness waits on its own
            # connection), and resets while we collect the program's output.  (C calls only: see above)
            os.close(server[0])
            os.close(server[1])
            server, served = None, True
        else:
            served = False
        pidfd = os.pidfd_open(pid)
        if _POLL is not None:
            os.dup2(pidfd, _WAIT_FD)
            exited = _POLL.poll(first_ms)
        else:
            exited = _SELECT([pidfd], _NONE, _NONE, first_wait)[0]
        reply = _supervise(pid, pidfd, bool(exited), pipes, sizes, limits, start, uid)
        if served:
            try:
                reply["server_cpu_s"], reply["server_forked"], death, said = _end_server()
            except OSError:  # (the program may have killed the zygote: its result stands, we retire)
                reply["server_cpu_s"], death, said = None, "", b""
            if said:  # (what its server says of a mode it was given; nothing in the real library's)
                reply["library_report"] = said.decode("utf-8", "replace")
            if death and reply["status"] in ("ok", "error"):
                # the server died under the program: of the CPU the program had it spend (the
                # answer's limit), or of something else (killed from outside, a crash): never
                # the answer's wrong result (issue 42)
                if death == "cpu":
                    reply["status"], reply["detail"] = "timeout", "cpu limit %.3gs (its library server)" % limits["cpu_s"]
                else:
                    reply["status"], reply["detail"] = "sandbox_error", "the library server died: " + death
        return reply
    finally:
        if server is not None:  # (something failed on our side before the fork: the server goes too)
            for fd in server:
                os.close(fd)
            try:
                _end_server()
            except Exception:
                pass
        if _SET_ARENA is not None:
            _SET_ARENA(_ARENA_ADDRESSES[1])  # ours again (in between, only the pools at hand are used)
        if units is not None:
            main.pop(units[0], None)
        if pidfd >= 0:
            os.close(pidfd)
        for pipe in pipes:
            for fd in pipe:
                if fd >= 0:
                    os.close(fd)
        if not _IPC_PER_PROGRAM:
            _remove_sysv_ipc(uid)
        try:  # the usual leftovers, cheaply; anything else the long way
            os.unlink(main_py)
            os.rmdir(_WORKDIR)
        except OSError:
            if not remove_tree(_WORKDIR):
                _RETIRE[0] = "could not remove what a program left in its work dir"
        _COLLAPSED[0] += 1
        if _COLLAPSED[0] >= _COLLAPSE_NEXT[0] and _MADVISE is not None:  # what the heap grew by since (no child now)
            _COLLAPSED[0] = 0
            _COLLAPSE_NEXT[0] = min(_COLLAPSE_NEXT[0] * 4, _COLLAPSE_EVERY)
            _collapse_heap()
        for folder in _SCRATCH:  # what it left in the other writable folders (a private /tmp)
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if path != _WORKBASE and path not in _SCRATCH_KEEP and not remove_tree(path):
                    _RETIRE[0] = "could not remove what a program left in " + folder


def _widen(fd, size):
    """Let a pipe hold ``size`` bytes (up to the system's pipe-max-size), so that a program can
    write all its allowed output without waiting for us to read it; returns the capacity."""
    try:
        return fcntl.fcntl(fd, 1031, min(size, _PIPE_MAX))  # F_SETPIPE_SZ
    except OSError:
        return fcntl.fcntl(fd, 1032)  # F_GETPIPE_SZ


_FIONREAD = None  # termios.FIONREAD (set by _setup)


def _pending(fd):
    return struct.unpack("i", fcntl.ioctl(fd, _FIONREAD, b"\0\0\0\0"))[0]


def _watch(pidfd, fds, sizes, limits, start):
    """The supervision of a program still running after the first tick: returns (why it was
    killed or None, output read so far)."""
    cap = int(limits["output_bytes"])
    deadline = start + float(limits["wall_s"])
    bufs = [bytearray(), bytearray(), bytearray()]
    while True:
        waiting = [_pending(fd) for fd in fds]
        if sum(map(len, bufs)) + sum(waiting) > cap:
            return "output", bufs
        for i, fd in enumerate(fds):
            if waiting[i] > sizes[i] // 2:
                bufs[i] += os.read(fd, waiting[i])
        now = time.monotonic()
        if now >= deadline:
            return "timeout", bufs
        if select.select([pidfd], [], [], min(deadline - now, _TICK))[0]:
            return None, bufs


def _supervise(pid, pidfd, exited, pipes, sizes, limits, start, uid):
    """Wait for the program without touching its pipes: a worker that runs Python while its child
    lives copies every page it writes to, so it sleeps on the child's pidfd (run_program's first
    wait: ``exited`` says whether the child was gone by then) and reads the output once the child
    is gone.  Every ``_TICK`` it checks the output cap and empties pipes that are close to full
    (outputs larger than a pipe can hold, when output_bytes is raised)."""
    if exited:
        killed, bufs = None, [bytearray(), bytearray(), bytearray()]
    else:  # a longer program
        killed, bufs = _watch(pidfd, [r for r, _ in pipes], sizes, limits, start)
    # its group; the child itself too if it may still run
    for kill in (os.killpg,) if killed is None else (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _, wstatus, ru = os.wait4(pid, 0)
    for pipe in pipes:  # ours was the last write end not closed by now: read to the end
        os.close(pipe[1])
        pipe[1] = -1
    cap = int(limits["output_bytes"])
    fds = [r for r, _ in pipes]
    _kill_leftovers(pid, uid)  # after which nothing holds the pipes' write ends
    total = sum(map(len, bufs))
    for i, fd in enumerate(fds):
        while total <= cap:
            try:
                # at most 64 KB a read: a read allocates its whole size first, and a buffer of the
                # cap's size (1 MB) came from the top of our heap, which free() then gave back to the
                # system: 8 brk calls and the faults to take the memory again, per program
                chunk = os.read(fd, min(max(1, cap + 1 - total), 1 << 16))
            except BlockingIOError:  # a writer we could not kill: take what is there
                break
            if not chunk:
                break
            bufs[i] += chunk
            total += len(chunk)
    if total > cap:
        killed = killed or "output"
        over = total - cap
        for b in reversed(bufs):  # keep what came first, as when we used to cut the stream
            cut = min(over, len(b))
            if cut:
                del b[len(b) - cut:]
                over -= cut
    started = bufs[2][:1] == _STARTED
    if started:
        del bufs[2][:1]
    wall = time.monotonic() - start
    cpu = ru.ru_utime + ru.ru_stime
    sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None
    code = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
    stdout, stderr = (bytes(b).decode("utf-8", "replace") for b in bufs[:2])
    detail = ""
    if killed == "output":
        status, detail = "output_limit", "output past %d bytes" % cap
    elif killed == "timeout":
        status, detail = "timeout", "wall limit %.3gs" % limits["wall_s"]
    elif sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits["cpu_s"]):
        status, detail = "timeout", "cpu limit %.3gs" % limits["cpu_s"]
    elif code == MEMORY_EXIT and "MemoryError" in stderr:
        status, detail = "memory", "MemoryError"
    elif sig == signal.SIGKILL and ru.ru_maxrss * 1024 >= 0.9 * limits["memory_mb"] * (1 << 20):
        status, detail = "memory", "killed at the memory limit"
    elif code == 0:
        status = "ok"
    else:
        status = "error"
        if code == 125 and not started and "se-gym sandbox: child set-up failed" in stderr:
            status, detail = "sandbox_error", "child set-up failed"
        elif sig is not None:
            detail = "killed by signal %d" % sig
    return {
        "status": status,
        "exit_code": code,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        # (bytes as they are where the wire carries bytes; JSON needs text)
        "channel": bytes(bufs[2]) if _LOADS is marshal.loads else binascii.b2a_base64(bufs[2], newline=False).decode("ascii"),
        "wall_s": wall,
        "cpu_s": cpu,
        "truncated": killed == "output",
        "detail": detail,
    }


# ------------------------------------------------------------------ the library server (strict)
SERVER_FD = 4  # where a program finds its library server's socket
_ZYGOTE = None  # the control socket to the library-server zygote, when the config names a server
_ZYGOTE_PID = [-1]
_SOCKET = None  # the socket module (imported only for a server)


def _start_zygote(spec, uid):
    """Fork the zygote (clean, hardened like us), which then imports NumPy and the server module;
    wait for its word that it is ready.  Returns an error text, or "" when it serves."""
    global _ZYGOTE, _SOCKET
    import socket

    _SOCKET = socket
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        ours.close()
        try:
            _zygote(spec, theirs, uid)
        finally:
            os._exit(0)
    theirs.close()
    word = ours.recv(4096)
    if word != b"R":
        ours.close()
        os.waitpid(pid, 0)
        return word.decode("utf-8", "replace") or "library server zygote died"
    _ZYGOTE, _ZYGOTE_PID[0] = ours, pid
    return ""


def _zygote(spec, ctrl, uid):
    """The zygote's life: load, then fork a server per request (and kill a server of one program
    when asked: a kept server is the worker's to keep or kill)."""
    try:
        if _PRCTL is not None:
            _PRCTL(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: it goes when we go
            _PRCTL(15, b"se-gym-zygote", 0, 0, 0)  # PR_SET_NAME: told apart from workers in ps and /proc
        sys.path[:] = [p for p in sys.path if p != _WORKDIR]
        import importlib.util

        for name in spec.get("preload", ()):
            __import__(name)
        found = importlib.util.spec_from_file_location("se_gym_library_server", spec["path"])
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
        module.load()
        gc.collect()
        gc.freeze()  # (as the worker does: a server's collections copy none of our pages)
        _collapse_heap()  # (as the worker does: a server's fork copies one entry per 2 MB of our heap)
        _VM[:] = [0, 0]  # (our size, not the worker's, under the servers' memory limit)
        ctrl.send(b"R")
    except BaseException as e:
        ctrl.send(("library server: %s: %s" % (type(e).__name__, e)).encode()[:4000])
        return
    server_uid = None if uid is None else uid + 1  # another uid than the program's
    reusable = getattr(module, "reset", None) is not None
    reaped = {}  # pid -> wait status of the servers reaped lately (the worker may ask how one died)
    while True:
        try:
            msg, fds, _, _ = _SOCKET.recv_fds(ctrl, _CTRL_BYTES, 2)
        except OSError:
            return
        if not msg:
            return  # the worker is gone
        if msg[:1] == b"S" and fds:
            key, _, mode = msg[1:].partition(b"\n")  # (the program's limits, then its library mode)
            rl = _rlimits(json.loads(key), server_uid)
            mine = theirs = None
            if reusable:
                # the server's own control socket, for the worker: it hands the server each next
                # program's socket directly, and hears from it when it is idle again
                mine, theirs = _SOCKET.socketpair(_SOCKET.AF_UNIX, _SOCKET.SOCK_SEQPACKET)
                cpu = dict(rl)[resource.RLIMIT_CPU][0]
                rl = [(r, (cpu, cpu * _SERVER_CPU_SPAN + 1)) if r == resource.RLIMIT_CPU else (r, v) for r, v in rl]
            pid = _fork()  # (libc's fork where we are single-threaded: see _fork)
            if pid == 0:
                _server_child(module, fds, rl, server_uid, theirs, mode)
            for fd in fds:
                os.close(fd)
            if mine is None:
                ctrl.send(b"P%d" % pid)
            else:
                theirs.close()
                try:
                    _SOCKET.send_fds(ctrl, [b"P%d" % pid], [mine.fileno()])
                finally:
                    mine.close()
        elif msg[:1] == b"W" and fds:
            # the worker's warm-up, served by the zygote itself (trusted code; its objects are
            # dropped after): what every server then does first is done once here
            module.serve(fds[0])
            if reusable:
                module.reset()
            gc.collect()
            gc.freeze()
            _collapse_heap()
            ctrl.send(b"D")
        elif msg[:1] == b"K":
            # (a server that serves one program): its CPU time, then the kill; reaped below, later:
            # its exit is not on the worker's way to the next program
            ctrl.send(b"C%r" % _server_cpu(int(msg[1:])))
        elif msg[:1] == b"Q":
            # how a server that died under its program ended (the worker saw its control socket close)
            pid = int(msg[1:])
            status = reaped.pop(pid, None)
            if status is None:
                try:
                    status = os.waitpid(pid, 0)[1]
                except ChildProcessError:
                    status = -1
            ctrl.send(b"Q%d" % status)
        while True:  # reap the servers gone by now (killed by us or by the worker)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if len(reaped) >= 64:
                reaped.clear()
            reaped[pid] = status
        if not (msg[:1] == b"S" and fds):  # (a server's are closed above)
            for fd in fds:
                os.close(fd)


_CTRL_BYTES = 1 << 18  # the longest message on a control socket (a library mode, or a server's report of one)
# How long a program's server may take to say it is idle again (with its report of the program's
# library mode, if it had one), once the program is gone.  A healthy server says it in milliseconds;
# a loaded machine can hold it off the CPU for tenths of a second, and a missing report is an
# infrastructure failure of the dependence check (0.2 s made the CI's loaded runs fail so).  The
# window is the same in every mode (the worker keeps nothing of a program's mode across its fork),
# so only a program that leaves its server busy waits it out, before its server is killed.
_SERVER_IDLE_S = 2.0
_SERVER_CPU_SPAN = 16  # a kept server's CPU hard limit, in programs' CPU limits (each program gets one on top of what it used)
_SERVER_PROGRAMS = 1000  # programs one server serves at most
_SERVER_GROWTH = 64 << 20  # bytes a server may grow by (what it keeps of its programs' memory) before it is replaced


def _server_cpu(pid):
    """The CPU seconds of a server about to be killed (then killed), or -1.0 where unknown."""
    try:
        with open("/proc/%d/schedstat" % pid, "rb") as f:
            cpu = int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        cpu = None
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    if cpu is None:  # (no schedstat to read: wait for it, and take its rusage)
        try:
            ru = os.wait4(pid, 0)[2]
            cpu = ru.ru_utime + ru.ru_stime
        except ChildProcessError:
            cpu = -1.0
    return cpu


_HARNESS_FD = SERVER_FD + 2  # in a server: the harness's connection (SERVER_FD + 1 is its control socket)


def _server_child(module, fds, rlimits, uid, ctrl, mode=b""):
    """A program's library server; never returns.  ``fds``: the program's two sockets (the
    answer's, then the strict harness's own, served once the answer's is closed).  With ``ctrl``
    (its control socket, which the zygote hands the worker; the server module has a ``reset``) it
    serves program after program: after each it resets, says "I" and its CPU seconds for that
    program, and waits for the next program's sockets; when it is no longer fit to serve (see the
    module's ``serve``; too much CPU used, memory kept or programs served) it says "X" instead and
    exits.  Each program gets the same CPU, whatever ran before it (issue 42): an interval timer
    of the program's CPU limit (SIGPROF ends the server, and the worker reads that as the
    program's CPU limit); the RLIMIT_CPU of a kept server bounds its total only.

    ``mode``: the first program's library mode (JSON, see the server module); each next one comes
    with its sockets (``P`` and its mode).  What the server says of a mode (``module.report()``)
    follows its word after a newline."""
    status = 1
    try:
        os.setsid()
        if _PRCTL is not None:
            _PRCTL(15, b"se-gym-libsrv", 0, 0, 0)  # PR_SET_NAME (see _zygote)
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in fds]  # (out of the way of the numbers below)
        for fd in fds:
            os.close(fd)
        if ctrl is not None:
            cfd = fcntl.fcntl(ctrl.fileno(), fcntl.F_DUPFD, 64)
            ctrl.close()
            os.dup2(cfd, SERVER_FD + 1)
            ctrl = _SOCKET.socket(fileno=SERVER_FD + 1)
        os.dup2(moved[0], SERVER_FD)
        os.dup2(moved[1], _HARNESS_FD)
        os.closerange(_HARNESS_FD + 1, 1 << 16)
        if ctrl is None:
            try:
                os.close(SERVER_FD + 1)
            except OSError:
                pass
        cpu_limit, cpu_hard = dict(rlimits)[resource.RLIMIT_CPU]
        if ctrl is not None:  # (a kept server's total; each program's share is the timer's)
            rlimits = [(r, (cpu_hard, cpu_hard)) if r == resource.RLIMIT_CPU else (r, v) for r, v in rlimits]
        for what, value in rlimits:
            resource.setrlimit(what, value)
        if hasattr(module, "hold_room"):  # (its arrays' share of the room these limits leave: read before the filter)
            module.hold_room()
        if uid is not None:
            _become(uid)
        if _DROP_CAPS:
            _drop_caps()
        if _PRCTL is not None:
            if not _FILTERED:
                if _PRCTL(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
                    raise OSError("PR_SET_NO_NEW_PRIVS failed")
                if _SECCOMP is not None and _PRCTL(22, 2, _SECCOMP, 0, 0) != 0:
                    raise OSError("seccomp filter refused")
            if _PRCTL(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE 0: the program cannot trace or read us
                raise OSError("PR_SET_DUMPABLE failed")
        elif _HARDEN_REQUIRED:
            raise OSError("no prctl")
        timer = signal.setitimer
        if ctrl is None:
            timer(signal.ITIMER_PROF, cpu_limit)
            module.serve(SERVER_FD, _HARNESS_FD, mode)
            os._exit(0)
        size, served, start = _vm_bytes(), 0, 0.0
        while True:
            timer(signal.ITIMER_PROF, cpu_limit)
            fit = module.serve(SERVER_FD, _HARNESS_FD, mode) is True
            timer(signal.ITIMER_PROF, 0)
            os.close(SERVER_FD)
            os.close(_HARNESS_FD)
            said = module.report()
            module.reset()
            served += 1
            used = time.process_time()
            fit = (fit and served < _SERVER_PROGRAMS and used + cpu_limit + 1 < cpu_hard
                   and _vm_bytes() - size < _SERVER_GROWTH)
            ctrl.send(b"%s%r" % (b"I" if fit else b"X", used - start) + (b"\n" + said if said else b""))
            if not fit:
                break
            msg, fds, _, _ = _SOCKET.recv_fds(ctrl, _CTRL_BYTES, 2)
            if msg[:1] != b"P" or len(fds) != 2:
                break  # (the worker is gone)
            mode = msg[1:]  # (the next program's library mode)
            start = time.process_time()
            for fd, to in zip(fds, (SERVER_FD, _HARNESS_FD)):
                if fd != to:  # (the lowest free numbers: usually they are)
                    os.dup2(fd, to)
                    os.close(fd)
        status = 0
    except BaseException:
        pass
    os._exit(status)


def _warm_up_with_server(sources, preload):
    """The warm-up (see _warm_up) of a worker whose library is a client: its calls are answered by
    the zygote itself, both sides get warm, and the client forgets the connection afterwards."""
    global _WARMUP
    clients = [sys.modules[p + "._client"] for p in preload if p + "._client" in sys.modules]
    if not clients:
        return
    ours, theirs = _SOCKET.socketpair()
    _SOCKET.send_fds(_ZYGOTE, [b"W"], [theirs.fileno()])
    theirs.close()
    channel = clients[0]._CHANNEL
    channel.fd, channel.pid = ours.fileno(), os.getpid()
    try:
        _WARMUP = _warm_up(sources)
    finally:
        channel.fd, channel.pid, channel.frees, channel.callbacks = -1, -1, [], []
        channel.buf, channel.defs, channel.local, channel.depth = b"", [], 0, 0
        ours.close()
    if _ZYGOTE.recv(64) != b"D":
        raise OSError("library server zygote: no warm-up")
    gc.collect()
    gc.freeze()
    _collapse_heap()


_KEPT = None  # the library server kept between programs: [pid, its control socket, the limits it has]
_ASKED = [None]  # the limits of the server asked of the zygote for the running program (its reply not read yet)


def _request_server(limits, mode):
    """This program's server: the kept one when it has these limits, else a fresh one asked of
    the zygote.  Returns our ends of its two sockets (the program's, raw fds): the answer's, and
    the strict harness's own (issue 42: the server serves it once the answer's is closed).

    ``mode``: the program's library mode (issue 42: the real library, a record of its
    computations, or the counterfactual library; see the server module), which goes to the server
    with the sockets, on its control socket (through the zygote for a fresh one), never on the
    program's: the program can neither read, forge nor notice it.  Nothing of it stays referenced
    here (the caller pops it from the request): the program is a fork of this process, and a
    frame or object walk must find the same worker in every mode."""
    key = json.dumps(limits).encode()
    pairs = [_SOCKET.socketpair(), _SOCKET.socketpair()]
    theirs = [p[1].fileno() for p in pairs]
    ours = [p[0].detach() for p in pairs]  # (closed by run_program with os.close)
    try:
        if _KEPT is not None and _KEPT[2] != key:
            _drop_kept()  # (other limits: a fresh server gets them)
        if _KEPT is not None:
            try:
                _SOCKET.send_fds(_KEPT[1], [b"P" + _mode_word(mode)], theirs)
                return ours
            except OSError:  # (it died meanwhile)
                _drop_kept()
        try:
            _SOCKET.send_fds(_ZYGOTE, [b"S" + key + b"\n" + _mode_word(mode)], theirs)
        except OSError:
            for fd in ours:
                os.close(fd)
            _RETIRE[0] = "the library server zygote is gone"  # (the pool starts a fresh worker)
            raise
        _ASKED[0] = key
        return ours
    finally:
        for p in pairs:
            p[1].close()


def _mode_word(mode):
    """A library mode as the server reads it (JSON; empty for the real library)."""
    return json.dumps(mode, separators=(",", ":")).encode() if mode else b""


def _end_server():
    """Once the program is gone: keep its server when it says it is idle and fit, else kill it
    (reaped by the zygote later).  Returns its CPU seconds for this program (or None), whether it
    was forked for this program, how it died under the program: "" (it did not), "cpu" (its
    CPU limit for the program), or what ended it (killed from outside, a crash), and what it said
    of the program's library mode (b"" when nothing)."""
    global _KEPT
    forked = _ASKED[0] is not None
    if forked:  # a fresh server: the zygote's word (its pid, and its control socket)
        key, _ASKED[0] = _ASKED[0], None
        try:
            word, fds, _, _ = _SOCKET.recv_fds(_ZYGOTE, 64, 1)
            if word[:1] != b"P":
                raise OSError("library server zygote: no server")
            if not fds:  # (a server for one program: the zygote kills it)
                _ZYGOTE.send(b"K" + word[1:])
                word = _ZYGOTE.recv(64)
                if word[:1] != b"C":
                    raise OSError("library server zygote: no reply")
                cpu = float(word[1:])
                return (cpu if cpu >= 0 else None), True, "", b""
        except OSError:
            _RETIRE[0] = "the library server zygote is gone"
            raise
        sock = _SOCKET.socket(fileno=fds[0])
        sock.settimeout(_SERVER_IDLE_S)
        _KEPT = [int(word[1:]), sock, key]
    try:
        word = _KEPT[1].recv(_CTRL_BYTES)
    except OSError:  # (no word in time: still busy with what the program left it)
        word = None
    said = b""
    if word:
        word, _, said = word.partition(b"\n")  # (its word, then what it says of the program's mode)
    if word is not None and word[:1] == b"I":
        return float(word[1:]), forked, "", said
    pid = _KEPT[0]
    _drop_kept(kill=word != b"")  # (an "X", nothing in time, or its end: it goes)
    if word == b"":  # its end: it died while it served this program
        return None, forked, _server_death(pid), b""
    cpu = float(word[1:]) if word is not None and word[:1] == b"X" else _server_cpu(pid)
    return (cpu if cpu >= 0 else None), forked, "", said


def _server_death(pid):
    """What ended a server that died under its program: "cpu" (its CPU limit for the program:
    SIGPROF, or SIGXCPU past the kept server's total) or a description.  Asks the zygote, which
    reaps it."""
    try:
        _ZYGOTE.send(b"Q%d" % pid)
        word = _ZYGOTE.recv(64)
        status = int(word[1:]) if word[:1] == b"Q" else -1
    except (OSError, ValueError):
        return "its zygote is gone"
    if status < 0:
        return "no exit status"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGPROF, signal.SIGXCPU):
            return "cpu"
        return "killed by signal %d" % sig
    return "exited with status %d without its word" % os.WEXITSTATUS(status)


def _drop_kept(kill=True):
    """Forget the kept server and kill it (the zygote reaps it)."""
    global _KEPT
    pid, sock, _ = _KEPT
    _KEPT = None
    sock.close()
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


_SERVER_SPEC = None


def _server_spec(preload):
    """The library server a preloaded client package names (its ``_server.py``), or None."""
    import importlib.util

    for name in preload:
        if "." in name or name == "numpy":
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin:
            path = os.path.join(os.path.dirname(spec.origin), "_server.py")
            if os.path.exists(path):
                return {"path": path, "preload": [p for p in preload if p.split(".")[0] == "numpy"] or ["numpy"]}
    return None


def _preload(names):
    errors = []
    for name in names:
        try:
            __import__(name)
        except BaseException as e:  # reported in the hello frame; the pool decides
            errors.append("%s: %s: %s" % (name, type(e).__name__, e))
    return errors


def _harden(cfg):
    """The worker's own hardening and the helpers its children use.  Returns what actually holds,
    measured, with the reason for each piece that does not (reported in the hello frame; nothing is
    silently dropped)."""
    global _PRCTL, _LIBC, _UNSHARE, _LIBC_FORK, _CHILDREN_FILE, _CHILDREN_FD, _SECCOMP, _IPC_PER_PROGRAM
    global _DROP_CAPS, _HARDEN_REQUIRED, _CHILD_PRCTL, _CHILD_UNSHARE, _MADVISE
    report = {"errors": []}
    errors = report["errors"]
    try:
        libc = ctypes.PyDLL(None, use_errno=True)  # PyDLL: the GIL stays held across fork
        _LIBC, _PRCTL, _UNSHARE = libc, libc.prctl, libc.unshare
        plain = ctypes.PyDLL(None)
        _CHILD_PRCTL, _CHILD_UNSHARE = plain.prctl, plain.unshare
        if cfg.get("huge_pages", True):
            _MADVISE = libc.madvise  # (errno kept: the first collapse reports why it failed)
            _MADVISE.restype, _MADVISE.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    except Exception as e:
        errors.append("libc: %s: %s" % (type(e).__name__, e))
        report.update(not_dumpable=False, no_new_privs=False, seccomp=False, ipc_namespace="per worker")
        return report
    _HARDEN_REQUIRED = True
    # Not dumpable: /proc/<us> then belongs to root, so a program that shares our uid (docker,
    # or a non-root user here) cannot open our fds there and write a forged reply into our
    # protocol pipe, nor trace us.  Each child makes itself dumpable again (_child).
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        errors.append("PR_SET_DUMPABLE: errno %d" % ctypes.get_errno())
    report["not_dumpable"] = libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE, read back
    # orphans of our programs become our children, so that we can find and reap them
    if libc.prctl(36, 1, 0, 0, 0) == 0 or os.getpid() == 1:  # PR_SET_CHILD_SUBREAPER
        path = "/proc/self/task/%d/children" % os.getpid()
        if os.path.exists(path):
            _CHILDREN_FILE = path
            _CHILDREN_FD = os.open(path, os.O_RDONLY)
    else:
        errors.append("PR_SET_CHILD_SUBREAPER: errno %d" % ctypes.get_errno())
    if len(os.listdir("/proc/self/task")) == 1 and cfg.get("fast_paths", True):
        # a handle of its own without use_errno: ctypes' errno bookkeeping around the call
        # writes to (so faults in) pages on both sides of the fork
        fork = _FORK_HANDLE
        if fork is None:
            fork = ctypes.PyDLL(None).fork
            fork.restype, fork.argtypes = ctypes.c_int, []
        _LIBC_FORK = fork
    # System V IPC: a namespace per program where we may make one (root, here or in our own user
    # namespace; tried once on ourselves, which costs nothing): nothing a program makes outlives it
    # or is seen by another.  It costs ~0.7 ms of CPU per program here (the kernel sets up and tears
    # down the namespace); ipc_per_program=False trades it for emptying our namespace after each
    # program, as is done anyway where no namespace can be made (non-root bubblewrap).  POSIX
    # queues are refused by the seccomp filter in both cases.
    global _IPC_PRIVATE
    _IPC_PRIVATE = bool(cfg.get("ipc_private"))
    _IPC_PER_PROGRAM = bool(cfg.get("ipc_per_program", True)) and libc.unshare(0x08000000) == 0
    report["ipc_namespace"] = "per program" if _IPC_PER_PROGRAM else "per worker, emptied after each program"
    _DROP_CAPS = bool(cfg.get("drop_caps"))
    global _READ_CAP
    _READ_CAP = bool(cfg.get("read_cap"))
    global _ANSWER_SECCOMP
    _SECCOMP = _filter_pointer(_seccomp_filter, "seccomp", errors)
    _ANSWER_SECCOMP = _filter_pointer(_answer_filter, "answer filter", errors)
    # NO_NEW_PRIVS and the filter go on the worker itself, once: the kernel passes both on through
    # every fork and no process can take them off, so each child holds them without installing
    # them (two prctl calls and the pages they touch, per program).  The worker needs nothing they
    # refuse.  Where that fails, each child installs them itself (and a child that cannot, fails).
    global _FILTERED
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        errors.append("PR_SET_NO_NEW_PRIVS on the worker: errno %d" % ctypes.get_errno())
    elif _SECCOMP is not None and libc.prctl(22, 2, _SECCOMP, 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        errors.append("seccomp filter on the worker: errno %d" % ctypes.get_errno())
    else:
        _FILTERED = True
    report["filter_installed_by"] = "worker" if _FILTERED else "each program"
    # what a child gets, measured on a real one: NO_NEW_PRIVS, the filter, the capabilities
    report.update(_probe_child(cfg.get("uid")))
    return report


def _filter_pointer(build, what, errors):
    """A pointer to the BPF program ``build()`` makes (kept alive with it), or None."""
    try:
        fprog = build()
        if fprog is not None:
            ptr = ctypes.pointer(fprog)
            ptr._keep = fprog
            return ptr
    except Exception as e:
        errors.append("%s: %s: %s" % (what, type(e).__name__, e))
    return None


def _probe_child(uid):
    """Fork one child through the very set-up programs get and read back its /proc status."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = {}
        try:
            if _IPC_PER_PROGRAM:
                _unshare(0x08000000)
            if uid is not None:
                _become(uid)
            if _DROP_CAPS:
                _drop_caps()
            if not _FILTERED:  # else inherited from the worker, as programs inherit them
                if _PRCTL(38, 1, 0, 0, 0) != 0:
                    raise OSError("PR_SET_NO_NEW_PRIVS failed")
                if _SECCOMP is not None and _PRCTL(22, 2, _SECCOMP, 0, 0) != 0:
                    raise OSError("seccomp filter refused: errno %d" % ctypes.get_errno())
            with open("/proc/self/status") as f:
                status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
            out = {
                "no_new_privs": status.get("NoNewPrivs", "").strip() == "1",
                "seccomp": status.get("Seccomp", "").strip() == "2",
                "capabilities": status.get("CapEff", "").strip(),
                "user_namespace_refused": _UNSHARE(0x10000000) != 0,
            }
            # the strict harness's answer process (issue 42): its filter holds when a signal
            # handler can no longer be installed
            refused = False
            if _fence("answer"):
                try:
                    signal.signal(signal.SIGUSR1, lambda *_: None)
                except OSError:
                    refused = True
            out["answer_filter"] = refused
        except BaseException as e:
            out = {"no_new_privs": False, "seccomp": False, "probe_error": "%s: %s" % (type(e).__name__, e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    try:
        return json.loads(data.decode())
    except ValueError:
        return {"no_new_privs": False, "seccomp": False, "probe_error": "no answer from the probe child"}


def _setup(cfg):
    """Everything a worker does once: preload, environment, streams, signals, fork helpers.
    Returns (preload errors, program uid or None)."""
    global _WORKDIR, _MAIN_PY, _STREAMS, _MAIN, _PIPE_MAX
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            _PIPE_MAX = int(f.read())
    except (OSError, ValueError):
        pass
    if sys.path and sys.path[0] in ("", os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
        del sys.path[0]  # our own folder, or the one we were started from, is not the programs' business
    if sys.flags.no_site:  # started with -S (see local.py): what site would give `python main.py`
        sys.path += [p for p in cfg.get("site_packages", []) if p not in sys.path]
        import site

        site.setquit()
        site.setcopyright()
        site.sethelper()
    sys.path[0:0] = list(cfg.get("pythonpath", []))
    os.environ.update(_MIN_ENV)
    preload = list(cfg.get("preload", []))
    global _SERVER_SPEC, _WARMUP
    _SERVER_SPEC = cfg.get("server") or _server_spec(preload)
    if _SERVER_SPEC:
        preload = [p for p in preload if p.split(".")[0] != "numpy"]
    errors = _preload(list(_STDLIB) + preload)
    # (with a server the warm-up waits for its zygote: see _warm_up_with_server)
    _WARMUP = _warm_up(cfg.get("warmup") or ()) if not _SERVER_SPEC else {}
    os.makedirs(cfg["workdir"], exist_ok=True)
    os.chmod(cfg["workdir"], 0o711)
    global _SCRATCH, _SCRATCH_KEEP, _WORKBASE
    _SCRATCH = tuple(cfg.get("scratch", ()))
    _SCRATCH_KEEP = frozenset(cfg.get("scratch_keep", ()))
    _WORKBASE = os.path.abspath(cfg["workdir"])
    _WORKDIR = os.path.join(cfg["workdir"], "run")
    _MAIN_PY = os.path.join(_WORKDIR, "main.py")
    # the programs' environment, inherited through fork: nothing of ours or of whoever started us
    os.environ.clear()
    os.environ.update(_MIN_ENV, HOME=_WORKDIR, TMPDIR=_WORKDIR)
    _STREAMS = (
        io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8"),
        io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace"),
        io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True),
    )
    atexit._clear()  # preloaded modules' handlers are not the programs' (and the worker needs none)
    sys.argv = ["main.py"]
    _MAIN = types.ModuleType("__main__")
    _MAIN.__dict__.update(__file__=os.path.join(_WORKDIR, "main.py"), __builtins__=__builtins__, __cached__=None)
    _MAIN.__dict__["__sg_fence"] = _fence  # (for the strict harness: see _fence; it takes it out of its process)
    sys.modules["__main__"] = _MAIN  # our own code keeps its globals; programs find theirs here
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the parent's terminal is the pool's to handle
    for sig in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # as in `python main.py`: errors, not deaths
        signal.signal(sig, signal.SIG_IGN)
    uid = cfg.get("uid")
    if os.getuid() != 0:
        uid = None  # cannot drop privileges: docker already runs us unprivileged
    hardening = _harden(cfg)
    # What `python main.py` sets up for a program and a fork passes on, set once here rather than
    # in each child, where the same writes would each copy a page (some 50 per program).  The
    # worker itself never writes to these streams (its protocol has fds of its own) and imports
    # nothing once sys.path starts with the programs' folder (below), where a program could leave
    # a module of any name.
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = _STREAMS
    # (termios, for programs that outlive the first tick, imported now rather than by the first of
    # them: else every later program would find it in sys.modules, and could tell that one before
    # it on this worker ran longer than a tick; issue 42, test_dependence's probe saw it)
    global _FIONREAD
    import termios

    _FIONREAD = termios.FIONREAD
    sys.path.insert(0, _WORKDIR)
    # pre-fork server trick: move everything made so far out of the collector's reach, so that a
    # collection in a child does not write to (and so copy) every page the worker shares with it
    gc.collect()
    gc.freeze()
    _COLLAPSED[1] = _collapse_heap()
    return errors, uid, hardening


_WARMUP = {}  # what the warm-up did (reported in the hello frame)


def _warm_up(sources):
    """Run the sandbox owner's warm-up code (trusted: a judge's, never a program's) once, before the
    first fork.  What a program does in its first moments (print arrays, call the library) writes
    to the worker's pages it shares: CPython specialises the bytecode it runs on first use and
    fills its type-attribute cache on each miss, and in a fresh fork each such write copies a page.
    Done once here, every child finds them done.  Warnings are ignored (and so never registered as
    already shown); modules the warm-up imported are reported."""
    before = set(sys.modules)
    errors = []
    for src in sources:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(src, "<warm-up>", "exec"), {"__name__": "__warmup__", "__builtins__": __builtins__})
        except BaseException as e:  # a warm-up is an optimisation: never fatal
            errors.append("%s: %s" % (type(e).__name__, e))
    return {"errors": errors, "imported": sorted(set(sys.modules) - before)} if sources else {}


_MS = {"rdonly": 1, "nosuid": 2, "nodev": 4, "noexec": 8, "remount": 32, "bind": 4096, "move": 8192,
       "rec": 16384, "private": 1 << 18}


def _mount(libc, src, dst, fstype, flags, data=None):
    enc = lambda x: None if x is None else x.encode()
    if libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "mount %s on %s: %s" % (src or fstype, dst, os.strerror(e)))


def build_root(spec):
    """Make the mount plan (local.mount_plan) the root of this process's own mount namespace, as
    bubblewrap does where it is installed: an empty tmpfs, the planned folders bound read-only,
    a minimal /dev, a /proc of our PID namespace, size-limited tmpfs for /tmp and /dev/shm; then
    the tmpfs itself read-only and moved to /.  Needs CAP_SYS_ADMIN (root, or root of our own
    user namespace, as `unshare` starts us).  Returns notes on what could not be done."""
    libc = ctypes.CDLL(None, use_errno=True)
    MS = _MS
    root, notes = spec["root"], []
    _mount(libc, None, "/", None, MS["rec"] | MS["private"])
    _mount(libc, "tmpfs", root, "tmpfs", MS["nosuid"] | MS["nodev"], "mode=0755,size=4m")
    at = lambda p: root + p

    def bind(src, dst, extra=0):
        if os.path.isdir(src):
            os.makedirs(at(dst), 0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(at(dst)), 0o755, exist_ok=True)
            open(at(dst), "a").close()
        _mount(libc, src, at(dst), None, MS["bind"] | MS["rec"])
        # a remount must repeat the flags the kernel locked on the source (in a user namespace)
        f = os.statvfs(src).f_flag
        locked = (MS["nosuid"] if f & 2 else 0) | (MS["nodev"] if f & 4 else 0) | (MS["noexec"] if f & 8 else 0)
        _mount(libc, None, at(dst), None, MS["remount"] | MS["bind"] | MS["rdonly"] | MS["nosuid"] | locked | extra)

    for op in spec["ops"]:
        kind = op[0]
        if kind == "dir":
            os.makedirs(at(op[1]), 0o755, exist_ok=True)
            os.chmod(at(op[1]), 0o755)
        elif kind == "symlink":
            os.symlink(op[1], at(op[2]))
        elif kind == "ro":
            bind(op[1], op[2])
        elif kind == "tmpfs":
            os.makedirs(at(op[1]), 0o755, exist_ok=True)
            _mount(libc, "tmpfs", at(op[1]), "tmpfs", MS["nosuid"] | MS["nodev"], "mode=%o,size=%d" % (op[3], op[2]))
        elif kind == "dev":
            os.makedirs(at("/dev"), 0o755, exist_ok=True)
            for name in ("null", "zero", "full", "random", "urandom", "tty"):
                if os.path.exists("/dev/" + name):
                    try:
                        bind("/dev/" + name, "/dev/" + name)
                    except OSError as e:
                        notes.append(str(e))
            for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                                 ("stderr", "/proc/self/fd/2")):
                os.symlink(target, at("/dev/" + name))
        elif kind == "proc":
            os.makedirs(at("/proc"), 0o555, exist_ok=True)
            try:
                _mount(libc, "proc", at("/proc"), "proc", MS["nosuid"] | MS["nodev"] | MS["noexec"])
            except OSError as e:
                # a container may forbid a fresh /proc: programs then have none (not the host's)
                notes.append("no /proc: %s" % e)
    _mount(libc, None, root, None, MS["remount"] | MS["bind"] | MS["rdonly"] | MS["nosuid"] | MS["nodev"])
    os.chdir(root)
    _mount(libc, root, "/", None, MS["move"])
    os.chroot(".")
    os.chdir("/")
    return notes


def main():
    global _DUMPS, _LOADS
    cfg = json.loads(sys.argv[1])
    _DUMPS, _LOADS = _WIRES[cfg.get("wire", "json")]
    # keep the protocol off fds 0/1 so that stray prints of preloaded modules cannot corrupt it
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # also the programs' stdin
    os.dup2(2, 1)
    os.close(devnull)
    if cfg.get("cpu") is not None:
        try:
            os.sched_setaffinity(0, {cfg["cpu"]})  # inherited by every program we fork
        except OSError:
            pass
    notes = build_root(cfg["mounts"]) if cfg.get("mounts") else []
    if not cfg.get("fast_paths", True):
        # the plain fallback (SE_GYM_WORKER_FAST_PATHS=0): none of the CPython-internal speed-ups
        # (pymalloc's arenas moved into the heap, huge pages, libc's fork); verdicts are the same
        cfg["huge_pages"] = False
    if cfg.get("huge_pages", True):
        _early_handles()
        _arenas_in_heap()
    errors, uid, hardening = _setup(cfg)
    hardening["errors"] += notes
    server_error = _start_zygote(_SERVER_SPEC, uid) if _SERVER_SPEC else ""
    if _ZYGOTE and cfg.get("warmup"):
        _warm_up_with_server(cfg["warmup"], preload=cfg.get("preload", []))
    hello = {
        "hardening": hardening,
        "pid": os.getpid(),
        "uid": os.getuid(),
        "child_uid": uid if uid is not None else os.getuid(),
        "python": sys.version.split()[0],
        "numpy": getattr(sys.modules.get("numpy"), "__version__", None),
        "library_server": bool(_ZYGOTE),
        "library_server_error": server_error,
        "preload_errors": [e for e in errors if e.split(":")[0] not in _STDLIB],
        "warmup": _WARMUP,
        "vm_mb": _vm_bytes() >> 20,
        "huge_pages_mb": _COLLAPSED[1],
        "huge_pages_error": _HUGE_ERROR[0] if _HUGE_ERROR else "",
        "arenas": _ARENAS[0],
    }
    write_frame(proto_out, {"hello": hello})
    reply = None  # (bound before the first program too: every program finds the same frames)
    while True:
        req = read_frame(proto_in)
        if req is None:
            break
        try:
            reply = run_program(req, uid)
        except Exception as e:  # our own failure, not the program's
            reply = {"status": "sandbox_error", "detail": "worker: %s: %s" % (type(e).__name__, e)}
        reply["id"] = req.get("id")
        if _RETIRE[0]:
            reply["retire"] = _RETIRE[0]  # the pool replaces us: our private /tmp goes with us
        write_frame(proto_out, reply)
        # the next program is a fork of us: nothing of this one's reply (its output, its server's
        # report of a library mode, issue 42) may stay in our frames for it to walk into
        reply = None
        if _RETIRE[0]:
            break


if __name__ == "__main__":
    main()
