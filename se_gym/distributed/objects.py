"""One stateful object held by a Ray actor on the driver's node (a task buffer, a counter, ...).

:class:`RemoteObject` wraps any plain class: ``RemoteObject(TaskBuffer, tasks).call("add", more)``
runs ``add`` inside the actor and returns its result.  The actor is pinned (hard affinity) to the
node of the process that made it, so losing another node never loses its state, and files it
writes land on the driver's disk.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from .pool import _hosted, _ray


def package_runtime_env() -> dict:
    """A Ray ``runtime_env`` that ships this se_gym to every worker of a cluster the driver joins.

    Nodes started by ``ray start`` run their workers with that command's interpreter, which may hold
    another se_gym (an older editable install, a path that does not exist on that machine) or none:
    actors then die on import.  Ray uploads the package once (content-hashed) and puts it first on
    the workers' path, so they run exactly the driver's code; their interpreter still supplies the
    dependencies (torch, transformers)."""
    import se_gym

    return {"py_modules": [str(Path(se_gym.__file__).resolve().parent)], "excludes": ["__pycache__", "*.pyc"]}


def connect(address: str | None = None, **kwargs: Any) -> bool:
    """Join the Ray cluster at ``address`` (``"auto"``, ``HOST:PORT``) or start a local one;
    returns whether this call initialised Ray (then the caller should ``ray.shutdown()`` it).
    Joining a cluster ships this se_gym to its workers (:func:`package_runtime_env`)."""
    ray = _ray()
    if ray.is_initialized():
        return False
    common = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    common.update(kwargs)
    before = dict(os.environ)
    if address:
        if "runtime_env" not in common:
            common["runtime_env"] = package_runtime_env()
        ray.init(address=address, **common)
    else:  # a local cluster: its workers use this interpreter, which already imports this se_gym
        ray.init(**common)
    _RAY_SET_ENV.update({k: before.get(k) for k in set(os.environ) | set(before) if os.environ.get(k) != before.get(k)})
    return True


# ray.init() sets variables in this process's environment (RAY_AUTH_MODE=token for a local
# cluster, PYTHONBREAKPOINT, ...) and leaves them after ray.shutdown(): every later child process
# inherits them, and a later driver with RAY_AUTH_MODE=token has its actors cancelled by a cluster
# started without tokens.  shutdown() puts back what those variables were (None: unset).
_RAY_SET_ENV: dict[str, str | None] = {}


def shutdown() -> None:
    """Disconnect from Ray (stopping the local cluster this process started) and undo the
    environment variables Ray set when :func:`connect` initialised it."""
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()
    for key, value in _RAY_SET_ENV.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    _RAY_SET_ENV.clear()


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
