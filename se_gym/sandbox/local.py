"""The ``local`` backend: pre-forked workers on this machine, inside bubblewrap when it works.

Isolation levels (``isolation()["level"]``):
- ``bwrap``: each worker runs in ``bwrap`` with no network, a read-only root, private ``/tmp``,
  its own ``/proc`` and PID namespace, a minimal ``/dev``, and home folders hidden except for
  the Python install and the ``pythonpath`` folders; it dies with us.
- ``rlimits``: bubblewrap is missing or does not work in this container; programs still get rlimits,
  their own session, an empty environment and (as root) an unprivileged uid, but share the network
  and can write world-writable folders such as ``/tmp``.
In both, each program runs in a fresh fork of a worker that already imported NumPy and the preload
modules, as a private uid (when we are root) so that RLIMIT_NPROC holds and it can neither signal
nor read its worker.
"""
from __future__ import annotations

import functools
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .base import Limits
from .pool import FdTransport, Transport, WorkerPool

_PKG_PARENT = str(Path(__file__).resolve().parents[2])  # folder holding the se_gym package
_WORKER_SCRIPT = str(Path(__file__).resolve().with_name("worker.py"))
_WORKER_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_BWRAP_BASE = (
    "--die-with-parent", "--new-session",
    "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--ro-bind", "/", "/",
    "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm",
)


def _traversable(path: str) -> bool:
    """Whether an unprivileged uid can walk through this folder."""
    try:
        return bool(os.stat(path).st_mode & stat.S_IXOTH)
    except OSError:
        return False


# Loaded beforehand when the program uid cannot read the Python install (else programs import them
# when they need them): what NumPy's own functions import on first use (numpy.ma, for median and
# percentile) and the standard modules the worker leaves out for size.
_NUMPY_LAZY = ("numpy.ma",)
_STDLIB_HEAVY = ("fractions", "decimal", "statistics", "dataclasses")


def _world_readable(module: str) -> bool:
    """Whether any uid can walk to ``module``'s folder (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return True
    parts = Path(spec.origin).resolve().parent.parts
    return all(_traversable(str(Path(*parts[:i]))) for i in range(2, len(parts) + 1))


def _site_packages() -> list[str]:
    import site

    return [p for p in site.getsitepackages() if os.path.isdir(p)]


def _needed_paths(pythonpath: Sequence[str]) -> list[str]:
    """Folders a worker must reach: the Python install, sys.path, the package, the pythonpath."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable), _PKG_PARENT]
    paths += [p for p in sys.path if p] + list(pythonpath)
    out: list[str] = []
    for p in sorted({os.path.realpath(p) for p in paths if os.path.exists(p)}):
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return out


def bwrap_args(pythonpath: Sequence[str] = ()) -> list[str]:
    """The bubblewrap command line (without the command to run)."""
    exe = shutil.which("bwrap")
    if exe is None:
        raise FileNotFoundError("bwrap not found (install the Debian package bubblewrap)")
    args = [exe, *_BWRAP_BASE]
    # Folders an unprivileged uid cannot walk (e.g. /root holding pyenv) are replaced by an empty
    # tmpfs with just the needed paths bound back: the rest of them stays hidden.
    hidden: dict[str, list[str]] = {}
    for p in _needed_paths(pythonpath):
        parts = Path(p).parts
        for i in range(2, len(parts)):
            anc = str(Path(*parts[:i]))
            if not _traversable(anc):
                hidden.setdefault(anc, []).append(p)
                break
    for anc in sorted(hidden):
        if anc in ("/tmp", "/dev/shm"):
            continue
        args += ["--perms", "0755", "--tmpfs", anc]
        made: set[str] = set()
        for p in hidden[anc]:
            # bwrap would create the folders leading to p as 0700: make them walkable first
            rel = Path(p).relative_to(anc).parts
            for i in range(1, len(rel)):
                d = str(Path(anc, *rel[:i]))
                if d not in made:
                    made.add(d)
                    args += ["--perms", "0755", "--dir", d]
            args += ["--ro-bind", p, p]
    # needed folders under /tmp (a library folder, a checkout of se-gym) must survive the private
    # /tmp (/tmp itself, on sys.path when a script there started us, stays private)
    under_tmp: list[str] = []
    for p in sorted({os.path.realpath(p) for p in [*pythonpath, _PKG_PARENT, *sys.path] if p}):
        if p.startswith(("/tmp/", "/dev/shm/")) and os.path.isdir(p):
            if not any(p.startswith(q + "/") for q in under_tmp):
                under_tmp.append(p)
    for p in under_tmp:
        args += ["--ro-bind", p, p]
    return args + ["--chdir", _PKG_PARENT]


@functools.lru_cache(maxsize=1)
def bwrap_status() -> tuple[bool, str]:
    """Whether bubblewrap works in this container (it may need user namespaces), and why not."""
    try:
        args = bwrap_args()
    except FileNotFoundError as exc:
        return False, str(exc)
    try:
        proc = subprocess.run(args + ["/bin/true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap failed: {exc}"
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        return False, "bwrap failed: " + (lines[-1] if lines else f"exit status {proc.returncode}")
    return True, "bwrap works"


class _ProcTransport(FdTransport):
    def __init__(self, proc: subprocess.Popen, name: str, log: Path):
        assert proc.stdin is not None and proc.stdout is not None
        super().__init__(proc.stdin.fileno(), proc.stdout.fileno(), name, wire="marshal")
        self.proc, self.log = proc, log

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

    def __init__(
        self,
        pythonpath: Sequence[str] = (),
        preload: Sequence[str] = ("numpy",),
        workers: int | None = None,
        isolation: str = "auto",
        start_timeout: float = 60.0,
        pin_cpus: bool | None = None,
        hash_seed: int | None = None,
    ):
        """``pin_cpus``: keep each worker (and its programs) on one CPU of those we may use.  The
        default pins when there are no more workers than CPUs: each worker and its program then
        take turns on a CPU of their own instead of being moved around, which measured 4-11%
        faster here.  Pass False when other busy processes share the machine.
        ``hash_seed``: the workers' PYTHONHASHSEED (default: random per worker), so a caller can run
        a program under two known, different hash seeds (self-play's determinism check)."""
        if isolation not in ("auto", "bwrap", "rlimits"):
            raise ValueError(f"isolation must be auto, bwrap or rlimits, got {isolation!r}")
        for p in pythonpath:
            if not os.path.isdir(p):
                raise ValueError(f"pythonpath entry is not a folder: {p}")
        super().__init__(workers or os.cpu_count() or 1, start_timeout)
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._cpus = cpus if (pin_cpus if pin_cpus is not None else self.workers <= len(cpus)) else None
        self.pythonpath = [os.path.realpath(p) for p in pythonpath]
        self.preload = list(preload)
        if hash_seed is not None and not (isinstance(hash_seed, int) and 0 <= hash_seed <= 4294967295):
            raise ValueError(f"hash_seed must be an int in [0, 4294967295], got {hash_seed!r}")
        self.hash_seed = hash_seed
        ok, why = bwrap_status() if isolation != "rlimits" else (False, "rlimits requested")
        if isolation == "bwrap" and not ok:
            raise RuntimeError(f"bwrap isolation requested but unavailable: {why}")
        self.level = "bwrap" if ok else "rlimits"
        self.level_reason = why
        self._bwrap = bwrap_args(self.pythonpath) if ok else None
        if self.level == "rlimits" and os.getuid() == 0 and not all(_world_readable(m) for m in ("json", "numpy")):
            # programs run as a private uid that cannot read the Python install here
            extra = (_NUMPY_LAZY if "numpy" in self.preload else ()) + _STDLIB_HEAVY
            self.preload += [m for m in extra if m not in self.preload]
        self._tmp = Path(tempfile.mkdtemp(prefix="se-gym-sandbox-", dir=_memory_tmp()))
        os.chmod(self._tmp, 0o711)
        self._uids = random.Random(os.urandom(8))
        self.program_uids: set[int] = set()  # every private uid handed to a worker (tests check them)
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise

    def _spawn(self, slot: int) -> Transport:
        n = self._spawned
        # a fresh random uid per worker: its NPROC count and its sweep (kill -1) are its own
        uid = self._uids.randrange(200_000, 2_000_000_000) if os.getuid() == 0 else None
        if uid is not None:
            self.program_uids.add(uid)
        workdir = "/tmp/se-gym-run" if self._bwrap else str(self._tmp / f"w{slot}-{n}")
        cfg = {"preload": self.preload, "pythonpath": self.pythonpath, "workdir": workdir, "uid": uid, "wire": "marshal"}
        if self._cpus:
            cfg["cpu"] = self._cpus[slot % len(self._cpus)]
        # run as a script, not with -m: importing the se_gym package (and Gymnasium with it) would
        # put some 8 MB more into every worker, and every fork copies the page tables of it all
        # -S: no site, so none of the .pth start-up hooks of this Python (editable installs, the
        # machine's set-up) run in the worker and sit in every fork; the worker puts site-packages
        # on its path and makes site's builtins (exit, quit, help) itself
        cfg["site_packages"] = _site_packages()
        cmd = [sys.executable, "-s", "-S", _WORKER_SCRIPT, json.dumps(cfg)]
        if self._bwrap:
            cmd = self._bwrap + cmd
        log = self._tmp / f"worker{slot}-{n}.log"
        with open(log, "wb") as logf:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=logf,
                env={**_WORKER_ENV, **({"PYTHONHASHSEED": str(self.hash_seed)} if self.hash_seed is not None else {})}, cwd=_PKG_PARENT, start_new_session=True,
            )
        return _ProcTransport(proc, f"local-{slot}.{n}", log)

    def isolation(self) -> dict[str, Any]:
        hello = self.worker_info
        return {
            "backend": "local",
            "level": self.level,
            "reason": self.level_reason,
            "network": self.level != "bwrap",
            "fs": "read-only root, private /tmp" if self.level == "bwrap" else "host fs (unprivileged uid)",
            "pid_namespace": self.level == "bwrap",
            "worker_uid": hello.get("uid"),
            "program_uid": "private per worker" if hello.get("child_uid") != hello.get("uid") else hello.get("child_uid"),
            "workers": self.workers,
            "pinned_cpus": [self._cpus[i % len(self._cpus)] for i in range(self.workers)] if self._cpus else None,
            "python": hello.get("python"),
            "numpy": hello.get("numpy"),
            "preload": self.preload,
            "pythonpath": self.pythonpath,
            "limits": Limits().to_json(),
            "channel_fd": 3,
        }

    def _close(self) -> None:
        super()._close()
        shutil.rmtree(self._tmp, ignore_errors=True)
