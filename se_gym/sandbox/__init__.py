"""Sandboxed execution of programs: one contract (:mod:`.base`), three backends.

- ``local`` (default): pre-forked workers on this machine, inside bubblewrap when it works.
- ``docker``: the same workers in long-lived containers (extra ``docker``).
- ``http``: SE-Bench's sandbox protocol (``POST /run``), or a ``se-gym sandbox serve`` server.
"""
from .base import ExecResult, ExecStatus, Limits, Program, Sandbox, make_sandbox


def isolation_report(isolation: str = "auto") -> dict:
    """What isolation holds for the local backend here, measured (see local.isolation_report)."""
    from .local import isolation_report as _report

    return _report(isolation)


__all__ = ["ExecResult", "ExecStatus", "Limits", "Program", "Sandbox", "isolation_report", "make_sandbox"]
