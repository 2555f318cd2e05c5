"""A sandbox worker: imports NumPy (and the preload modules) once, then runs each program in a
fresh forked child with its own session, resource limits, temp dir, empty environment and an
unprivileged uid.

Stand-alone on purpose (standard library only, no se_gym imports): the docker image runs this very
file as a script.  Protocol on the worker's stdin/stdout: frames of a 4-byte big-endian length and
a JSON body.  The first frame out is ``{"hello": {...}}``; then one reply per request
``{"id", "code", "limits"}``.  Invoked with one argument, a JSON config
``{"preload": [...], "pythonpath": [...], "workdir": str, "uid": int | null, "name": str}``.
"""
import base64
import ctypes
import gc
import json
import os
import resource
import select
import shutil
import signal
import struct
import sys
import time

MEMORY_EXIT = 86  # exit status of a child that died of an uncaught MemoryError
_CHUNK = 65536
_MIN_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# Common standard-library modules a solution may import, loaded once here so that children find
# them ready (faster, and it works even where the sandbox uid cannot read the Python install).
_STDLIB = ("math", "cmath", "itertools", "functools", "collections", "heapq", "bisect", "re", "json",
           "random", "statistics", "fractions", "decimal", "typing", "string", "copy", "operator",
           "traceback", "io", "atexit", "array", "dataclasses", "numbers", "textwrap", "linecache")


# ---------------------------------------------------------------------------------------- frames
def read_frame(fd):
    head = _read_exact(fd, 4)
    if head is None:
        return None
    body = _read_exact(fd, struct.unpack(">I", head)[0])
    if body is None:
        return None
    return json.loads(body)


def _read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def write_frame(fd, obj):
    body = json.dumps(obj).encode()
    data = struct.pack(">I", len(body)) + body
    while data:
        data = data[os.write(fd, data):]


# ---------------------------------------------------------------------------------------- child
def _vm_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _no_new_privs():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
        libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self belongs to the program's uid again
    except Exception:
        pass


def _child(code, limits, workdir, uid, fds):
    """Runs in the forked child; never returns."""
    status = 1
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.dup2(fds[2], 3)
        os.closerange(4, 1 << 16)
        os.set_inheritable(3, True)
        os.chdir(workdir)
        mb = 1 << 20
        cpu = max(1, int(-(-limits["cpu_s"] // 1)))
        rl = [
            (resource.RLIMIT_AS, _vm_bytes() + int(limits["memory_mb"] * mb)),
            (resource.RLIMIT_CPU, (cpu, cpu + 1)),
            (resource.RLIMIT_NOFILE, int(limits["open_files"])),
            (resource.RLIMIT_FSIZE, int(limits["file_size_mb"] * mb)),
            (resource.RLIMIT_CORE, 0),
        ]
        if uid is not None or os.getuid() != 0:
            # NPROC counts every process of the uid: this child plus the extras it may start (the
            # uid is private to this worker; without a uid of our own the worker counts too)
            rl.append((resource.RLIMIT_NPROC, int(limits["processes"]) + (1 if uid is not None else 2)))
        for what, value in rl:
            soft, hard = value if isinstance(value, tuple) else (value, value)
            resource.setrlimit(what, (soft, hard))
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        _no_new_privs()
        os.environ.clear()
        os.environ.update(_MIN_ENV, HOME=workdir, TMPDIR=workdir)
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL if sig in (signal.SIGTERM, signal.SIGCHLD) else signal.SIG_IGN)
        status = _run_main(code, workdir)
    except BaseException:  # the sandbox set-up itself failed: say so on stderr
        try:
            import traceback

            os.write(2, ("se-gym sandbox: child set-up failed\n" + traceback.format_exc()).encode())
        except BaseException:
            pass
        status = 125
    os._exit(status)


def _run_main(code, workdir):
    import atexit
    import io
    import traceback
    import types

    atexit._clear()  # the worker's handlers are not the program's
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True)
    sys.__stdout__, sys.__stderr__, sys.__stdin__ = sys.stdout, sys.stderr, sys.stdin
    sys.argv = ["main.py"]
    sys.path[0:0] = [workdir]
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=os.path.join(workdir, "main.py"), __builtins__=__builtins__, __cached__=None)
    sys.modules["__main__"] = main
    status = 0
    try:
        exec(compile(code, "main.py", "exec"), main.__dict__)
    except SystemExit as e:
        status = _exit_status(e.code)
    except MemoryError:
        _print_exc(traceback)
        status = MEMORY_EXIT
    except BaseException:
        _print_exc(traceback)
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


def _print_exc(traceback):
    try:
        # like `python main.py`: the traceback starts at the program, not at this runner
        kind, value, tb = sys.exc_info()
        traceback.print_exception(kind, value, tb.tb_next if tb is not None else None)
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
def _has_leftovers(uid, child):
    """Whether a process of the program is left (other than the zombie child): a cheap /proc scan
    that saves the fork of a sweep in the common case.  uid None: we are PID 1 of a container and
    anything but us counts."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (child, me):
            if uid is None:
                return True
            try:
                if os.stat("/proc/" + name).st_uid == uid:
                    return True
            except OSError:
                pass
    return False


def _reap_orphans():
    """We are a child subreaper: collect orphaned grandchildren that died."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _sweep(uid, pgid):
    """Kill what is left of a program: its process group, and (with a private uid) every process of
    that uid, which also catches grandchildren that started their own session."""
    for kill in (os.killpg, os.kill):  # the group; the child itself if it had no group yet
        try:
            kill(pgid, signal.SIGKILL)
        except OSError:
            pass
    if (uid is None and os.getpid() != 1) or not _has_leftovers(uid, pgid):
        return
    pid = os.fork()
    if pid == 0:
        try:
            if uid is not None:
                os.setresuid(uid, uid, uid)
            # as that uid it reaches only that uid's processes; in a container (we are PID 1,
            # which kill -1 spares) it reaches everything but us
            os.kill(-1, signal.SIGKILL)
        except BaseException:
            pass
        os._exit(0)
    os.waitpid(pid, 0)


def run_program(req, workdir_base, uid, counter):
    limits = req["limits"]
    workdir = os.path.join(workdir_base, "run%d" % counter)
    os.mkdir(workdir, 0o700)
    with open(os.path.join(workdir, "main.py"), "w", encoding="utf-8") as f:
        f.write(req["code"])
    if uid is not None:
        os.chown(workdir, uid, uid)
        os.chown(os.path.join(workdir, "main.py"), uid, uid)
    pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, channel
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        for r, _ in pipes:
            os.close(r)
        _child(req["code"], limits, workdir, uid, [w for _, w in pipes])
    for _, w in pipes:
        os.close(w)
    try:
        return _supervise(pid, [r for r, _ in pipes], limits, start, uid)
    finally:
        for r, _ in pipes:
            os.close(r)
        shutil.rmtree(workdir, ignore_errors=True)


def _supervise(pid, fds, limits, start, uid):
    cap = int(limits["output_bytes"])
    deadline = start + float(limits["wall_s"])
    bufs = [bytearray(), bytearray(), bytearray()]
    total = 0
    killed = None  # "timeout" | "output"
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    open_fds = {}
    for i, fd in enumerate(fds):
        poller.register(fd, select.POLLIN)
        open_fds[fd] = i
    poller.register(pidfd, select.POLLIN)
    exited = swept = False
    while open_fds and not killed:
        now = time.monotonic()
        if not exited and now >= deadline:
            killed = "timeout"
            break
        # after the exit only leftovers (already killed) can hold the pipes: bounded drain
        wait_s = 1.0 if exited else deadline - now
        events = poller.poll(int(wait_s * 1000) + 1)
        if not events and exited:
            break
        for fd, _ in events:
            if fd == pidfd:
                exited = True
                poller.unregister(pidfd)
                _sweep(uid, pid)
                swept = True
                continue
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                poller.unregister(fd)
                del open_fds[fd]
                continue
            bufs[open_fds[fd]] += chunk[: max(0, cap - total)]
            total += len(chunk)
            if total > cap:
                killed = "output"
                break
    if not exited and not killed:
        # the child closed its output but still runs: give it until the deadline
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([pidfd], [], [], remaining)[0]:
            killed = "timeout"
    if killed or not swept:
        _sweep(uid, pid)
    _, wstatus, ru = os.wait4(pid, 0)
    os.close(pidfd)
    _reap_orphans()
    if uid is not None or os.getpid() == 1:  # killed leftovers die asynchronously: wait (briefly) until they are gone
        give_up = time.monotonic() + 2.0
        while _has_leftovers(uid, pid) and time.monotonic() < give_up:
            time.sleep(0.002)
            _reap_orphans()
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
        if code == 125 and "se-gym sandbox: child set-up failed" in stderr:
            status, detail = "sandbox_error", "child set-up failed"
        elif sig is not None:
            detail = "killed by signal %d" % sig
    return {
        "status": status,
        "exit_code": code,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        "channel": base64.b64encode(bytes(bufs[2])).decode("ascii"),
        "wall_s": wall,
        "cpu_s": cpu,
        "truncated": total > cap,
        "detail": detail,
    }


def _preload(names):
    errors = []
    for name in names:
        try:
            __import__(name)
        except BaseException as e:  # reported in the hello frame; the pool decides
            errors.append("%s: %s: %s" % (name, type(e).__name__, e))
    return errors


def main():
    cfg = json.loads(sys.argv[1])
    # keep the protocol off fds 0/1 so that stray prints of preloaded modules cannot corrupt it
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.environ.update(_MIN_ENV)
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # the folder we were started from is not the programs' business
    sys.path[0:0] = list(cfg.get("pythonpath", []))
    errors = _preload(list(_STDLIB) + list(cfg.get("preload", [])))
    workdir_base = cfg["workdir"]
    os.makedirs(workdir_base, exist_ok=True)
    os.chmod(workdir_base, 0o711)
    uid = cfg.get("uid")
    if os.getuid() != 0:
        uid = None  # cannot drop privileges: docker already runs us unprivileged
    try:  # orphans of our programs become our children, so that we can reap them
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the parent's terminal is the pool's to handle
    # pre-fork server trick: move everything imported so far out of the collector's reach, so a
    # collection in a child does not write to (and so copy) every page the worker shares with it
    gc.collect()
    gc.freeze()
    hello = {
        "pid": os.getpid(),
        "uid": os.getuid(),
        "child_uid": uid if uid is not None else os.getuid(),
        "python": sys.version.split()[0],
        "numpy": getattr(sys.modules.get("numpy"), "__version__", None),
        "preload_errors": [e for e in errors if not e.split(":")[0] in _STDLIB],
        "vm_mb": _vm_bytes() >> 20,
    }
    write_frame(proto_out, {"hello": hello})
    counter = 0
    while True:
        req = read_frame(proto_in)
        if req is None:
            break
        counter += 1
        try:
            reply = run_program(req, workdir_base, uid, counter)
        except Exception as e:  # our own failure, not the program's
            reply = {"status": "sandbox_error", "detail": "worker: %s: %s" % (type(e).__name__, e)}
        reply["id"] = req.get("id")
        write_frame(proto_out, reply)


if __name__ == "__main__":
    main()
