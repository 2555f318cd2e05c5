"""The Ray sandbox: programs run on a Ray cluster's CPU nodes, behind the :class:`se_gym.sandbox.Sandbox`
contract, so the env, the vector env, rollouts, the servers and the adapters judge on the cluster
unchanged (``sandbox="ray"``).

One actor per node (:class:`NodeSandbox`) holds a local sandbox pool with one worker per CPU of its
node.  The driver keeps every program in one FIFO queue and hands out *chunks*: when an actor has a
free slot (at most ``depth`` chunks each: a bounded queue per actor), it takes the next programs,
as many as the queue's length shared over the free slots, capped at ``max_chunk`` per worker of
the actor.  So a batch is split across actors by load, in order, and a stream of single programs
(``submit``, which the judge uses while it prepares answers) is batched as it backs up.

Verdicts never depend on the node: at start every actor reports what decides a program's outcome
(its se-gym version and sandbox code, the library's content hash and profile, NumPy, Python) and a
node whose report differs from the driver's is refused with a one-line error naming both.

Faults cost time, never answers:

- an actor or node that dies with chunks in flight: those chunks go back to the front of the queue
  and run elsewhere (counted as ``infra_retries``), and the actor is replaced on its node if the
  node is still alive (else its slot is dropped);
- a slow (or silently dead) node: once no work is queued and an actor idles, a chunk in flight
  longer than ``hedge_after`` seconds (default: three times the median chunk time, at least 2 s)
  is sent again to the idle actor; the first answer wins (counted as ``hedged``);
- a program whose chunk was lost ``max_attempts`` times is answered ``SANDBOX_ERROR`` (the
  infrastructure's fault: the judge never scores it).

Back-pressure: at most ``window`` programs wait in the driver's queue (``run``/``submit`` block
while it is full) and at most ``depth`` chunks per actor are in flight, so a ``run`` of 100,000
programs holds a bounded amount of work on the driver and in Ray's object store beyond its
argument and its results.

Ray is imported only inside functions here, so ``import se_gym`` never needs it.
"""
from __future__ import annotations

import hashlib
import logging
import math
import os
import statistics
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from ..errors import SandboxUnavailable
from ..sandbox.base import ExecResult, Limits, Sandbox, check_programs, sandbox_error

log = logging.getLogger("se_gym")

__all__ = ["BatchStats", "NodeSandbox", "NodeRefused", "RaySandbox", "node_identity"]


class NodeRefused(SandboxUnavailable):
    """A node whose verdicts could differ from this driver's (another library, se-gym, NumPy or Python)."""


# -- what decides a program's outcome on a node --------------------------------------------------------
def _tree_hash(folder: Path) -> str:
    """sha256 of every file under ``folder`` (relative path and bytes), caches left out."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _library(library: Any) -> Any:
    """A Library from one, or from its ``to_json()`` (a Library's names are a mappingproxy, which
    does not pickle; the sandbox's copy has no docs, so the names are all a node needs)."""
    from ..library import Library

    if library is None or isinstance(library, Library):
        return library
    d = dict(library)
    return Library(d["package"], d["linalg"], d["array_type"], d["names"], source=d["source"])


def node_identity(library: Any = None, profile: str = "sebench") -> dict[str, str]:
    """What a program's outcome depends on besides the program, as this process sees it: se-gym
    (version, and a hash of the sandbox code that runs programs), the library's materialized
    content and profile, NumPy, and Python (answers' code objects are marshalled).

    Args:
        library: the library (None: none).
        profile: the profile it is materialized for.
    """
    import numpy

    from .._version import __version__

    code = _tree_hash(Path(__file__).resolve().parents[1] / "sandbox")
    ident = {"se-gym": f"{__version__} (sandbox code {code})", "numpy": numpy.__version__,
             "python": "%d.%d" % sys.version_info[:2]}
    lib = _library(library)
    if lib is not None:
        ident["library"] = f"{lib.id} (content {_tree_hash(lib.materialize(profile, docs=False))})"
        ident["profile"] = profile
    return ident


def _refusal(node: str, theirs: dict, ours: dict) -> str | None:
    diff = [f"{k} {theirs.get(k)!s} where this driver has {ours.get(k)!s}" for k in ours if theirs.get(k) != ours.get(k)]
    if not diff:
        return None
    return f"ray sandbox: node {node} refused, its verdicts could differ: " + "; ".join(diff)


class NodeSandbox:
    """The actor on one node: a local sandbox pool with the library materialized on that node.

    Args:
        library: the library as its JSON (None: none).
        profile: the profile it is materialized for.
        pythonpath: more folders programs import from (they must exist on the node).
        preload: modules each worker imports once.
        warmup: code each worker runs once before its first program.
        workers: sandbox workers (None: the node's CPUs).
        options: more :class:`se_gym.sandbox.local.LocalSandbox` options.
    """

    def __init__(self, library: Any, profile: str, pythonpath: Sequence[str], preload: Sequence[str], warmup: Sequence[str],
                 workers: int, options: dict):
        from ..sandbox.local import LocalSandbox

        lib = _library(library)
        self.ident = node_identity(lib, profile)
        path = ([str(lib.materialize(profile, docs=False))] if lib is not None else []) + list(pythonpath)
        self.box = LocalSandbox(pythonpath=path, preload=list(preload), workers=workers, warmup=list(warmup), **options)
        import ray

        ctx = ray.get_runtime_context()
        self.node = ctx.get_node_id()
        self.where = f"{ray.util.get_node_ip_address()}/{self.node[:8]}"

    def identity(self) -> dict:
        """The node's identity (what its programs' outcomes depend on), where it is, its workers and isolation."""
        return {"ident": self.ident, "node": self.node, "where": self.where, "workers": self.box.workers, "pid": os.getpid(),
                "isolation": self.box.isolation()}

    def run(self, programs: list, limits: Limits) -> list[ExecResult]:
        """Run a chunk of programs on this node's pool.

        Args:
            programs: the programs.
            limits: their limits.

        Returns:
            One result per program, marked as the ray backend's and with the node in ``worker``.
        """
        return [replace(r, backend="ray", worker=f"{self.where}/{r.worker}") for r in self.box.run(programs, limits)]

    def close(self) -> None:
        """Stop the node's sandbox workers."""
        self.box.close()


# -- the driver side ----------------------------------------------------------------------------------
@dataclass
class BatchStats:
    """What a batch (``RaySandbox.last_stats``) or the sandbox's whole life (``RaySandbox.stats``) cost.

    Attributes:
        programs: programs answered.
        chunks: chunks sent, hedged copies included.
        infra_retries: programs sent again because their actor or node failed with them in flight.
        hedged: programs sent again because their node was slow (the first answer wins).
        failed: programs answered ``sandbox_error`` after ``max_attempts`` lost chunks.
        replaced: actors replaced after they died.
        per_node: node -> programs it answered.
    """

    programs: int = 0  # answered
    chunks: int = 0  # sent, hedged copies included
    infra_retries: int = 0  # programs sent again because their actor or node failed with them in flight
    hedged: int = 0  # programs sent again because their node was slow (the first answer wins)
    failed: int = 0  # programs answered SANDBOX_ERROR after max_attempts lost chunks
    replaced: int = 0  # actors replaced after they died
    per_node: dict = field(default_factory=dict)  # node -> programs it answered

    def add(self, other: "BatchStats") -> None:
        """Add ``other``'s counts to these.

        Args:
            other: another batch's stats.
        """
        for k in ("programs", "chunks", "infra_retries", "hedged", "failed", "replaced"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        for k, v in other.per_node.items():
            self.per_node[k] = self.per_node.get(k, 0) + v


@dataclass(eq=False)
class _Job:
    program: str
    limits: Limits
    future: Future
    stats: BatchStats | None  # the run() it belongs to
    attempts: int = 0
    started: bool = False


@dataclass(eq=False)
class _Chunk:
    jobs: list
    sent: float
    copies: int = 1
    hedged: bool = False
    done: bool = False


@dataclass(eq=False)
class _Slot:
    node: str
    where: str
    actor: Any
    workers: int = 1
    ready: bool = False
    starting: Any = None  # the identity call of an actor that is starting
    spawns: int = 1
    inflight: dict = field(default_factory=dict)  # ref -> _Chunk
    pid: int | None = None
    isolation: dict = field(default_factory=dict)

    def load(self) -> float:
        return sum(len(c.jobs) for c in self.inflight.values()) / max(1, self.workers)


def _answer(fut: Future, result: ExecResult) -> None:
    """Set a result unless the future is done or cancelled (a caller may cancel at any time)."""
    if not fut.done():
        try:
            fut.set_result(result)
        except InvalidStateError:
            pass


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


class RaySandbox(Sandbox):
    """Programs run on a Ray cluster: one :class:`NodeSandbox` actor per CPU node (see the module doc).

    Args:
        pythonpath: folders programs import from; each must exist on every node.
        preload: modules each worker imports once.
        workers: sandbox workers per actor (default: the node's CPUs).
        library: the library each node materializes and puts on the programs' path (what the judge passes).
        profile: the profile it is materialized for.
        warmup: code each worker runs once before its first program.
        address: the cluster (default: ``RAY_ADDRESS``, else the Ray this process already joined, else
            a local cluster started for this sandbox).
        actors: at most this many nodes (default: every CPU node).
        num_cpus: CPUs each actor reserves from Ray (default: as many as it has workers).
        resources: custom Ray resources an actor needs (only nodes that have them get one).
        depth: chunks in flight per actor.
        max_chunk: the most programs in one chunk.
        window: the most programs waiting on the driver before :meth:`submit` blocks.
        hedge_after: send a slow chunk again elsewhere after this many seconds (None: three times the
            median chunk time, at least 2 s).
        max_attempts: lost chunks before a program is answered ``sandbox_error``.
        start_timeout: seconds to wait for the first node.
        runtime_env: the Ray runtime env when joining a cluster.
        options: more options for each node's :class:`se_gym.sandbox.local.LocalSandbox` (``isolation``,
            ``hash_seed``; ``pin_cpus`` defaults to False: nodes may share a machine).
    """

    name = "ray"
    library_modes = True  # (each node's LocalSandbox; a Program travels with its library_mode)
    # declarations (se_gym.sandbox.base.Sandbox): every node writes the library itself (and must match
    # ours), warm-up code, the result channel, a cluster this process joins at address=
    library_as = "object"
    channel = True
    warmup = True
    cluster = True
    requires = {"ray": "pip install 'se-gym[ray]' (or bash scripts/setup/ray.sh)"}

    def isolation_line(self) -> str:
        """The nodes' isolation, as one line."""
        from ..sandbox.base import network_text

        info = self.isolation()
        return f"sandbox ray: {info.get('reason')}, isolation {info.get('level')} on every node; {network_text(info)}"

    def __init__(self, pythonpath: Sequence[str] = (), preload: Sequence[str] = ("numpy",), workers: int | None = None, *,
                 library: Any = None, profile: str = "sebench", warmup: Sequence[str] = (), address: str | None = None,
                 actors: int | None = None, num_cpus: float | None = None, resources: dict | None = None, depth: int = 2,
                 max_chunk: int = 8, window: int = 4096, hedge_after: float | None = None, max_attempts: int = 3,
                 start_timeout: float = 300.0, runtime_env: dict | None = None, **options: Any):
        from .cluster import connect, ray_module

        ray = ray_module()  # (before the sandbox counts as open: without Ray there is nothing to close)
        super().__init__()
        if depth < 1 or max_chunk < 1 or window < 1 or max_attempts < 1:
            raise ValueError("depth, max_chunk, window and max_attempts must be at least 1")
        lib = _library(library)
        self._lib_json = lib.to_json() if lib is not None else None
        self._args = (self._lib_json, profile, [str(p) for p in pythonpath], list(preload), [str(w) for w in warmup])
        self._workers, self._num_cpus, self._resources = workers, num_cpus, dict(resources or {})
        self._options = {"pin_cpus": False, **options}
        self._max_actors = actors
        self.depth, self.max_chunk, self.window = depth, max_chunk, window
        self.hedge_after, self.max_attempts, self.start_timeout = hedge_after, max_attempts, start_timeout
        self.identity = node_identity(lib, profile)  # what every node must match
        self.stats, self.last_stats = BatchStats(), BatchStats()
        self.peak_queued = self.peak_inflight = 0  # the most programs ever waiting / in flight on the driver's side
        self._cond = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._slots: list[_Slot] = []
        self._refused: set[str] = set()
        self._durations: deque[float] = deque(maxlen=64)
        self._stopping = False
        address = address or os.environ.get("RAY_ADDRESS") or None
        self._owns_ray = False
        if not ray.is_initialized():
            kw = {"runtime_env": runtime_env} if (address and runtime_env is not None) else {}
            self._owns_ray = connect(address, **kw)
        try:
            self._remote = ray.remote(max_restarts=0, max_concurrency=depth + 2)(NodeSandbox)
            self._discover(wait=True)
            if not any(s.ready for s in self._slots):
                need = f" with the resources {self._resources}" if self._resources else ""
                raise RuntimeError(f"ray sandbox: the cluster has no alive node with CPUs{need}")
        except BaseException:
            self.close()
            raise
        self._collector = threading.Thread(target=self._collect, name="se-gym-ray-sandbox", daemon=True)
        self._collector.start()
        log.info("ray sandbox: %s", ", ".join(f"{s.where} ({s.workers} workers)" for s in self._slots))

    # -- actors ---------------------------------------------------------------------------------------
    def _alive_nodes(self) -> dict[str, dict]:
        from .cluster import cluster_nodes

        need = self._resources
        return {n["id"]: n for n in cluster_nodes()
                if n["cpus"] > 0 and all(n["resources"].get(k, 0) >= v for k, v in need.items())}

    def _spawn(self, node: dict) -> _Slot:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        workers = self._workers or max(1, int(node["cpus"]))
        cpus = self._num_cpus if self._num_cpus is not None else min(float(workers), float(node["cpus"]))
        actor = self._remote.options(num_cpus=cpus, resources=self._resources or None,
                                     scheduling_strategy=NodeAffinitySchedulingStrategy(node["id"], soft=False)
                                     ).remote(*self._args, workers, self._options)
        slot = _Slot(node["id"], node["id"][:8], actor, workers)
        slot.starting = actor.identity.remote()
        return slot

    def _discover(self, wait: bool = False) -> None:
        """An actor on every alive CPU node that has none (up to ``actors``); ``wait``: until they
        are up (at start: a refused node is an error then)."""
        ray = __import__("ray")
        held = {s.node for s in self._slots}
        nodes = [n for nid, n in sorted(self._alive_nodes().items()) if nid not in held and nid not in self._refused]
        room = None if self._max_actors is None else max(0, self._max_actors - len(self._slots))
        new = [self._spawn(n) for n in nodes[:room]]
        self._slots += new
        if not wait or not new:
            return
        pending = {s.starting: s for s in new}
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=self.start_timeout)
        late = [pending[r].node[:8] for r in pending if r not in ready]
        if late:
            raise RuntimeError(f"ray sandbox: the actor on node(s) {', '.join(late)} did not start in {self.start_timeout:.0f} s "
                               "(are their CPUs taken? pass num_cpus= or workers=)")
        for ref in ready:
            msg = self._started(pending[ref], ref)
            if msg:
                raise NodeRefused(msg)

    def _started(self, slot: _Slot, ref: Any) -> str | None:
        """An actor's identity is in: keep it if it matches; returns the refusal (or start error)."""
        ray = __import__("ray")
        slot.starting = None
        try:
            info = ray.get(ref)
        except Exception as exc:  # it could not start: its sandbox, its node
            self._drop(slot)
            return f"ray sandbox: the actor on node {slot.where} could not start: {_first_line(exc)}"
        slot.where, slot.pid, slot.isolation = info["where"], info["pid"], info["isolation"]
        msg = _refusal(info["where"], info["ident"], self.identity)
        if msg:
            self._refused.add(slot.node)
            self._drop(slot)
            return msg
        slot.workers, slot.ready = info["workers"], True
        return None

    def _drop(self, slot: _Slot) -> None:
        ray = __import__("ray")
        if slot in self._slots:
            self._slots.remove(slot)
        try:
            ray.kill(slot.actor, no_restart=True)
        except Exception:  # already gone with its node
            pass

    def _lost(self, slot: _Slot, why: str) -> None:
        """The actor of ``slot`` failed: its chunks go back to the queue; a new actor takes its place
        if its node is still alive (a few times at most), else the slot goes."""
        for ref, chunk in list(slot.inflight.items()):
            self._requeue(chunk, why)
        slot.inflight.clear()
        self._drop(slot)
        log.warning("ray sandbox: actor on node %s lost (%s)", slot.where, why)
        if slot.spawns < 2 * self.max_attempts and slot.node in self._alive_nodes():
            fresh = self._spawn({"id": slot.node, "cpus": slot.workers})
            fresh.spawns, fresh.workers = slot.spawns + 1, slot.workers
            self._slots.append(fresh)
            self.stats.replaced += 1

    def _requeue(self, chunk: _Chunk, why: str) -> None:
        chunk.copies -= 1
        if chunk.done or chunk.copies > 0:
            return  # answered, or another copy is still running
        back = []
        for job in chunk.jobs:
            if job.future.done():
                continue
            job.attempts += 1
            if job.attempts >= self.max_attempts:
                self._count(job, "failed")
                _answer(job.future, sandbox_error("ray", f"lost with its node or actor {job.attempts} times; last: {why}"))
            else:
                self._count(job, "infra_retries")
                back.append(job)
        self._queue.extendleft(reversed(back))  # first in line, in their order

    def _count(self, job: _Job, key: str, n: int = 1) -> None:
        setattr(self.stats, key, getattr(self.stats, key) + n)
        if job.stats is not None:
            setattr(job.stats, key, getattr(job.stats, key) + n)

    # -- dispatch -------------------------------------------------------------------------------------
    def _dispatch(self) -> None:
        """Hand queued programs to actors with a free slot, least loaded first (under the lock)."""
        while self._queue:
            free = [s for s in self._slots if s.ready and len(s.inflight) < self.depth]
            if not free:
                return
            slot = min(free, key=lambda s: s.load())
            room = sum(self.depth - len(s.inflight) for s in free)
            n = min(self.max_chunk * slot.workers, max(1, math.ceil(len(self._queue) / room)))
            jobs: list[_Job] = []
            while self._queue and len(jobs) < n:
                job = self._queue[0]
                if jobs and job.limits != jobs[0].limits:
                    break  # one chunk, one set of limits
                self._queue.popleft()
                if not job.started:
                    if not job.future.set_running_or_notify_cancel():
                        continue  # cancelled before it ran
                    job.started = True
                elif job.future.done():
                    continue
                jobs.append(job)
            if jobs:
                self._send(slot, _Chunk(jobs, time.monotonic()))
            self._cond.notify_all()  # room in the queue

    def _send(self, slot: _Slot, chunk: _Chunk) -> None:
        ref = slot.actor.run.remote([j.program for j in chunk.jobs], chunk.jobs[0].limits)
        slot.inflight[ref] = chunk
        self.peak_inflight = max(self.peak_inflight, sum(len(c.jobs) for s in self._slots for c in s.inflight.values()))
        self.stats.chunks += 1
        for s in {id(j.stats): j.stats for j in chunk.jobs if j.stats is not None}.values():
            s.chunks += 1

    def _hedge(self) -> None:
        """Nothing queued and an actor idles: send it a copy of the oldest chunk that has run too long
        elsewhere (once per chunk; the first answer wins)."""
        if self._queue:
            return
        now = time.monotonic()
        bound = self.hedge_after if self.hedge_after is not None else max(2.0, 3 * statistics.median(self._durations) if self._durations else 2.0)
        late = sorted(((c.sent, slot, c) for slot in self._slots for c in slot.inflight.values()
                       if not c.hedged and not c.done and now - c.sent > bound), key=lambda t: t[0])
        for _, owner, chunk in late:
            idle = [s for s in self._slots if s.ready and s is not owner and not s.inflight]
            if not idle:
                return
            chunk.hedged = True
            chunk.copies += 1
            for job in chunk.jobs:
                self._count(job, "hedged")
            self._send(min(idle, key=lambda s: s.load()), chunk)

    def _collect(self) -> None:
        """The one thread that waits on Ray.  It must not die (every caller waits on it): a failure
        of Ray itself (its GCS unreachable for a moment) is logged and the loop goes on, unless Ray
        was shut down under the sandbox, which answers what waits."""
        ray = __import__("ray")
        self._last_scan = time.monotonic()
        while not self._stopping:
            try:
                self._step(ray)
            except Exception as exc:  # noqa: BLE001 - see above
                if not ray.is_initialized():
                    with self._cond:
                        for job in list(self._queue) + [j for s in self._slots for c in s.inflight.values() for j in c.jobs]:
                            _answer(job.future, sandbox_error("ray", "Ray was shut down"))
                        self._queue.clear()
                        self._slots, self._stopping = [], True  # (later calls: "closed")
                        self._cond.notify_all()
                    return
                log.warning("ray sandbox: %s (going on)", _first_line(exc))
                time.sleep(0.5)

    def _step(self, ray: Any) -> None:
        """Wait a moment for answers, deaths and starting actors; then hedge and dispatch."""
        from ray.exceptions import RayActorError, RayTaskError

        with self._cond:
            while not self._stopping and not any(s.inflight or s.starting is not None for s in self._slots) and not self._queue:
                self._cond.wait(1.0)
            if self._stopping:
                return
            owner = {ref: s for s in self._slots for ref in s.inflight}
            starting = {s.starting: s for s in self._slots if s.starting is not None}
            if not owner and not starting and self._queue:
                self._no_actor_left()
                return
        refs = list(owner) + list(starting)
        ready, _ = ray.wait(refs, num_returns=1, timeout=0.05)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        with self._cond:
            if self._stopping:
                return
            for ref in ready:
                if ref in starting:
                    slot = starting[ref]
                    msg = self._started(slot, ref)
                    if msg:  # a refusal is an error; a replacement that could not start (its node died) is not
                        log.log(logging.ERROR if slot.node in self._refused else logging.WARNING, "%s", msg)
                    continue
                slot = owner[ref]
                chunk = slot.inflight.pop(ref, None)
                if chunk is None:
                    continue  # the slot was lost meanwhile: its chunks are back in the queue
                try:
                    results = ray.get(ref)
                except (RayActorError, RayTaskError) as exc:
                    slot.inflight[ref] = chunk  # _lost requeues every chunk the actor held
                    self._lost(slot, _first_line(exc))
                    continue
                except Exception as exc:  # the result itself was lost (its node died after answering)
                    self._requeue(chunk, _first_line(exc))
                    continue
                self._finish(slot, chunk, results)
            if time.monotonic() - self._last_scan > 30 and self._max_actors is None:
                self._last_scan = time.monotonic()
                self._discover()  # nodes that joined (or came back) get an actor
            self._hedge()
            self._dispatch()

    def _finish(self, slot: _Slot, chunk: _Chunk, results: list[ExecResult]) -> None:
        chunk.copies -= 1
        if chunk.done:
            return  # a hedged copy lost the race
        chunk.done = True
        self._durations.append(time.monotonic() - chunk.sent)
        for job, r in zip(chunk.jobs, results):
            if not job.future.done():
                self._count(job, "programs")
                for s in (self.stats, job.stats):
                    if s is not None:
                        s.per_node[slot.where] = s.per_node.get(slot.where, 0) + 1
                _answer(job.future, r)

    def _no_actor_left(self) -> None:
        """Every actor is gone: look for nodes once more; if there are none, answer what waits."""
        self._discover()
        if self._slots:
            return
        while self._queue:
            job = self._queue.popleft()
            if job.started or job.future.set_running_or_notify_cancel():
                self._count(job, "failed")
                _answer(job.future, sandbox_error("ray", "no node of the Ray cluster is left to run programs"))
        self._cond.notify_all()

    # -- the contract -------------------------------------------------------------------------------
    def _enqueue(self, jobs: list[_Job]) -> None:
        """Queue ``jobs``, waiting while the queue is full (back-pressure)."""
        i = 0
        with self._cond:
            while i < len(jobs):
                if self._closed or self._stopping:
                    raise RuntimeError("ray sandbox is closed")
                room = self.window - len(self._queue)
                if room <= 0:
                    self._cond.wait(0.5)
                    continue
                self._queue.extend(jobs[i:i + room])
                i += room
                self.peak_queued = max(self.peak_queued, len(self._queue))
                self._dispatch()
                self._cond.notify_all()

    def submit(self, program: str, limits: Limits | None = None) -> Future:
        """One program, answered through a Future; blocks while the driver's queue is full.

        Args:
            program: the program.
            limits: its limits (None: the defaults).
        """
        if not isinstance(program, str):
            check_programs([program])
        job = _Job(program, limits or Limits(), Future(), None)
        self._enqueue([job])
        return job.future

    def run(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        """Run every program on the cluster, results in input order.

        Args:
            programs: the programs.
            limits: their limits (None: the defaults).
        """
        programs = check_programs(programs)
        if self._closed:
            raise RuntimeError("ray sandbox is closed")
        limits = limits or Limits()
        stats = BatchStats()
        jobs: list[_Job] = []
        try:
            for start in range(0, len(programs), self.window):  # the queue takes a window at a time
                part = [_Job(p, limits, Future(), stats) for p in programs[start:start + self.window]]
                jobs += part
                self._enqueue(part)
            out = [job.future.result() for job in jobs]
        except BaseException:  # interrupted: what has not started never will
            for job in jobs:
                job.future.cancel()
            raise
        self.last_stats = stats
        return out

    def isolation(self) -> dict[str, Any]:
        """The isolation of the ready nodes (their levels, ``mixed`` when they differ) and their network."""
        with self._cond:
            nodes = [{"node": s.where, "workers": s.workers, "level": s.isolation.get("level"), "network": s.isolation.get("network")}
                     for s in self._slots if s.ready]
        levels = sorted({str(n["level"]) for n in nodes})
        nets = {n["network"] for n in nodes}
        return {"backend": "ray", "level": levels[0] if len(levels) == 1 else "mixed: " + ", ".join(levels),
                "reason": f"{len(nodes)} node(s), {sum(n['workers'] for n in nodes)} workers",
                "network": True if True in nets else (False if nets == {False} else None), "nodes": nodes}

    @property
    def workers(self) -> int:
        """Sandbox workers on the ready nodes, together."""
        return sum(s.workers for s in self._slots if s.ready)

    def busy(self) -> list[str]:
        """The nodes (ids) whose actor has programs in flight now."""
        with self._cond:
            return [s.node for s in self._slots if s.inflight]

    def nodes(self) -> list[dict]:
        """The actors in use: ``{"node", "where", "workers", "pid"}`` each."""
        with self._cond:
            return [{"node": s.node, "where": s.where, "workers": s.workers, "pid": s.pid} for s in self._slots if s.ready]

    def _close(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        collector = getattr(self, "_collector", None)
        if collector is not None and collector is not threading.current_thread():
            collector.join(timeout=5)
        with self._cond:
            while self._queue:
                job = self._queue.popleft()
                _answer(job.future, sandbox_error("ray", "sandbox closed"))
            for s in self._slots:
                for chunk in s.inflight.values():
                    for job in chunk.jobs:
                        _answer(job.future, sandbox_error("ray", "sandbox closed"))
            self._cond.notify_all()
        self._teardown()

    def _teardown(self) -> None:
        try:
            ray = __import__("ray")
        except ImportError:
            return
        if ray.is_initialized():
            refs = [s.actor.close.remote() for s in self._slots if s.ready]  # (one still starting may never answer)
            if refs:
                ray.wait(refs, num_returns=len(refs), timeout=10)
            for s in self._slots:
                try:
                    ray.kill(s.actor, no_restart=True)
                except Exception:  # gone with its node
                    pass
        self._slots = []
        if self._owns_ray:
            from .cluster import shutdown

            shutdown()
            self._owns_ray = False
