"""One stateful object held by a Ray actor on the driver's node (a task buffer, a counter, ...).

:class:`RemoteObject` wraps any plain class: ``RemoteObject(TaskBuffer, tasks).call("add", more)``
runs ``add`` inside the actor and returns its result.  The actor is pinned (hard affinity) to the
node of the process that made it, so losing another node never loses its state, and files it
writes land on the driver's disk.
"""
from __future__ import annotations

import logging
from typing import Any

from .pool import _hosted, _ray


def connect(address: str | None = None, **kwargs: Any) -> bool:
    """Join the Ray cluster at ``address`` (``"auto"``, ``HOST:PORT``) or start a local one;
    returns whether this call initialised Ray (then the caller should ``ray.shutdown()`` it)."""
    ray = _ray()
    if ray.is_initialized():
        return False
    common = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    common.update(kwargs)
    if address:
        ray.init(address=address, **common)
    else:
        ray.init(**common)
    return True


def shutdown() -> None:
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


def cluster_nodes() -> list[dict]:
    """Alive nodes: ``{"id", "cpus", "resources"}`` each."""
    ray = _ray()
    return [{"id": n["NodeID"], "cpus": n["Resources"].get("CPU", 0), "resources": dict(n["Resources"])} for n in ray.nodes() if n.get("Alive")]


class RemoteObject:
    """``cls(*args)`` living in a Ray actor on this process's node; :meth:`call` is synchronous."""

    def __init__(self, cls: type, *args: Any, num_cpus: float = 0.0):
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        remote = ray.remote(num_cpus=num_cpus, max_restarts=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))(_hosted(cls))
        self.handle = remote.remote(*args)
        self.node = here

    def call(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        ray = _ray()
        return ray.get(getattr(self.handle, method).remote(*args), timeout=timeout)

    def where(self) -> str:
        return self.call("_se_gym_node")

    def close(self) -> None:
        ray = _ray()
        try:
            ray.kill(self.handle, no_restart=True)
        except Exception:  # already gone with its cluster
            pass
