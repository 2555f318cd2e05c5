"""The sandbox contract: what a backend promises, whatever runs the programs.

A *program* is Python source run as ``__main__`` (like ``python main.py``) with a closed stdin.
Besides stdout and stderr every program gets a **result channel**: file descriptor 3 is the
write end of a pipe of its own, so a harness can report results where the program's prints
cannot land (backends without it, such as the official HTTP server, report ``channel=None``).

``run`` never raises because of what a program does: misbehaviour becomes an :class:`ExecStatus`;
only the infrastructure failing is ``SANDBOX_ERROR``, and that is never the program's fault.
"""
from __future__ import annotations

import abc
import atexit
import enum
import os
import weakref
from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping, Sequence


class ExecStatus(str, enum.Enum):
    """What happened to the program's process (the judge maps these to verdicts)."""

    OK = "ok"  # exited 0
    ERROR = "error"  # non-zero exit, uncaught exception, or a signal the program brought on itself
    TIMEOUT = "timeout"  # wall or CPU limit hit; killed with its whole process group
    MEMORY = "memory"  # memory limit: MemoryError, or killed on the memory limit
    OUTPUT_LIMIT = "output_limit"  # stdout + stderr + channel went past the cap; killed
    SANDBOX_ERROR = "sandbox_error"  # the infrastructure failed (worker died twice, backend unreachable)


@dataclass(frozen=True)
class Limits:
    """Per-program limits.  The defaults follow the official judge (3 s) with room for NumPy.

    Attributes:
        wall_s: wall-clock seconds before the program and its process group are killed.
        cpu_s: CPU seconds (RLIMIT_CPU, rounded up to whole seconds by the kernel).
        memory_mb: memory the program may allocate on top of the preloaded interpreter
            (address-space limit locally; the container's memory limit for docker).
        processes: extra processes (or threads) the program may start: fork-bomb protection.
        open_files: file descriptors (RLIMIT_NOFILE).
        file_size_mb: largest file the program may write (RLIMIT_FSIZE).
        output_bytes: cap on stdout + stderr + channel together; past it the program is killed.
    """

    wall_s: float = 3.0
    cpu_s: float = 3.0
    memory_mb: int = 1024
    processes: int = 1
    open_files: int = 64
    file_size_mb: int = 8
    output_bytes: int = 1_000_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"Limits.{f.name} must be a number, got {value!r}")
            if value < 0 or (value == 0 and f.name != "processes"):
                raise ValueError(f"Limits.{f.name} must be positive, got {value!r}")
        if self.open_files < 8:
            raise ValueError(f"Limits.open_files must be at least 8, got {self.open_files}")

    def to_json(self) -> dict[str, Any]:
        """Every limit, as a dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "Limits":
        """Limits from a (partial) dict; unknown keys are an error, not silently dropped.

        Args:
            data: the limits given (None: the defaults).

        Raises:
            ValueError: an unknown limit, or a value that is not a positive number.
        """
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown limit(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return cls(**data)


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one program.

    Attributes:
        status: what happened to its process (:class:`ExecStatus`).
        exit_code: None when killed by a signal or never run (or the backend reports none).
        signal: the signal that ended it, if any.
        stdout: what it printed.
        stderr: its error output.
        channel: what it wrote to fd 3; None if the backend has no channel.
        wall_s: its wall time.
        cpu_s: its CPU time, where known.
        truncated: output was cut at the cap.
        backend: the backend's name.
        worker: which worker ran it (for debugging flaky infrastructure).
        detail: why: the cause of a ``sandbox_error``, which limit, ...
        server_cpu_s: CPU of the program's library server (strict, issue 31), where it had one.
    """

    status: ExecStatus
    exit_code: int | None  # None when killed by a signal or never run
    signal: int | None  # the signal that ended it, if any
    stdout: str
    stderr: str
    channel: bytes | None  # what the program wrote to fd 3; None if the backend has no channel
    wall_s: float
    cpu_s: float | None
    truncated: bool  # output was cut at the cap
    backend: str
    worker: str | None  # which worker ran it (for debugging flaky infrastructure)
    detail: str = ""  # why: SANDBOX_ERROR cause, which limit, ...
    server_cpu_s: float | None = None  # CPU of the program's library server (strict, issue 31), where it had one
    # what the library server said of a program run with a library mode (Program.library_mode, issue
    # 42): JSON text (the keys it recorded, or how many results it perturbed); None when it said nothing
    library_report: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is ExecStatus.OK

    def to_json(self) -> dict[str, Any]:
        """Every field, JSON-ready (the channel in base64)."""
        import base64

        d = asdict(self)
        d["status"] = self.status.value
        d["channel"] = None if self.channel is None else base64.b64encode(self.channel).decode("ascii")
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ExecResult":
        """The result :meth:`to_json` wrote.

        Args:
            d: the dict.
        """
        import base64

        d = dict(d)
        d["status"] = ExecStatus(d["status"])
        if d.get("channel") is not None:
            d["channel"] = base64.b64decode(d["channel"])
        return cls(**{f.name: d.get(f.name, "" if f.name == "detail" else None) for f in fields(cls)})


def sandbox_error(backend: str, detail: str, worker: str | None = None, wall_s: float = 0.0, channel: bool = True) -> ExecResult:
    """An infrastructure failure, as a result (never an exception)."""
    return ExecResult(ExecStatus.SANDBOX_ERROR, None, None, "", "", b"" if channel else None, wall_s, None, False, backend, worker, detail)


# Sandboxes still open at interpreter exit are closed so that no worker outlives us.
_OPEN: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for box in list(_OPEN):
        try:
            box.close()
        except Exception:  # pragma: no cover - best effort at exit
            pass


class Sandbox(abc.ABC):
    """Runs batches of programs in isolation.  Use as a context manager, or call :meth:`close`."""

    name: str = "sandbox"
    # -- declarations: what the backend needs from its caller and offers, read from the class before
    # it is built (se_gym.sandbox.spec.SandboxSpec.build, the Judge, the env, the CLIs); nothing
    # outside a backend's own module branches on its name.
    # how programs get the library: "path" (its folder goes on the programs' path: pythonpath=),
    # "object" (the Library itself and its profile: library=, profile=; the backend writes it where the
    # programs run) or None (it takes none: a server's client imports what the server has)
    library_as: str | None = "path"
    # whether results carry the result channel (fd 3): True always, False never, None: it depends on
    # the built instance (ask has_channel)
    channel: bool | None = True
    # takes warmup= (trusted code each worker runs once before its first program)
    warmup: bool = False
    # how its start can overlap a caller's work: None (built when first used), "thread" (a pool a judge
    # starts in a background thread), "launch" (the same, and it tells se_gym.sandbox.pool.notify_launched
    # once its workers are launched; it takes ready="first")
    pooled_start: str | None = None
    # True for a client of a server (http): programs import what the server has, so the factory
    # passes no pythonpath or preload
    remote: bool = False
    # True for a backend that runs programs on a cluster this process joins (ray, at address=): one per
    # process, never one in each of a job's actors
    cluster: bool = False
    # options that must be given, each with what it is (for the one-line error when it is missing)
    required_options: Mapping[str, str] = {}
    # modules it imports when built, each with how to install it (checked at gym.make, before a run)
    requires: Mapping[str, str] = {}
    # True where a program's Program.library_mode reaches its library server (workers of ours, local
    # or remote): strict's library dependence check needs it (issue 42)
    library_modes: bool = False

    def __init__(self) -> None:
        self._closed = False
        _OPEN.add(self)

    @abc.abstractmethod
    def run(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        """Run every program (concurrently where the backend can), results in input order.

        Misbehaviour is a status, never an exception; only the infrastructure failing is ``sandbox_error``.

        Args:
            programs: Python sources, each run as ``__main__``.
            limits: their limits (None: the defaults).
        """

    async def run_async(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        """:meth:`run` in an executor thread, for asyncio callers.

        Args:
            programs: Python sources.
            limits: their limits (None: the defaults).
        """
        import asyncio  # (here: it costs ~35 ms to import, and synchronous users never need it)

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.run, list(programs), limits)

    @property
    def has_channel(self) -> bool:
        """Whether results carry the program's result channel (fd 3).  A judge chooses its harness
        from this, never from the backend's name: the same ``http`` backend has a channel against
        a se-gym server (``/run_batch``) and none against the official one (``/run``).  The default
        answers what the class declares (``channel``; None: True)."""
        return self.channel is not False

    @classmethod
    def available(cls, options: Mapping[str, Any] | None = None) -> tuple[bool, str]:
        """Whether this machine can build the backend with ``options``, and why not (``se-gym
        validate`` reports a missing one instead of failing).  The default checks the declared
        ``required_options`` and ``requires``; a backend whose start needs more (a daemon) says so.

        Args:
            options: the options it would be built with.
        """
        missing = [k for k in cls.required_options if (options or {}).get(k) in (None, "")]
        if missing:
            return False, f"needs {', '.join(missing)} ({'; '.join(cls.required_options[k] for k in missing)})"
        why = missing_requirements(cls)
        return (False, f"needs {why}") if why else (True, "")

    @classmethod
    def isolation_report(cls, options: Mapping[str, Any] | None = None) -> dict | None:
        """What isolation holds here for this backend, measured before it is built (``se-gym sandbox
        info`` prints it): ``{"holds": [...], "missing": [...], "fix": ..., "measured": ...}``, or None
        where the backend measures nothing of the kind.

        Args:
            options: the options it would be built with.
        """
        return None

    def isolation_line(self) -> str:
        """One line for the start of a run: the isolation in force (backends word theirs)."""
        info = self.isolation()
        level, reason = info.get("level", "?"), info.get("reason")
        return f"sandbox {info.get('backend', self.name)}, isolation {level}" + (f" ({reason})" if reason else "") + f"; {network_text(info)}"

    @abc.abstractmethod
    def isolation(self) -> dict[str, Any]:
        """How programs are isolated, e.g. ``{"backend": "local", "level": "bwrap", "network": False}``."""

    def close(self) -> None:
        """Stop workers and remove temporary files; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        _OPEN.discard(self)
        self._close()

    def _close(self) -> None:  # backends override
        pass

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - depends on GC timing
        try:
            if not getattr(self, "_closed", True):
                self.close()
        except Exception:
            pass


class Program(str):
    """A program's source (a ``str``: every backend runs it as such) that also names sources the
    backend may compile for it ahead of time, outside the program's process: ``units`` is
    ``(name, ((source, filename, mode[, code]), ...))``.  A backend that does (the local and docker
    workers, which compile before they fork) binds ``name`` in the program's ``__main__`` to a
    tuple holding, for each source, ``compile(source, filename, mode, 0, True)`` or ``None`` where it
    did not compile it (an error, a warning, too long); a backend that does not leaves ``name``
    unbound.  So a program must work either way: it is an optimisation only (a judge's harness
    compiles the answer and its cases before the fork instead of in every child).  ``code``, when
    given, is that very code object marshalled by the caller (who then vouches that compiling the
    source warns of nothing): the local backend hands it over as is instead of compiling again."""

    units: tuple | None = None
    tail: tuple | None = None
    library_mode: dict | None = None

    def __new__(cls, source: str, units: tuple | None = None, tail: tuple | None = None,
                library_mode: dict | None = None) -> "Program":
        """``tail``: ``(cut, marshalled code)``, where ``source[cut:]`` is the program's last top-level
        statement, compiled (by the caller, who vouches that this warns of nothing) at its own line
        numbers as the local worker would compile it after its cached head: the worker then loads it
        instead of compiling it (se_gym/sandbox/worker.py, _precompile).

        ``library_mode`` (strict's library server, issue 42): what the program's library server is
        asked before the program starts, out of the program's sight: ``{"record": True}`` (keep the
        keys of its computations) or ``{"cf": SECRET, "keys": ...}`` (the counterfactual library);
        see se_gym/library/server.py.  What the server says of it comes back in
        ``ExecResult.library_report``.  A backend without library servers runs the program as is."""
        self = super().__new__(cls, source)
        self.units = units
        self.tail = tail
        self.library_mode = library_mode
        return self

    def with_library_mode(self, mode: dict | None) -> "Program":
        """The same program, its library server asked ``mode``.

        Args:
            mode: the library server's mode for this run (the dependence check's ``{"record": True}``
                or a counterfactual world's perturbation); None runs the real library.
        """
        return Program(str(self), self.units, self.tail, mode)


def check_programs(programs: Sequence[str]) -> list[str]:
    """Batches are sequences of source strings; anything else is a caller bug, said in one line."""
    if isinstance(programs, (str, bytes)):
        raise TypeError("run() takes a sequence of programs, not a single string")
    out = list(programs)
    for i, p in enumerate(out):
        if not isinstance(p, str):
            raise TypeError(f"program {i} is {type(p).__name__}, expected str (Python source)")
    return out


def network_text(info: Mapping[str, Any]) -> str:
    """How ``isolation()``'s ``network`` reads in a line."""
    net = info.get("network")
    return "network REACHABLE by programs" if net else "no network" if net is False else "network unknown"


def isolation_line(box: "Sandbox") -> str:
    """One line for the start of a run (``se-gym judge``, the demo): the isolation in force."""
    try:
        if isinstance(box, Sandbox):
            return box.isolation_line()
        return Sandbox.isolation_line(box)  # type: ignore[arg-type]  (a duck-typed box: the plain wording)
    except Exception as exc:  # reporting must not stop the run; say what is unknown
        return f"sandbox {getattr(box, 'name', type(box).__name__)}: isolation unknown ({type(exc).__name__}: {exc})"


def missing_requirements(cls: type) -> str:
    """What of the modules ``cls`` declares in ``requires`` is not installed, as one phrase ("" if none).

    Args:
        cls: a Sandbox class.
    """
    import importlib.util

    missing = [(m, how) for m, how in getattr(cls, "requires", {}).items() if importlib.util.find_spec(m) is None]
    return "; ".join(f"{m}: {how}" for m, how in missing)


def worker_fast_paths() -> bool:
    """Whether sandbox workers use their CPython-internal fast paths (pymalloc's arenas in the heap,
    the heap collapsed into huge pages, fork(2) straight from libc): on unless
    ``SE_GYM_WORKER_FAST_PATHS=0``, the one switch for an interpreter where they misbehave.  The
    plain path gives the same verdicts, at a higher cost per program (docs/benchmarks.md)."""
    return os.environ.get("SE_GYM_WORKER_FAST_PATHS", "1") != "0"
