"""A sandbox backend written outside se-gym, for the registry test (tests/test_registries.py): each
program runs in a fresh ``python`` process.  No isolation and no result channel (the judge then
uses its print-based harness, as against the official server); not for untrusted code."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any, Sequence

from se_gym.sandbox import ExecResult, ExecStatus, Limits, Sandbox

STARTED: list[str] = []  # names of the sandboxes built, so a test can see this backend was used


class SubprocessSandbox(Sandbox):
    name = "subproc"

    def __init__(self, pythonpath: Sequence[str] = (), preload: Sequence[str] = (), workers: int | None = None, **options: Any):
        super().__init__()
        self.pythonpath = [str(p) for p in pythonpath]
        STARTED.append(self.name)

    @property
    def has_channel(self) -> bool:
        return False

    def isolation(self) -> dict[str, Any]:
        return {"backend": self.name, "level": "none", "network": True}

    def run(self, programs: Sequence[str], limits: Limits | None = None) -> list[ExecResult]:
        limits = limits or Limits()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(self.pythonpath))
        results = []
        for program in programs:
            start = time.monotonic()
            try:  # a fresh interpreter imports NumPy each time: two seconds of room beyond the program's own limit
                done = subprocess.run([sys.executable, "-c", str(program)], stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, env=env, timeout=limits.wall_s + 2)
            except subprocess.TimeoutExpired:
                results.append(ExecResult(ExecStatus.TIMEOUT, None, None, "", "", None, time.monotonic() - start, None, False,
                                          self.name, None, "wall"))
                continue
            status = ExecStatus.OK if done.returncode == 0 else ExecStatus.ERROR
            results.append(ExecResult(status, done.returncode, None, done.stdout, done.stderr, None, time.monotonic() - start,
                                      None, False, self.name, None))
        return results
