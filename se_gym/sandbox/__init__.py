"""Sandboxed execution of programs: one contract (:mod:`.base`), four backends named in :mod:`.registry`,
and the spec (:mod:`.spec`) that carries a backend with its options.

- ``local`` (default): pre-forked workers on this machine, inside bubblewrap when it works.
- ``docker``: the same workers in long-lived containers (extra ``docker``).
- ``http``: SE-Bench's sandbox protocol (``POST /run``), or a ``se-gym sandbox serve`` server.
- ``ray``: the local workers on every CPU node of a Ray cluster (extra ``ray``; the code lives in
  :mod:`se_gym.distributed.sandbox`, imported only when asked for).
"""
from .base import ExecResult, ExecStatus, Limits, Program, Sandbox
from .registry import SANDBOXES, register_sandbox
from .spec import SandboxSpec, check_sandbox, make_sandbox


def isolation_report(isolation: str = "auto") -> dict:
    """What isolation holds for the local backend here, measured (see local.isolation_report).

    Args:
        isolation: the level asked for (``auto``, ``bwrap``, ``rlimits``...).
    """
    from .local import isolation_report as _report

    return _report(isolation)


__all__ = ["ExecResult", "ExecStatus", "Limits", "Program", "SANDBOXES", "Sandbox", "SandboxSpec", "check_sandbox", "isolation_report",
           "make_sandbox", "register_sandbox"]
