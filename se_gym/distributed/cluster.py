"""Joining and leaving a Ray cluster, shared by the actor pool, the one-object actors and the Ray
sandbox: Ray imported on demand, actor classes that tell their node, ``connect``/``shutdown``
(which also undo the environment variables ``ray.init`` leaves behind) and the alive nodes.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..errors import SandboxUnavailable


class ActorPoolError(SandboxUnavailable):
    """The pool could not finish: actors kept dying (the message holds the last cause)."""


def ray_module() -> Any:
    """The ``ray`` module, imported here on first use (one line naming the extra when it is missing)."""
    try:
        import ray
    except ImportError:
        raise ActorPoolError("Ray is not installed: pip install 'se-gym[ray]' (or bash scripts/setup/ray.sh)") from None
    return ray


def hosted(worker_cls: type) -> type:
    """``worker_cls`` plus a method telling which Ray node the actor runs on."""

    class Hosted(worker_cls):  # type: ignore[misc, valid-type]
        def _se_gym_node(self) -> str:
            return ray_module().get_runtime_context().get_node_id()

    Hosted.__name__ = Hosted.__qualname__ = worker_cls.__name__
    Hosted.__module__ = worker_cls.__module__
    return Hosted


def package_runtime_env() -> dict:
    """A Ray ``runtime_env`` that ships this se_gym to every worker of a cluster the driver joins.

    Nodes started by ``ray start`` run their workers with that command's interpreter, which may hold
    another se_gym (an older editable install, a path that does not exist on that machine) or none:
    actors then die on import.  Ray uploads the package once (content-hashed) and puts it first on
    the workers' path, so they run exactly the driver's code; their interpreter still supplies the
    dependencies (torch, transformers)."""
    return {"py_modules": [str(Path(__file__).resolve().parents[1])], "excludes": ["__pycache__", "*.pyc"]}


def connect(address: str | None = None, **kwargs: Any) -> bool:
    """Join the Ray cluster at ``address`` (``"auto"``, ``HOST:PORT``) or start a local one.

    Joining a cluster ships this se_gym to its workers (:func:`package_runtime_env`).

    Args:
        address: the cluster (None: start a local one).
        kwargs: more ``ray.init`` options.

    Returns:
        Whether this call initialised Ray (then the caller should ``ray.shutdown()`` it).
    """
    ray = ray_module()
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
    ray = ray_module()
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
    ray = ray_module()
    return [{"id": n["NodeID"], "cpus": n["Resources"].get("CPU", 0), "resources": dict(n["Resources"])} for n in ray.nodes() if n.get("Alive")]
