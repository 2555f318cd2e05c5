"""An ordered pool of Ray actors that survives actor deaths.

Each actor is one instance of a worker class with a ``run(item)`` method (for rollouts,
:class:`se_gym.llm.rollout.RolloutWorker`, which owns a generator and a judge).  The driver hands
items out, at most ``in_flight`` per actor, and yields the results in item order, so the caller
can stream them to a file exactly as a single process would.  When an actor dies (killed, out of
memory, its node lost) its unfinished items go back into the queue and a fresh actor takes its
place.
"""
from __future__ import annotations

import heapq
from typing import Any, Iterator, Sequence

from .cluster import ActorPoolError, connect, hosted, ray_module, shutdown

__all__ = ["ActorPoolError", "OrderedActorPool", "run_ordered"]


class OrderedActorPool:
    """``num_actors`` Ray actors of ``worker_cls(*args)``; :meth:`map_ordered` runs items on them.

    Starts a local Ray cluster (``num_cpus`` = what the actors need, no dashboard) unless Ray is
    already initialised or ``address`` names a cluster to join; :meth:`shutdown` stops what the
    pool started.

    Args:
        worker_cls: the actors' class (with a ``run(item)`` method).
        args: its constructor's arguments.
        num_actors: how many actors.
        address: the cluster to join (None: the one this process joined, or a local one).
        num_cpus: CPUs per actor.
        num_gpus: GPUs per actor (each actor its own GPU on GPU machines).
        in_flight: items in flight per actor.
        max_replacements: dead actors replaced before giving up (None: twice the actors, plus two).
        spread: prefer placing the actors on different nodes (soft: a lost node's actors may come back on the ones left).
        runtime_env: the Ray runtime env when joining a cluster.
    """

    def __init__(
        self,
        worker_cls: type,
        args: Sequence[Any] = (),
        *,
        num_actors: int = 2,
        address: str | None = None,
        num_cpus: float = 1.0,
        num_gpus: float = 0.0,
        in_flight: int = 2,
        max_replacements: int | None = None,
        spread: bool = False,
        runtime_env: dict | None = None,
    ):
        if num_actors < 1:
            raise ValueError(f"an actor pool needs at least one actor, got {num_actors}")
        ray = ray_module()
        self._owns_cluster = False
        if not ray.is_initialized():
            # a local cluster sized to the actors (GPUs left to Ray's detection: num_gpus then
            # places one actor per device); joining a cluster ships this se_gym to its workers
            self._owns_cluster = connect(address) if address else connect(num_cpus=max(1, int(round(num_actors * num_cpus))))
        self._args = tuple(args)
        self._worker_cls = worker_cls
        self._sticky: list[tuple[str, tuple]] = []  # broadcast calls a replacement actor must replay
        options: dict[str, Any] = {"num_cpus": num_cpus, "num_gpus": num_gpus, "max_restarts": 0}
        if spread:  # soft: prefer other nodes, but a lost node's actors may come back on the ones left
            options["scheduling_strategy"] = "SPREAD"
        if runtime_env:
            options["runtime_env"] = runtime_env
        # max_restarts=0: the driver, not Ray, replaces dead actors, so it knows which items to redo
        self._remote = ray.remote(**options)(hosted(worker_cls))
        self.actors: list[Any] = [self._spawn() for _ in range(num_actors)]
        self.in_flight = max(1, in_flight)
        self.replacements = 0
        self.max_replacements = 2 * num_actors + 2 if max_replacements is None else max_replacements

    def _spawn(self) -> Any:
        actor = self._remote.remote(*self._args)
        for method, args in self._sticky:  # actor calls run in submission order: before any item
            getattr(actor, method).remote(*args)
        return actor

    def broadcast(self, method: str, *args: Any, sticky: bool = True, timeout: float | None = None) -> list[Any]:
        """Call ``method(*args)`` on every actor and wait for them (e.g. new weights for every
        generator).  Large arguments are put in the object store once.

        Args:
            method: the actors' method.
            args: its arguments.
            sticky: actors that replace dead ones later get the same call before any work (the latest
                call of a method replaces earlier ones), so a replacement never works with stale state.
            timeout: seconds to wait (None: no limit).

        Returns:
            One result per actor.
        """
        ray = ray_module()
        from ray.exceptions import RayActorError

        refs = tuple(a if isinstance(a, ray.ObjectRef) else ray.put(a) for a in args)
        if sticky:
            self._sticky = [(m, a) for m, a in self._sticky if m != method] + [(method, refs)]
        out: list[Any] = []
        for slot, actor in enumerate(list(self.actors)):
            try:
                out.append(ray.get(getattr(actor, method).remote(*refs), timeout=timeout))
            except RayActorError as exc:  # died meanwhile: its replacement replays the sticky call
                self._replace(slot, exc)
                out.append(None)
        return out

    def nodes(self) -> list[str]:
        """The Ray node id of every current actor (to check how they are spread)."""
        ray = ray_module()
        return ray.get([a._se_gym_node.remote() for a in self.actors])

    def map_ordered(self, items: Sequence[Any]) -> Iterator[Any]:
        """``actor.run(item)`` for every item, yielded in item order (items redone after deaths).

        Args:
            items: the items.
        """
        ray = ray_module()
        from ray.exceptions import RayActorError

        queue = list(range(len(items)))  # a heap: redone items go before later ones
        heapq.heapify(queue)
        pending: dict[Any, tuple[int, Any, int]] = {}  # ref -> (slot, actor, position)
        self._pending = pending
        load = [0] * len(self.actors)
        done: dict[int, Any] = {}
        next_pos = 0
        window = 4 * len(self.actors) * self.in_flight  # bounds results held back for ordering
        while next_pos < len(items):
            for slot in range(len(self.actors)):
                while load[slot] < self.in_flight and queue and queue[0] < next_pos + window:
                    pos = heapq.heappop(queue)
                    actor = self.actors[slot]
                    pending[actor.run.remote(items[pos])] = (slot, actor, pos)
                    load[slot] += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            slot, actor, pos = pending.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except RayActorError as exc:
                heapq.heappush(queue, pos)
                if self.actors[slot] is actor:  # first news of this death: replace the actor once
                    self._replace(slot, exc)
                    load[slot] = 0
                continue
            if self.actors[slot] is actor:
                load[slot] -= 1
            done[pos] = result
            while next_pos in done:
                yield done.pop(next_pos)
                next_pos += 1

    def busy(self) -> list[int]:
        """Slots (indexes into :attr:`actors`) whose current actor has work in flight."""
        pending = dict(getattr(self, "_pending", {}))  # a copy: the driver loop may change it
        return sorted({slot for slot, actor, _ in pending.values() if self.actors and self.actors[slot] is actor})

    def _replace(self, slot: int, cause: BaseException) -> None:
        self.replacements += 1
        if self.replacements > self.max_replacements:
            first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
            raise ActorPoolError(f"Ray actors died {self.replacements} times; last: {first}")
        ray_module().kill(self.actors[slot], no_restart=True)  # may be alive but unreachable: make sure
        self.actors[slot] = self._spawn()

    def shutdown(self, close_timeout: float = 30.0) -> None:
        """Let workers with a ``close()`` free what they own (sandboxes, engines), kill the actors,
        and stop the Ray cluster if this pool started it.

        Args:
            close_timeout: seconds the workers' ``close()`` get.
        """
        ray = ray_module()
        if not ray.is_initialized():
            return
        if hasattr(self._worker_cls, "close") and self.actors:
            refs = [actor.close.remote() for actor in self.actors]
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=close_timeout)
            for ref in ready:
                try:
                    ray.get(ref)
                except Exception:  # a dead actor has nothing left to close
                    pass
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already dead: nothing to stop
                pass
        self.actors = []
        if self._owns_cluster:
            shutdown()

    def __enter__(self) -> "OrderedActorPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()


def run_ordered(
    worker_cls: type,
    args: Sequence[Any],
    items: Sequence[Any],
    *,
    num_actors: int = 2,
    address: str | None = None,
    num_cpus: float = 1.0,
    num_gpus: float = 0.0,
) -> Iterator[Any]:
    """Results of ``worker_cls(*args).run(item)`` in item order, from a pool made for this call.

    The pool (and the cluster, when it started one) is shut down when the iterator is exhausted,
    closed, or abandoned through an exception.

    Args:
        worker_cls: the actors' class.
        args: its constructor's arguments.
        items: the items.
        num_actors: how many actors.
        address: the cluster to join (None: a local one).
        num_cpus: CPUs per actor.
        num_gpus: GPUs per actor.
    """
    pool = OrderedActorPool(worker_cls, args, num_actors=num_actors, address=address, num_cpus=num_cpus, num_gpus=num_gpus)
    try:
        yield from pool.map_ordered(items)
    finally:
        pool.shutdown()
