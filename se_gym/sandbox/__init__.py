"""Sandboxed execution of programs: one contract (:mod:`.base`), three backends.

- ``local`` (default): pre-forked workers on this machine, inside bubblewrap when it works.
- ``docker``: the same workers in long-lived containers (extra ``docker``).
- ``http``: SE-Bench's sandbox protocol (``POST /run``), or a ``se-gym sandbox serve`` server.
"""
from .base import ExecResult, ExecStatus, Limits, Sandbox, make_sandbox

__all__ = ["ExecResult", "ExecStatus", "Limits", "Sandbox", "make_sandbox"]
