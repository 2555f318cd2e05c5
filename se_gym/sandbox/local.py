"""The ``local`` backend: pre-forked workers on this machine, in namespaces of their own when the
machine allows it (``isolation()`` and :func:`isolation_report` say what holds, measured).

Isolation levels (``isolation()["level"]``), the first that works is used:
- ``bwrap``: each worker runs in bubblewrap on an empty root holding only the mount plan
  (:func:`mount_plan`): the system's libraries, the interpreter's real prefixes and site-packages
  (wherever they live: a venv under /tmp, pyenv under an unreadable /root, conda), the library
  folders and the worker script, all read-only; a private size-limited /tmp and /dev/shm; its own
  network (none), PID, IPC and UTS namespaces; it dies with us.
- ``unshare`` (root) / ``userns`` (not root, through a user namespace): bubblewrap is missing; the
  worker is started by util-linux ``unshare`` in new mount, network, PID, IPC and UTS namespaces and
  builds the same mount plan itself (worker.build_root).  In ``userns`` programs keep our uid with
  every capability dropped.
- ``rlimits``: no namespace can be made here: programs share the network and see the host's files
  (a warning says so once per process on stderr).
In every level each program runs in a fresh fork of a worker that already imported NumPy and the
preload modules, with rlimits, its own session, an empty environment, NO_NEW_PRIVS, a seccomp
filter (no new user namespaces, no POSIX queues) and, when we are root, a private uid per worker
(so that RLIMIT_NPROC holds and it can neither signal nor read its worker).  No list of modules
decides what a program can import: it imports whatever the interpreter can.
"""
from __future__ import annotations

import functools
import json
import logging
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .base import Limits, worker_fast_paths
from .pool import FdTransport, Transport, WorkerPool

log = logging.getLogger(__name__)

_WORKER_SCRIPT = str(Path(__file__).resolve().with_name("worker.py"))
_WORKER_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    # every symbol of the interpreter and its libraries bound once, at the worker's start: lazily
    # bound, the first call of each function in each program wrote its GOT entry, a copied page
    # (programs get an environment of their own, without it)
    "LD_BIND_NOW": "1",
}
_NAMESPACES = ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
# Size of the worker's private /tmp (programs' work dirs; a worker runs one program at a time and
# empties it after each, so this is what one program may write) and of its /dev/shm.
TMP_MB = 256
SHM_MB = 64
# System folders every program needs: the dynamic loader and the C libraries the interpreter links.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
WORKER_IN_SANDBOX = "/.se-gym/worker.py"
WORKER_CODE_IN_SANDBOX = "/.se-gym/worker.pyc"
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


def _traversable(path: str) -> bool:
    """Whether an unprivileged uid can walk through this folder."""
    try:
        return bool(os.stat(path).st_mode & stat.S_IXOTH)
    except OSError:
        return False


def _world_readable(path: str) -> bool:
    """Whether any uid can walk to ``path`` (every folder on the way is o+x)."""
    parts = Path(os.path.realpath(path)).parts
    return all(_traversable(str(Path(*parts[:i]))) for i in range(2, len(parts) + 1))


def _site_packages() -> list[str]:
    """The site-packages folders `python main.py` would get from site (venv, and the base install's
    for a venv made with --system-site-packages); the user's own site is a home folder: left out."""
    import importlib.util
    import site

    out = [p for p in site.getsitepackages() if os.path.isdir(p)]
    # NumPy (which every library wraps) may come from PYTHONPATH instead, as in the OpenEnv image,
    # whose base holds it at the host venv's path: its folder then joins the list
    spec = importlib.util.find_spec("numpy")
    if spec is not None and spec.origin:
        folder = os.path.dirname(os.path.dirname(spec.origin))
        if os.path.isdir(folder) and folder not in out:
            out.append(folder)
    return out


def interpreter_paths() -> list[str]:
    """Every folder the interpreter imports from or runs out of, as the host names them: the real
    prefixes (venv and base install), the executable's folder (and the one it links to), the
    standard library and site-packages (sysconfig and site), and the sys.path entries that lie in
    them (python3.11.zip, lib-dynload).  Not the working directory, the script's folder or .pth
    extras: those are the caller's, not the interpreter's."""
    import sysconfig

    exe = sys.executable or ""
    cands = [sys.prefix, sys.base_prefix, sys.exec_prefix, getattr(sys, "base_exec_prefix", sys.exec_prefix)]
    if exe:
        cands += [os.path.dirname(os.path.abspath(exe)), os.path.dirname(os.path.realpath(exe))]
    paths = sysconfig.get_paths()
    cands += [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    cands += _site_packages()
    roots = [os.path.realpath(c) for c in cands if c]
    for p in sys.path:  # zip / lib-dynload inside the install (they exist or not; both fine)
        if p and any(os.path.realpath(p).startswith(r.rstrip("/") + "/") for r in roots):
            cands.append(p)
    out: list[str] = []
    for c in cands:
        if c and os.path.exists(c) and os.path.abspath(c) not in out:
            out.append(os.path.abspath(c))
    return out


@functools.lru_cache(maxsize=1)
def worker_code() -> str:
    """The file a worker runs: worker.py compiled once per version of its source into se-gym's cache
    (``worker-<tag>-<hash of the source>.pyc``), or worker.py itself where that cannot be written.
    A script is compiled afresh by every interpreter that runs it (never from a cached .pyc): that
    was ~10 ms of CPU at every worker's start, on the way to the first verdict."""
    import hashlib
    import py_compile

    try:
        from ..library.writer import cache_root

        tag = sys.implementation.cache_tag
        if not tag:
            return _WORKER_SCRIPT
        digest = hashlib.sha256(Path(_WORKER_SCRIPT).read_bytes()).hexdigest()[:16]
        out = cache_root() / "worker" / f"worker-{tag}-{digest}.pyc"
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            part = out.with_name(f"{out.name}.{os.getpid()}.part")
            py_compile.compile(_WORKER_SCRIPT, cfile=str(part), dfile=_WORKER_SCRIPT, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            os.chmod(part, 0o644)
            os.replace(part, out)
        return str(out)
    except (OSError, py_compile.PyCompileError) as exc:
        log.debug("se-gym sandbox: the worker runs from source (%s)", exc)
        return _WORKER_SCRIPT


def mount_plan(pythonpath: Sequence[str] = ()) -> list[tuple]:
    """What a program's file system holds, as operations on an empty read-only root:
    ``("ro", src, dst)`` binds host ``src`` read-only at ``dst``, ``("symlink", target, dst)``,
    ``("dir", dst)`` (mode 0755), ``("tmpfs", dst, bytes, mode)``, ``("dev",)``, ``("proc",)``.
    Only the system's libraries, the interpreter, its site-packages, the ``pythonpath`` folders
    (the library) and the worker's own folder: no home, no data, no verdict files, no sockets.
    Folders leading to a bound path are made fresh (0755), so a path under an unreadable home
    (pyenv under /root) is reachable and nothing else of that home is.  Paths reached through a
    symlink (a venv's bin/python, /tmp on another disk) are bound under both names."""
    ops: list[tuple] = [("dev",), ("proc",), ("tmpfs", "/tmp", TMP_MB << 20, 0o1777), ("tmpfs", "/dev/shm", SHM_MB << 20, 0o1777)]
    binds: dict[str, str] = {}  # dst -> src
    for top in _SYSTEM_DIRS:
        if os.path.islink(top):
            ops.append(("symlink", os.readlink(top), top))
        elif os.path.isdir(top):
            binds[top] = top
    wanted = [p for p in _SYSTEM_FILES if os.path.exists(p)]
    wanted += interpreter_paths() + [str(p) for p in pythonpath]
    for p in wanted:
        p = os.path.abspath(p)
        real = os.path.realpath(p)
        for dst in {real, p}:
            binds.setdefault(dst, real if dst == real else real)
    # keep the top-most binds: a path under another bound one (with the same source) is already there
    kept: dict[str, str] = {}
    for dst in sorted(binds):
        covered = False
        for d, s in kept.items():
            if dst.startswith(d.rstrip("/") + "/") and binds[dst] == s.rstrip("/") + dst[len(d.rstrip("/")):]:
                covered = True
                break
        if not covered:
            kept[dst] = binds[dst]
    # the worker's own script, alone, at a fixed place (not the checkout or site-packages around it),
    # and its compiled form beside it where there is one (see worker_code)
    kept[WORKER_IN_SANDBOX] = _WORKER_SCRIPT
    if worker_code() != _WORKER_SCRIPT:
        kept[WORKER_CODE_IN_SANDBOX] = worker_code()
    made = {"/", "/tmp", "/dev", "/proc", "/dev/shm"}
    symlinked = {op[2] for op in ops if op[0] == "symlink"}
    for dst, src in kept.items():
        parts = Path(dst).parts
        for i in range(2, len(parts)):
            anc = str(Path(*parts[:i]))
            if anc in symlinked:
                break  # e.g. /lib64/ld-linux.so.2 under a symlinked /lib64: reached through /usr
            if anc not in made and anc not in kept:
                made.add(anc)
                ops.append(("dir", anc))
        else:
            ops.append(("ro", src, dst))
    return ops


def bwrap_args(pythonpath: Sequence[str] = ()) -> list[str]:
    """The bubblewrap command line (without the command to run): the mount plan on a fresh root."""
    exe = shutil.which("bwrap")
    if exe is None:
        raise FileNotFoundError("bwrap not found (install the Debian package bubblewrap)")
    args = [exe, "--die-with-parent", "--new-session", *_NAMESPACES]
    for op in mount_plan(pythonpath):
        kind = op[0]
        if kind == "dev":
            args += ["--dev", "/dev"]
        elif kind == "proc":
            args += ["--proc", "/proc"]
        elif kind == "tmpfs":
            args += ["--perms", "%o" % op[3], "--size", str(op[2]), "--tmpfs", op[1]]
        elif kind == "symlink":
            args += ["--symlink", op[1], op[2]]
        elif kind == "dir":
            args += ["--perms", "0755", "--dir", op[1]]
        elif kind == "ro":
            args += ["--ro-bind", op[1], op[2]]
    return args + ["--remount-ro", "/", "--chdir", "/"]


def unshare_args(user: bool | None = None) -> list[str]:
    """util-linux ``unshare`` for the worker when bubblewrap is missing: new mount, network, PID,
    IPC and UTS namespaces (the worker then builds the mount plan itself); ``user`` (default: when
    not root): inside a user namespace where we are root (the worker then drops those powers for
    its programs)."""
    exe = shutil.which("unshare")
    if exe is None:
        raise FileNotFoundError("unshare not found (util-linux)")
    args = [exe, "--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child"]
    if user if user is not None else os.getuid() != 0:
        args[1:1] = ["--user", "--map-root-user"]
    return args


@functools.lru_cache(maxsize=1)
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap works in this container (it may need user namespaces), and why not."""
    try:
        args = bwrap_args()
    except FileNotFoundError as exc:
        return False, str(exc)
    return _try(args + ["/bin/true"], "bwrap")


@functools.lru_cache(maxsize=2)
def unshare_status(user: bool | None = None) -> tuple[bool, str]:
    """Whether ``unshare`` can make the worker's namespaces here (root, or user namespaces)."""
    try:
        args = unshare_args(user)
    except FileNotFoundError as exc:
        return False, str(exc)
    return _try(args + ["/bin/true"], "unshare" + (" --user" if "--user" in args else ""))


def _try(cmd: list[str], what: str) -> tuple[bool, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{what} failed: {exc}"
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        return False, f"{what} failed: " + (lines[-1] if lines else f"exit status {proc.returncode}")
    return True, f"{what} works"


class _ProcTransport(FdTransport):
    def __init__(self, proc: subprocess.Popen, name: str, log: Path):
        assert proc.stdin is not None and proc.stdout is not None
        super().__init__(proc.stdin.fileno(), proc.stdout.fileno(), name, wire="marshal")
        self.proc, self.log = proc, log
        # a judge's harness programs are ~24 KB: with the worker's input pipe widened to hold a few
        # whole frames, they too are sent ahead, so the worker starts the next program without
        # waiting for our round trip (marshal: at most 4 bytes per character; half as margin)
        try:
            import fcntl

            capacity = fcntl.fcntl(self.wfd, 1031, 1 << 20)  # F_SETPIPE_SZ (up to pipe-max-size)
        except OSError:
            capacity = 0
        self.ahead_max = max(self.ahead_max, capacity // 8)

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)  # bwrap and the worker: new session, own group
            except OSError:
                self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass

    def log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""


def _memory_tmp() -> str | None:
    """``/dev/shm`` when it is a roomy tmpfs we can write to, else None (the default temp dir).
    Every program gets a fresh work dir, made and removed around it: 0.03 ms in memory against
    0.18 ms on this machine's ext4 /tmp.  (bwrap and docker give their workers a tmpfs of their
    own.)  Roomy: at least 1 GiB free, so not the 64 MB /dev/shm of a default container, where a
    program's files could fill it."""
    try:
        with open("/proc/mounts") as f:
            on_tmpfs = any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in f)
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    roomy = st.f_bavail * st.f_frsize >= 1 << 30
    return "/dev/shm" if on_tmpfs and roomy and os.access("/dev/shm", os.W_OK | os.X_OK) else None


class LocalSandbox(WorkerPool):
    """Pre-forked workers on this machine (see the module doc for the isolation levels)."""

    backend = "local"

    # declarations (se_gym.sandbox.base.Sandbox): the library's folder on the path, the result channel,
    # warm-up code, and a start that tells notify_launched (a judge prepares answers meanwhile)
    library_as = "path"
    channel = True
    warmup = True
    pooled_start = "launch"

    @classmethod
    def isolation_report(cls, options=None) -> dict | None:
        """The isolation that holds here at ``options``' level (``isolation``, default auto), measured by a probe.

        Args:
            options: the options the sandbox would be built with.
        """
        return isolation_report((options or {}).get("isolation", "auto"))

    def __init__(
        self,
        pythonpath: Sequence[str] = (),
        preload: Sequence[str] = ("numpy",),
        workers: int | None = None,
        isolation: str = "auto",
        start_timeout: float = 60.0,
        pin_cpus: bool | None = None,
        hash_seed: int | None = None,
        warmup: Sequence[str] = (),
        ready: str = "all",
    ):
        """``pin_cpus``: keep each worker (and its programs) on one CPU of those we may use.  The
        default pins when there are no more workers than CPUs: each worker and its program then
        take turns on a CPU of their own instead of being moved around, which measured 4-11%
        faster here.  Pass False when other busy processes share the machine.
        ``hash_seed``: the workers' PYTHONHASHSEED (default: random per worker), so a caller can run
        a program under two known, different hash seeds (self-play's determinism check).
        ``warmup``: trusted code each worker runs once before its first program (say, printing the
        library's arrays): what programs then do first is already specialised and cached in the
        worker instead of being redone, page by copied page, in every fork (worker._warm_up).
        ``ready``: ``"all"`` returns once every worker is up; ``"first"`` once one is (the others
        come up meanwhile and take programs from then on: a judge's first verdict does not wait for
        the slowest start)."""
        if isolation not in LEVELS:
            raise ValueError(f"isolation must be one of {', '.join(LEVELS)}, got {isolation!r}")
        for p in pythonpath:
            if not os.path.isdir(p):
                raise ValueError(f"pythonpath entry is not a folder: {p}")
        super().__init__(workers or os.cpu_count() or 1, start_timeout, ready=ready)
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._cpus = cpus if (pin_cpus if pin_cpus is not None else self.workers <= len(cpus)) else None
        self.pythonpath = [os.path.realpath(p) for p in pythonpath]
        self.preload = list(preload)
        self.warmup = [str(w) for w in warmup]
        if hash_seed is not None and not (isinstance(hash_seed, int) and 0 <= hash_seed <= 4294967295):
            raise ValueError(f"hash_seed must be an int in [0, 4294967295], got {hash_seed!r}")
        self.hash_seed = hash_seed
        self.level, self.level_reason = choose_level(isolation)
        self._bwrap = bwrap_args(self.pythonpath) if self.level == "bwrap" else None
        self._unshare = unshare_args(self.level == "userns") if self.level in ("unshare", "userns") else None
        self._plan = mount_plan(self.pythonpath) if self._unshare else None
        # programs run as a private uid where we are root; with the host's file system in view
        # (rlimits) that uid must be able to read the install, else programs keep our uid
        self._drop_uid = os.getuid() == 0 and self.level in ("bwrap", "unshare", "rlimits")
        self._read_cap = False
        self.uid_reason = "a private uid per worker" if self._drop_uid else "the worker's uid"
        if os.getuid() == 0 and self.level == "rlimits":
            unreadable = [p for p in interpreter_paths() + self.pythonpath if not _world_readable(p)]
            self._read_cap = bool(unreadable)
            self.uid_reason = "a private uid per worker" + (
                f", keeping CAP_DAC_READ_SEARCH: other uids cannot read {unreadable[0]} and no mount "
                "namespace can be made here, so programs can read every host file" if unreadable else "")
        elif self.level == "userns":
            self.uid_reason = "our uid, with the user namespace's powers dropped"
        elif os.getuid() != 0:
            self.uid_reason = "our uid (not root: no other uid to give)"
        _warn_once_if_networked(self.level, self.level_reason)
        self._tmp = Path(tempfile.mkdtemp(prefix="se-gym-sandbox-", dir=_memory_tmp()))
        os.chmod(self._tmp, 0o711)
        (self._tmp / "owner").write_text(str(os.getpid()))
        _sweep_orphans(self._tmp.parent)
        self._uids = random.Random(os.urandom(8))
        self.program_uids: set[int] = set()  # every private uid handed to a worker (tests check them)
        # launches per slot (each slot's own thread launches it): names each launch's root, work
        # dir and log afresh, also after a launch that failed (its root is left; close() removes it)
        self._launches = [0] * self.workers
        try:
            self._start()
        except BaseException:
            remove_tree(str(self._tmp))
            raise

    def _spawn(self, slot: int) -> Transport:
        n = self._launches[slot]
        self._launches[slot] += 1
        # a fresh random uid per worker: its NPROC count and its sweep (kill -1) are its own
        uid = self._uids.randrange(200_000, 2_000_000_000) if self._drop_uid else None
        if uid is not None:
            self.program_uids.add(uid)
        private = self.level != "rlimits"
        workdir = "/tmp/se-gym-run" if private else str(self._tmp / f"w{slot}-{n}")
        cfg = {"preload": self.preload, "pythonpath": self.pythonpath, "workdir": workdir, "uid": uid, "wire": "marshal",
               "fast_paths": worker_fast_paths()}
        if self.warmup:
            cfg["warmup"] = self.warmup
        if self._cpus:
            cfg["cpu"] = self._cpus[slot % len(self._cpus)]
        if private:
            cfg["scratch"] = ["/tmp", "/dev/shm"]  # ours alone: emptied after every program...
            # ...but for the folders the mount plan puts there (a venv or a library under /tmp)
            cfg["scratch_keep"] = sorted({"/".join(op[-1].split("/")[:3]) for op in mount_plan(self.pythonpath)
                                          if op[0] in ("ro", "dir", "symlink") and op[-1].startswith(("/tmp/", "/dev/shm/"))})
            cfg["ipc_private"] = True  # so is the IPC namespace
        if self._plan is not None:
            root = self._tmp / f"root{slot}-{n}"
            root.mkdir(mode=0o755)
            cfg["mounts"] = {"root": str(root), "ops": self._plan}
        if self.level == "userns":
            cfg["drop_caps"] = True  # root of its own user namespace: its programs keep none of that
        if self._read_cap:
            cfg["read_cap"] = True
        # run as a script, not with -m: importing the se_gym package (and Gymnasium with it) would
        # put some 8 MB more into every worker, and every fork copies the page tables of it all
        # -S: no site, so none of the .pth start-up hooks of this Python (editable installs, the
        # machine's set-up) run in the worker and sit in every fork; the worker puts site-packages
        # on its path and makes site's builtins (exit, quit, help) itself
        cfg["site_packages"] = _site_packages()
        code = worker_code()
        cmd = [sys.executable, "-s", "-S", code, json.dumps(cfg)]
        if self._bwrap:
            inside = WORKER_IN_SANDBOX if code == _WORKER_SCRIPT else WORKER_CODE_IN_SANDBOX
            cmd = self._bwrap + [sys.executable, "-s", "-S", inside, json.dumps(cfg)]
        elif self._unshare:
            cmd = self._unshare + cmd
        log = self._tmp / f"worker{slot}-{n}.log"
        with open(log, "wb") as logf:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=logf,
                env={**_WORKER_ENV, **({"PYTHONHASHSEED": str(self.hash_seed)} if self.hash_seed is not None else {})}, cwd="/", start_new_session=True,
            )
        return _ProcTransport(proc, f"local-{slot}.{n}", log)

    def isolation(self) -> dict[str, Any]:
        """What holds for programs, from the set-up and from what the worker measured of itself
        (its hello): nothing here is assumed from the level's name alone."""
        hello = self.worker_info
        hard = hello.get("hardening") or {}
        private = self.level != "rlimits"
        return {
            "backend": "local",
            "level": self.level,
            "reason": self.level_reason,
            "network": not private,  # True: programs can reach the network
            "mount_namespace": private,
            "fs": ("read-only view of the system libraries, the interpreter, site-packages and the library; "
                   f"private /tmp of {TMP_MB} MB") if private else "the host's (as the program uid may see it)",
            "pid_namespace": private,
            "ipc_namespace": hard.get("ipc_namespace", "per worker" if private else "host"),
            "user_namespaces": "refused (seccomp)" if hard.get("seccomp") else "allowed",
            "posix_mqueues": "refused (seccomp)" if hard.get("seccomp") else "allowed",
            "kernel_keyrings": "refused (seccomp)" if hard.get("seccomp") else "allowed",
            # the strict harness's answer process (issue 42): measured by the worker's probe
            "answer_process_filter": bool(hard.get("answer_filter")),
            "worker_uid": hello.get("uid"),
            "program_uid": "private per worker" if hello.get("child_uid") != hello.get("uid") else hello.get("child_uid"),
            "program_uid_reason": self.uid_reason,
            "no_new_privs": hard.get("no_new_privs"),
            "worker_not_dumpable": hard.get("not_dumpable"),
            "hardening_errors": hard.get("errors", []),
            "workers": self.workers,
            "pinned_cpus": [self._cpus[i % len(self._cpus)] for i in range(self.workers)] if self._cpus else None,
            "python": hello.get("python"),
            "executable": sys.executable,
            "numpy": hello.get("numpy"),  # None where a library server holds it (strict, issue 31)
            "library_server": bool(hello.get("library_server")),
            "preload": self.preload,
            "pythonpath": self.pythonpath,
            "limits": Limits().to_json(),
            "channel_fd": 3,
        }

    def _close(self) -> None:
        super()._close()
        remove_tree(str(self._tmp))


LEVELS = ("auto", "bwrap", "unshare", "userns", "rlimits")


def choose_level(wanted: str = "auto") -> tuple[str, str]:
    """The isolation level to use, and why: bubblewrap if it works, else namespaces through
    ``unshare`` (``unshare`` as root, ``userns`` through a user namespace), else rlimits only."""
    if wanted == "rlimits":
        return "rlimits", "rlimits requested"
    reasons = []
    if wanted in ("auto", "bwrap"):
        ok, why = bwrap_status()
        if ok:
            return "bwrap", why
        if wanted == "bwrap":
            raise RuntimeError(f"bwrap isolation requested but unavailable: {why}")
        reasons.append(why)
    # as root: namespaces directly, else (a container without CAP_SYS_ADMIN may still allow it)
    # through a user namespace; not root: only through a user namespace
    for level, user in (("unshare", False), ("userns", True)) if os.getuid() == 0 else (("userns", True),):
        if wanted not in ("auto", level):
            continue
        ok, why = unshare_status(user)
        if ok:
            return level, "; ".join(reasons + [why])
        reasons.append(why)
    if wanted != "auto":
        raise RuntimeError(f"{wanted} isolation requested but unavailable: {'; '.join(reasons)}")
    return "rlimits", "; ".join(reasons)


_WARNED: set[str] = set()


def _warn_once_if_networked(level: str, why: str) -> None:
    """Once per process, on stderr: programs judged from here can reach the network."""
    if level == "rlimits" and "network" not in _WARNED:
        _WARNED.add("network")
        log.warning("se-gym sandbox: WARNING: programs can reach the network and the host's files here "
                    "(no bubblewrap, no namespaces: %s); run `se-gym doctor` for the fix", why)


def _sweep_orphans(folder: Path) -> None:
    """Remove the folders of sandboxes whose process is gone (killed before it could close them,
    e.g. by SIGKILL): in /dev/shm they would hold memory until the next reboot."""
    for d in folder.glob("se-gym-sandbox-*"):
        try:
            pid = int((d / "owner").read_text())
        except (OSError, ValueError):
            continue  # not ours to judge (no owner file): left alone
        try:
            os.kill(pid, 0)
            continue  # alive
        except ProcessLookupError:
            remove_tree(str(d))
        except OSError:
            continue


def remove_tree(path: str) -> bool:
    """Remove a folder whatever a program did to it (see worker.remove_tree); True when gone."""
    from .worker import remove_tree as _remove

    return _remove(path)


_PROBE = r"""
import json, os, socket
out = {}
try:
    s = socket.create_connection(("127.0.0.1", PORT), timeout=1)
    s.close()
    out["network"] = True
except OSError:
    out["network"] = False
out["host_file_visible"] = os.path.exists(MARKER)
for folder in ("/tmp", "/var/tmp", "/dev/shm", os.path.dirname(MARKER)):
    try:
        open(os.path.join(folder, "se-gym-probe-PARENT"), "w").close()
    except OSError:
        pass
def _started(pid):  # a pid alone can be 1 in both namespaces (the host is a container's PID 1)
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
out["host_processes_visible"] = _started(PARENT) == HOST_START
out["uid"] = os.getuid()
st = dict(l.rstrip("\n").split(":\t", 1) for l in open("/proc/self/status") if ":\t" in l)
out["no_new_privs"] = st.get("NoNewPrivs", "").strip() == "1"
out["seccomp"] = st.get("Seccomp", "").strip() == "2"
out["capabilities"] = st.get("CapEff", "").strip()
# the kernel's keyrings, by calls that change nothing where they are allowed: each refused one says
# EPERM; ENOSYS for all three: a kernel without keys
import ctypes, platform
nrs = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}.get(platform.machine())
if nrs:
    libc = ctypes.CDLL(None, use_errno=True)
    errs = []
    for nr, args in zip(nrs, ((b"", b"", None, 0, -3), (b"", b"", None, 0), (0, -3, 0))):  # add_key, request_key, KEYCTL_GET_KEYRING_ID
        ctypes.set_errno(0)
        errs.append(ctypes.get_errno() if libc.syscall(nr, *[ctypes.c_long(a) if type(a) is int else a for a in args]) < 0 else 0)
    out["keyrings"] = "refused" if errs == [1, 1, 1] else "absent" if errs == [38, 38, 38] else "reachable"
try:
    open("/se-gym-probe", "w")
    out["root_writable"] = True
except OSError:
    out["root_writable"] = False
print(json.dumps(out))
"""


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks since boot): with the pid, it names one
    process; the probe compares it, since a pid alone (1 in a container) exists in every namespace."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def isolation_report(isolation: str = "auto") -> dict[str, Any]:
    """What isolation holds for programs of the local backend on this machine, and why, *measured*
    by a probe program in a real one-worker sandbox: can it reach a port we listen on, see a file
    we made, see our process, write outside its work dir; its uid, NO_NEW_PRIVS, seccomp and
    capabilities; and the worker's own hardening.  ``holds`` lists what holds, ``missing`` what
    does not (each with the reason), ``fix`` the one thing to do about it (or None).  Never
    raises for a weak machine: a sandbox that cannot start is reported as such."""
    import socket as _socket

    report: dict[str, Any] = {"holds": [], "missing": [], "fix": None}
    try:
        box = LocalSandbox(workers=1, isolation=isolation, pin_cpus=False)
    except Exception as exc:  # the sandbox itself cannot start: that is the report
        report.update(level=None, reason=f"{type(exc).__name__}: {exc}".splitlines()[0])
        report["missing"].append("no sandbox: " + report["reason"])
        report["fix"] = "see the error above; `se-gym sandbox info` repeats it"
        return report
    srv = _socket.socket()
    marker = tempfile.NamedTemporaryFile(prefix="se-gym-probe-")
    try:
        os.chmod(marker.name, 0o644)
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        code = (_PROBE.replace("PORT", str(srv.getsockname()[1])).replace("MARKER", repr(marker.name))
                .replace("PARENT", str(os.getpid())).replace("HOST_START", repr(_start_time(os.getpid()))))
        res = box.run([code], Limits(wall_s=10, cpu_s=5))[0]
        info = box.isolation()
        left = [p for d in sorted({"/tmp", "/var/tmp", "/dev/shm", os.path.dirname(marker.name)})
                if os.path.exists(p := os.path.join(d, f"se-gym-probe-{os.getpid()}"))]
        for p in left:
            os.unlink(p)
    finally:
        srv.close()
        marker.close()
        box.close()
    report.update(level=info["level"], reason=info["reason"], isolation=info)
    try:
        seen = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        report["missing"].append(f"the probe program failed ({res.status.value}): {res.stderr.strip()[-300:]}")
        report["fix"] = "run `se-gym sandbox info` for the worker's log"
        return report
    report["measured"] = seen
    hard = (box.worker_info.get("hardening") or {})

    def check(ok: bool, holds: str, missing: str) -> None:
        (report["holds"] if ok else report["missing"]).append(holds if ok else missing)

    why = info["reason"]
    check(not seen["network"], "network: unreachable (own network namespace)", f"network: REACHABLE ({why})")
    check(not seen["host_file_visible"], "files: only the interpreter, site-packages and the library, read-only",
          f"files: the host's files are visible ({why})")
    check(not seen["root_writable"] and not left, "writes: only the program's own bounded, private work dir",
          "writes: the host's world-writable folders (" + ", ".join(sorted({os.path.dirname(p) for p in left}) or ["/"]) + ")")
    check(not seen["host_processes_visible"], "processes: own PID namespace", f"processes: the host's are visible ({why})")
    check(seen["uid"] != os.getuid() or os.getuid() != 0, f"uid: programs run as {info['program_uid_reason']}",
          "uid: programs run as root")
    check(seen["no_new_privs"], "NO_NEW_PRIVS holds", "NO_NEW_PRIVS does not hold")
    check(bool(hard.get("not_dumpable")), "worker not dumpable (programs cannot open its fds)",
          "worker is dumpable: " + "; ".join(hard.get("errors", [])))
    check(seen["seccomp"], "seccomp: programs cannot make user namespaces", "seccomp filter not installed")
    check(bool(hard.get("answer_filter")), "strict: the answer's own process installs no signal handler, starts no process",
          "strict: the answer's process filter does not hold (strict judges report infrastructure failures)")
    check(bool(hard.get("ipc_namespace")), f"System V IPC: {hard.get('ipc_namespace')}; POSIX queues refused",
          "System V IPC: unknown")
    if "keyrings" in seen:
        check(seen["keyrings"] != "reachable", f"kernel keyrings: {seen['keyrings']} (no channel between programs)",
              "kernel keyrings: reachable (a channel between programs that outlives them)")
    caps = int(seen.get("capabilities") or "0", 16)
    check(caps & ~(1 << 2) == 0, "capabilities: none" + (" but CAP_DAC_READ_SEARCH" if caps else ""),
          f"capabilities: {seen.get('capabilities')}")
    if info["level"] == "rlimits":
        report["fix"] = ("install bubblewrap (apt-get install bubblewrap) or allow namespaces "
                         "(run as root with CAP_SYS_ADMIN, or enable unprivileged user namespaces)")
    return report
