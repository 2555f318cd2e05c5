"""Conformance checkers for plug-ins, in the spirit of Gymnasium's ``check_env``.

- :func:`check_sandbox`: a sandbox backend keeps the contract of :mod:`se_gym.sandbox.base`;
- :func:`check_task_suite`: a task-suite kind is seeded, picklable, and its references pass;
- :func:`check_agent`: an agent keeps the protocol ``se-gym bench`` runs it under.

Each runs every check, then raises one :class:`ConformanceError` naming the first that failed (or,
with ``raises=False``, returns the :class:`Report`).  docs/extending.md shows them on a plug-in.
The names load on first use: ``import se_gym.testing`` costs nothing until a checker runs.
"""
from __future__ import annotations

from typing import Any

_NAMES = {
    "ConformanceError": ".report", "Report": ".report",
    "check_sandbox": ".sandbox",
    "check_task_suite": ".suites",
    "check_agent": ".agents", "StandInModel": ".agents",
}
__all__ = ["ConformanceError", "Report", "StandInModel", "check_agent", "check_sandbox", "check_task_suite"]


def __getattr__(name: str) -> Any:  # PEP 562: the checkers' imports wait until one is used
    if name in _NAMES:
        from importlib import import_module

        value = globals()[name] = getattr(import_module(_NAMES[name], __name__), name)
        return value
    raise AttributeError(f"module 'se_gym.testing' has no attribute {name!r}")
