"""Sandbox backends by name, and the factory that builds one.

The contract (:mod:`.base`) knows no backend; this module names them, as ``"module:Class"``
strings imported on first use, so ``local`` costs nothing until asked for and ``ray`` can live in
:mod:`se_gym.distributed` (the one place that knows Ray) without this layer importing it.  A new
backend is one module with a :class:`~se_gym.sandbox.base.Sandbox` subclass plus one
:func:`register_sandbox` call (or an entry point in the ``se_gym.sandboxes`` group of an installed
package); the Judge, ``gym.make("SEBench-v0", sandbox=...)`` and the CLIs all read this registry.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..registry import Registry, RegistryError
from .base import Sandbox

SANDBOXES = Registry("sandbox", group="se_gym.sandboxes", base=Sandbox)
SANDBOXES.register("local", "se_gym.sandbox.local:LocalSandbox")
SANDBOXES.register("docker", "se_gym.sandbox.docker:DockerSandbox")
SANDBOXES.register("http", "se_gym.sandbox.http:HttpSandbox")
SANDBOXES.register("ray", "se_gym.distributed.sandbox:RaySandbox")


def register_sandbox(name: str, target: Any, *, replace: bool = False) -> None:
    """Make ``make_sandbox(name, ...)`` (and every ``sandbox=`` option) build ``target``.

    Args:
        name: the backend's name, as users type it.
        target: a Sandbox subclass, ``"module:Class"`` or ``"path/file.py:Class"``; its constructor
            takes ``pythonpath=``, ``preload=``, ``workers=`` and options of its own.
        replace: allow re-registering a taken name.
    """
    SANDBOXES.register(name, target, replace=replace)


def check_sandbox(spec: str) -> str:
    """``spec`` if it names a backend (registered, an entry point, or a ``module:Class`` that loads).

    Args:
        spec: the backend as typed.

    Raises:
        RegistryError: one line listing the registered names.
    """
    if ":" in spec and spec not in SANDBOXES:
        SANDBOXES.load(spec)  # raises if it does not import or is not a Sandbox
        return spec
    return SANDBOXES.check(spec)


def make_sandbox(
    backend: str = "local",
    *,
    pythonpath: Sequence[str] = (),
    preload: Sequence[str] = ("numpy",),
    workers: int | None = None,
    **options: Any,
) -> Sandbox:
    """Build a sandbox.

    Args:
        backend: a registered name (``local``: forked workers, bwrap when it works; ``docker``: the
            same workers in containers; ``http``: SE-Bench's sandbox protocol, pass ``url=``;
            ``ray``: the local workers on every CPU node of a Ray cluster, pass ``address=``), an
            entry point of ``se_gym.sandboxes``, or ``module:Class`` / ``file.py:Class``.
        pythonpath: folders programs can import from.
        preload: modules each worker imports once.
        workers: worker processes (None: the backend's default).
        options: the backend's own options.

    Returns:
        The sandbox (close it, or use it as a context manager).
    """
    if not isinstance(backend, str):
        raise RegistryError(f"sandbox must be a backend name, got {type(backend).__name__}")
    cls = SANDBOXES.load(backend)
    if cls.remote:  # a client of a server: the programs' path and preloads are the server's
        return cls(workers=workers, **options)
    return cls(pythonpath=[str(p) for p in pythonpath], preload=list(preload), workers=workers, **options)


__all__ = ["SANDBOXES", "check_sandbox", "make_sandbox", "register_sandbox"]
