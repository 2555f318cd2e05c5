"""Suites with planted defects for tests/test_validate.py.

``noisy:PATH`` is a task suite kind whose generator is not deterministic (each process draws
another hidden input): importing this module registers it, which the second process of
``se-gym validate`` does too (it imports the module a suite kind was registered from)."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from se_gym.tasks.files import JsonlSuite, read_task_lines
from se_gym.tasks.spec import TASK_SUITES


class NoisySuite(JsonlSuite):
    """The tasks of a JSONL file, each question told with a number drawn from the OS's randomness."""

    def load(self, spec, split: str, library: Any, progress: bool) -> list:
        return [replace(t, query=f"{t.query}\n(Batch {int.from_bytes(os.urandom(4), 'big')}.)")
                for t in read_task_lines(Path(str(spec.path)), library)]


TASK_SUITES.register("noisy", NoisySuite, replace=True)
