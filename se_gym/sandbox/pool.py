"""A pool of sandbox workers fed from one queue; shared by the local and docker backends.

Each worker slot has a thread that takes jobs, sends them to its worker process and reads the
reply.  A worker that dies (or stops answering) is replaced; the program it was running is retried
once on the fresh worker before it is reported as ``SANDBOX_ERROR``, so a batch always completes.
"""
from __future__ import annotations

import binascii
import json
import marshal
import os
import queue
import select
import struct
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import wait as futures_wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..errors import SEGymError
from .base import ExecResult, ExecStatus, Limits, Sandbox, check_programs, sandbox_error

# The worker enforces the limits itself; the pool only waits this much longer before it decides
# that the worker hangs (killing and replacing it).
_GRACE_S = 10.0
# Jobs sent ahead to one worker: the running one and the next; and while its programs are short
# (the last one ran under _SHORT_S), three more.  The threads that send them need the GIL, which a
# caller preparing answers holds for up to a few ms at a time (a long parse or compile is one C
# call): with only the next job in hand a worker sometimes ran dry (2,000 real answers on 2 cores:
# cores busy 96.0% with 2 jobs, 96.7% with 3, 96.9% with 4; 5 alternating pairs each).  Behind a
# slow program, jobs sent ahead wait while other workers may idle: hence only 2 then.
_DEPTH = 2
_DEPTH_SHORT = 4
_SHORT_S = 0.05
# Only this many characters of programs are sent ahead (in all): their frames (at most 6 bytes per
# character in JSON) fit in a pipe's 64 KiB without blocking us.
_AHEAD_MAX = 8192

# The threads that feed the workers need the GIL within a fraction of a program's run: at
# CPython's default switch interval (5 ms) a thread busy preparing answers keeps it that long while
# replies wait and workers idle (measured on 2 cores, 2,000 real answers: 1.7 cores busy at 5 ms,
# 1.9 at 0.5 ms, the same CPU per answer).  Lowered while work is out, then put back.
_SWITCH_S = 0.0005
_switch = threading.Lock()
_switch_state = [0, None]  # users now, the interval before the first


# A thread that constructs a pool may ask to be told once every worker has been launched (its
# process started, not yet up): see notify_launched.
_launch_watch = threading.local()


@contextmanager
def notify_launched(callback: Callable[[], None]):
    """Within the block, a pool constructed by this thread calls ``callback()`` once each of its
    workers has been launched (or failed to launch), before waiting for them to come up.  The judge
    uses it to stop preparing answers until then: the launch is Python code of this process, and
    preparing meanwhile takes the GIL from it (measured, 2 workers on 2 cores: launched 0.3 s after
    the start instead of 0.03 s, a core idle meanwhile)."""
    _launch_watch.callback = callback
    try:
        yield
    finally:
        _launch_watch.callback = None


@contextmanager
def prompt_threads():
    """Lower ``sys.setswitchinterval`` to 0.5 ms for the duration (nested and concurrent uses
    share it; the last one out restores the previous value, unless someone changed it meanwhile)."""
    with _switch:
        if _switch_state[0] == 0:
            _switch_state[1] = sys.getswitchinterval()
            if _switch_state[1] > _SWITCH_S:
                sys.setswitchinterval(_SWITCH_S)
        _switch_state[0] += 1
    try:
        yield
    finally:
        with _switch:
            _switch_state[0] -= 1
            if _switch_state[0] == 0 and sys.getswitchinterval() == _SWITCH_S and _switch_state[1] is not None:
                sys.setswitchinterval(_switch_state[1])


class WorkerDied(SEGymError):
    """The worker process is gone or stopped answering."""


class Transport:
    """A connection to one worker: frames out, frames in."""

    name: str = "worker"
    # the most characters (code and units) of jobs sent ahead while the worker is busy: their frames
    # must fit in what the connection holds unread, or we could block writing them while the worker
    # blocks writing a big reply we are not reading
    ahead_max: int = _AHEAD_MAX

    def send(self, obj: dict) -> None:
        raise NotImplementedError

    def recv(self, timeout: float | None) -> dict:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError

    def log_tail(self) -> str:
        return ""


# How frame bodies are encoded (the worker's "wire" setting): JSON, or marshal where both ends are
# this very interpreter and the worker cannot be reached by the programs it runs (local backend).
# marshal costs a fraction of JSON at both ends; in the worker, where every page written after a
# fork is a page fault, that is some 80 microseconds per program.
WIRES: dict[str, tuple[Callable[[Any], bytes], Callable[[bytes], Any]]] = {
    "json": (lambda obj: json.dumps(obj).encode(), lambda body: json.loads(body.decode())),
    "marshal": (marshal.dumps, marshal.loads),
}


class FdTransport(Transport):
    """Frames over a pair of file descriptors (a worker's stdin and stdout pipes)."""

    def __init__(self, wfd: int, rfd: int, name: str, wire: str = "json"):
        self.wfd, self.rfd, self.name, self.wire = wfd, rfd, name, wire
        self._dumps, self._loads = WIRES[wire]
        self._buf = bytearray()

    def send(self, obj: dict) -> None:
        body = self._dumps(obj)
        data = memoryview(struct.pack(">I", len(body)) + body)
        try:
            while data:
                data = data[os.write(self.wfd, data):]
        except OSError as exc:
            raise WorkerDied(f"cannot write to worker: {exc}") from None

    def _fill(self, n: int, deadline: float | None) -> None:
        while len(self._buf) < n:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.rfd], [], [], wait)[0]:
                raise WorkerDied("worker stopped answering")
            try:
                # what is missing, or 64 KB: a read allocates its whole size first (1 MB each time
                # was fresh memory to fault in, for replies of a few KB)
                chunk = os.read(self.rfd, max(n - len(self._buf), 1 << 16))
            except OSError as exc:
                raise WorkerDied(f"cannot read from worker: {exc}") from None
            if not chunk:
                raise WorkerDied("worker exited")
            self._buf += chunk

    def recv(self, timeout: float | None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        self._fill(4, deadline)
        size = struct.unpack(">I", self._buf[:4])[0]
        self._fill(4 + size, deadline)
        with memoryview(self._buf) as view:
            body = bytes(view[4 : 4 + size])  # (one copy: a bytearray slice would be a second)
        del self._buf[: 4 + size]
        return self._loads(body)


@dataclass
class _Job:
    code: str
    limits: Limits
    limits_json: dict  # made once per batch: asdict() would cost more than the rest of a send
    future: Future = field(default_factory=Future)
    attempts: int = 0
    units: tuple | None = None  # Program.units: sources the worker compiles before it forks
    size: int = 0  # characters of code and units (see Transport.ahead_max)
    tail: tuple | None = None  # Program.tail: the last statement's code, compiled by the caller
    mode: dict | None = None  # Program.library_mode: what the worker hands the program's library server with its sockets


def _job(code: str, limits: Limits, wire: dict) -> _Job:
    units = getattr(code, "units", None)
    size = len(code)
    try:
        size += sum(len(u[0]) + len(u[1]) + len(u[2]) + (len(u[3]) if len(u) > 3 and u[3] is not None else 0) for u in units[1]) if units else 0
    except (TypeError, ValueError, IndexError):
        units, size = None, len(code)  # not units as Program makes them: the program compiles itself
    # the frame carries a plain str (marshal refuses subclasses) and the units as plain tuples
    tail = getattr(code, "tail", None)
    if tail is not None:
        try:
            size += len(tail[1])
        except (TypeError, IndexError):
            tail = None
    return _Job(str(code) if type(code) is not str else code, limits, wire, units=units, size=size, tail=tail,
                mode=getattr(code, "library_mode", None))


def _settle(future: Future, result: ExecResult) -> None:
    """Give ``future`` its result unless it is done already.  Its caller may cancel it at any
    moment (``run`` and ``judge_many`` do when interrupted), also between a look at ``done()``
    and ``set_result``: the refusal is expected, and a serving thread that raised here would die."""
    try:
        future.set_result(result)
    except InvalidStateError:
        pass


_STOP = object()
_STATUS = {s.value: s for s in ExecStatus}  # ExecStatus(value) goes through Enum's Python-level lookup
_SANDBOX_ERROR = ExecStatus.SANDBOX_ERROR.value


class WorkerPool(Sandbox):
    """Sandbox over N worker slots; subclasses say how to start a worker (``_spawn``)."""

    backend = "pool"
    library_modes = True  # (the worker hands Program.library_mode to the program's library server)

    def __init__(self, workers: int, start_timeout: float = 60.0, ready: str = "all"):
        if ready not in ("all", "first"):
            raise ValueError(f"ready must be 'all' or 'first', got {ready!r}")
        super().__init__()
        # "first": the constructor returns once one worker is up (the others come up in their own
        # threads and take jobs from then on): a first program need not wait for the slowest boot
        self._ready = ready
        self._up = False  # a worker has come up: a later boot failure is that slot's alone
        self._up_cond = threading.Condition()
        self._booted: list[threading.Event] = []
        self.name = self.backend
        self._n = max(1, int(workers))
        self._start_timeout = start_timeout
        # SimpleQueue: put and get in C, without queue.Queue's Python-level condition variables
        self._queue: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers: list[Transport | None] = [None] * self._n
        self._starting: list[Transport | None] = [None] * self._n  # workers launched, not yet up
        self._hello: dict[str, Any] = {}
        self._spawned = 0
        self.restarts = 0  # workers replaced after dying (for tests and benchmarks)
        self.retired = 0  # workers that asked to be replaced (a work dir they could not clean)
        self._threads: list[threading.Thread] = []
        self._boot_error = ""
        self._limits_json: tuple | None = None  # (the Limits last submitted, its JSON form)

    # -- subclass hooks ----------------------------------------------------------------------
    def _spawn(self, slot: int) -> Transport:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- start-up ----------------------------------------------------------------------------
    def _start(self) -> None:
        """Start every worker concurrently and wait for their hello; raise if one does not come up.
        Each slot's serving thread starts its own worker (and any replacement): a worker under
        ``bwrap --die-with-parent`` is killed when the *thread* that started it ends."""
        booted = [threading.Event() for _ in range(self._n)]
        launched = [threading.Event() for _ in range(self._n)]
        self._booted = booted
        errors: list[BaseException | None] = [None] * self._n
        for slot in range(self._n):
            t = threading.Thread(target=self._serve, args=(slot, booted[slot], errors, launched[slot]),
                                 name=f"{self.backend}-sandbox-{slot}", daemon=True)
            t.start()
            self._threads.append(t)
        callback = getattr(_launch_watch, "callback", None)
        if callback is not None:
            for event in launched:
                event.wait()
            callback()
        if self._ready == "first":
            with self._up_cond:
                # until one worker is up, or every boot has ended (each failed)
                self._up_cond.wait_for(lambda: self._up or all(e.is_set() for e in booted))
                if self._up:
                    return
        for event in booted:
            event.wait()
        failed = [exc for exc in errors if exc is not None]
        if failed:
            self._close()
            raise failed[0]

    def _boot(self, slot: int, launched: threading.Event | None = None) -> Transport:
        """Start the slot's worker and wait for its hello.  Meanwhile it is in ``_starting``, so
        that a close() kills it too; once closed, none is started or kept."""
        try:
            transport = self._spawn(slot)
        finally:
            if launched is not None:
                launched.set()
        with self._lock:
            closed = self._closed
            self._starting[slot] = None if closed else transport
        try:
            if closed:
                raise RuntimeError(f"{self.backend} sandbox closed")
            try:
                msg = transport.recv(self._start_timeout)
            except WorkerDied as exc:
                tail = transport.log_tail()
                raise RuntimeError(f"{self.backend} sandbox worker failed to start: {exc}" + (f"\n{tail}" if tail else "")) from None
            hello = msg.get("hello") or {}
            if hello.get("preload_errors"):
                raise RuntimeError(f"{self.backend} sandbox: preload failed: {'; '.join(hello['preload_errors'])}")
            with self._lock:
                self._starting[slot] = None
                if self._closed:
                    raise RuntimeError(f"{self.backend} sandbox closed")
                self._workers[slot] = transport
                self._hello = hello
                self._spawned += 1
            return transport
        except BaseException:
            with self._lock:
                self._starting[slot] = None
            transport.kill()
            raise

    # -- serving -----------------------------------------------------------------------------
    def _serve(self, slot: int, booted: threading.Event, errors: list[BaseException | None],
               launched: threading.Event | None = None) -> None:
        """Start this slot's worker, then keep it fed: up to ``_DEPTH`` jobs (``_DEPTH_SHORT`` while
        its programs are short) are sent ahead, so that the worker starts the next program as soon
        as it has answered one instead of waiting for our round trip (its replies come back in
        order)."""
        failed = False
        try:
            self._boot(slot, launched)
        except BaseException as exc:  # raised by _start, with the cause
            errors[slot] = exc
            failed = True
        finally:
            if launched is not None:
                launched.set()
            booted.set()
            with self._up_cond:
                self._up = self._up or not failed
                self._up_cond.notify_all()
        if failed:
            if self._ready != "first":
                return
            with self._up_cond:  # is another worker up (the pool serves), or did every boot fail?
                self._up_cond.wait_for(lambda: self._up or self._closed or all(e.is_set() for e in self._booted))
                if not self._up or self._closed:
                    return
            # the pool serves: this slot starts a worker when it next has a job (as after a death)
            self._boot_error = str(errors[slot])
        sent: deque[_Job] = deque()
        held: _Job | None = None  # a big job waiting for the worker to be idle
        stopping = False
        depth = _DEPTH  # (_DEPTH_SHORT once the worker's programs prove short)
        while True:
            while len(sent) < depth and (held is not None or not stopping):
                if held is not None:
                    if not self._fits(slot, sent, held):
                        break
                    job, held = held, None
                else:
                    try:
                        job = self._queue.get(block=not sent)
                    except queue.Empty:
                        break
                    if job is _STOP:
                        stopping = True
                        continue
                    if job.future.done():  # cancelled
                        continue
                    if self._closed:  # run nothing more, and start no worker for it
                        _settle(job.future, sandbox_error(self.backend, "sandbox closed"))
                        continue
                    if not self._fits(slot, sent, job):
                        held = job
                        break
                sent.append(job)
                if not self._send(slot, job):
                    self._worker_died(slot, sent, "cannot start a worker" if self._workers[slot] is None else "")
                    sent.clear()
            if not sent:
                if stopping and held is None:
                    return
                continue
            transport = self._workers[slot]
            job = sent[0]
            try:
                assert transport is not None
                reply = transport.recv(job.limits.wall_s + _GRACE_S)
            except (WorkerDied, AssertionError) as exc:
                self._worker_died(slot, sent, f"worker {getattr(transport, 'name', '?')} died ({exc})")
                sent.clear()
                continue
            sent.popleft()
            wall = reply.get("wall_s")
            depth = _DEPTH_SHORT if type(wall) is float and wall < _SHORT_S else _DEPTH
            _settle(job.future, self._result(reply, transport.name))
            if reply.get("retire"):
                # the worker leaves on its own (say, a tree it could not clean up): replace it; what
                # was sent ahead never started and goes back in the queue as it was
                transport.kill()
                self._workers[slot] = None
                with self._lock:
                    self.retired += 1
                for pending in sent:
                    if not pending.future.done():
                        self._queue.put(pending)
                sent.clear()

    def _fits(self, slot: int, sent: "deque[_Job]", job: _Job) -> bool:
        """Whether ``job`` may be sent now: to an idle worker always; to a busy one only while what
        waits unread in its input (every job sent after the running one) stays within what the
        connection holds.  Past that we could block writing while the worker blocks writing a big
        reply that we would not read: a deadlock."""
        if not sent:
            return True
        waiting = job.size
        for i, queued in enumerate(sent):
            if i:
                waiting += queued.size
        return waiting <= getattr(self._workers[slot], "ahead_max", _AHEAD_MAX)

    def _send(self, slot: int, job: _Job) -> bool:
        """Send a job to the slot's worker (starting one if needed); False if that failed."""
        transport = self._workers[slot]
        if transport is None:
            if self._closed:
                return False
            try:
                transport = self._boot(slot)
            except Exception as exc:
                self._boot_error = str(exc)
                return False
        try:
            msg = {"id": 0, "code": job.code, "limits": job.limits_json}
            # code the caller compiled goes as such where the wire carries bytes (marshal: both
            # ends are this interpreter); elsewhere the worker compiles the source
            binary = getattr(transport, "wire", "json") == "marshal"
            if binary and job.tail is not None:
                msg["tail"] = job.tail
            if job.mode is not None:
                msg["library_mode"] = job.mode
            if job.units:
                msg["units"] = (job.units[0], tuple(
                    (u[3], u[1], "code") if binary and len(u) > 3 and type(u[3]) is bytes else tuple(u[:3])
                    for u in job.units[1]))
            transport.send(msg)
            return True
        except WorkerDied:
            return False

    def _worker_died(self, slot: int, sent: "deque[_Job]", why: str) -> None:
        """The worker of ``slot`` is gone with ``sent`` unanswered.  The oldest was running: it is
        retried once; the others never started and simply go back in the queue."""
        transport = self._workers[slot]
        if transport is not None:
            transport.kill()
            self._workers[slot] = None
            with self._lock:
                self.restarts += 1
        if not why:
            why = f"worker {getattr(transport, 'name', '?')} died"
        if why == "cannot start a worker":
            why = f"cannot start a worker: {self._boot_error}"
        first = True
        for job in sent:
            if job.future.done():
                continue
            if self._closed:
                _settle(job.future, sandbox_error(self.backend, "sandbox closed", getattr(transport, "name", None)))
                continue
            if first:
                job.attempts += 1
                first = False
                if job.attempts >= 2:
                    _settle(job.future, sandbox_error(self.backend, f"{why} on attempt {job.attempts}", None))
                    continue
            self._queue.put(job)

    def _result(self, reply: dict, worker: str) -> ExecResult:
        if reply.get("status") == _SANDBOX_ERROR and "stdout" not in reply:
            return sandbox_error(self.backend, reply.get("detail", ""), worker)
        channel = reply.get("channel") or b""
        return ExecResult(
            status=_STATUS[reply["status"]],
            exit_code=reply.get("exit_code"),
            signal=reply.get("signal"),
            stdout=reply.get("stdout", ""),
            stderr=reply.get("stderr", ""),
            channel=channel if type(channel) is bytes else binascii.a2b_base64(channel),  # (bytes: the marshal wire)
            wall_s=float(reply.get("wall_s", 0.0)),
            cpu_s=reply.get("cpu_s"),
            truncated=bool(reply.get("truncated")),
            backend=self.backend,
            worker=worker,
            detail=reply.get("detail", ""),
            server_cpu_s=reply.get("server_cpu_s"),
            library_report=reply.get("library_report"),
        )

    # -- the contract --------------------------------------------------------------------------
    def run(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        programs = check_programs(programs)
        if self._closed:
            raise RuntimeError(f"{self.backend} sandbox is closed")
        limits = limits or Limits()
        wire = limits.to_json()
        jobs = [_job(code, limits, wire) for code in programs]
        try:
            with prompt_threads():
                for job in jobs:
                    self._queue.put(job)
                if self._closed:  # closed meanwhile: no serving thread may be left to take them
                    for job in jobs:
                        _settle(job.future, sandbox_error(self.backend, "sandbox closed"))
                # one wake-up when the last answer is in, not one per program
                futures_wait([job.future for job in jobs])
            return [job.future.result() for job in jobs]
        except BaseException:  # interrupted: drop what has not started, keep the pool usable
            for job in jobs:
                job.future.cancel()
            raise

    def submit(self, program: str, limits: Limits | None = None) -> Future:
        """One program, answered through a Future (for callers that stream work)."""
        if self._closed:
            raise RuntimeError(f"{self.backend} sandbox is closed")
        limits = limits or Limits()
        wire = self._limits_json
        if wire is None or wire[0] is not limits:  # (dataclasses.asdict costs more than the rest of a submit)
            wire = self._limits_json = (limits, limits.to_json())
        if not isinstance(program, str):
            check_programs([program])  # raises, in one line
        job = _job(program, limits, wire[1])
        self._queue.put(job)
        if self._closed:  # closed meanwhile: no serving thread may be left to take it
            _settle(job.future, sandbox_error(self.backend, "sandbox closed"))
        return job.future

    @property
    def workers(self) -> int:
        return self._n

    @property
    def worker_info(self) -> dict[str, Any]:
        return dict(self._hello)

    def _close(self) -> None:
        # close() has set _closed: from here on the serving threads answer what they take "sandbox
        # closed" and start no worker (one starting now is killed here, or by _boot)
        with self._up_cond:  # (a slot whose boot failed may wait there to hear whether the pool serves)
            self._up_cond.notify_all()
        with self._lock:
            workers = [t for t in self._workers + self._starting if t is not None]
            self._workers[:] = [None] * self._n
            self._starting[:] = [None] * self._n
        for _ in self._threads:
            self._queue.put(_STOP)
        for transport in workers:
            transport.kill()
        for t in self._threads:
            t.join(timeout=5)
        # anything still queued will never run: answer it
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is not _STOP:
                _settle(job.future, sandbox_error(self.backend, "sandbox closed"))
