"""Sandbox backends by name, and the factory that builds one.

The contract (:mod:`.base`) knows no backend; this module names them, as ``"module:Class"``
strings imported on first use, so ``local`` costs nothing until asked for and ``ray`` can live in
:mod:`se_gym.distributed` (the one place that knows Ray) without this layer importing it.  A new
backend is one module with a :class:`~se_gym.sandbox.base.Sandbox` subclass plus one
:func:`register_sandbox` call (or an entry point in the ``se_gym.sandboxes`` group of an installed
package); the Judge, ``gym.make("SEBench-v0", sandbox=...)`` and the CLIs all read this registry,
through a :class:`~se_gym.sandbox.spec.SandboxSpec` (which also holds ``make_sandbox`` and ``check_sandbox``).
"""
from __future__ import annotations

from typing import Any

from ..registry import Registry
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


__all__ = ["SANDBOXES", "register_sandbox"]
