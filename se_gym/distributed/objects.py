"""One stateful object held by a Ray actor on the driver's node (a task buffer, a counter, ...).

:class:`RemoteObject` wraps any plain class: ``RemoteObject(TaskBuffer, tasks).call("add", more)``
runs ``add`` inside the actor and returns its result.  The actor is pinned (hard affinity) to the
node of the process that made it, so losing another node never loses its state, and files it
writes land on the driver's disk.
"""
from __future__ import annotations

from typing import Any

from .cluster import hosted, ray_module


class RemoteObject:
    """``cls(*args)`` living in a Ray actor on this process's node; :meth:`call` is synchronous.

    Args:
        cls: the class.
        args: its constructor's arguments.
        num_cpus: CPUs the actor reserves.
    """

    def __init__(self, cls: type, *args: Any, num_cpus: float = 0.0):
        ray = ray_module()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        remote = ray.remote(num_cpus=num_cpus, max_restarts=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))(hosted(cls))
        self.handle = remote.remote(*args)
        self.node = here

    def call(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        """``method(*args)`` on the object, waited for.

        Args:
            method: the method's name.
            args: its arguments.
            timeout: seconds to wait (None: no limit).
        """
        ray = ray_module()
        return ray.get(getattr(self.handle, method).remote(*args), timeout=timeout)

    def where(self) -> str:
        """The node the actor lives on."""
        return self.call("_se_gym_node")

    def close(self) -> None:
        """Kill the actor (nothing to do if it went with its cluster)."""
        ray = ray_module()
        try:
            ray.kill(self.handle, no_restart=True)
        except Exception:  # already gone with its cluster
            pass
