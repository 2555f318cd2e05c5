"""A task-suite kind written outside se-gym, for tests/test_task_kinds.py: the first N tasks of the
built-in suite of seed 0 (``path/first_tasks_suite.py:FirstTasks:N``)."""
from __future__ import annotations

from typing import Any

from se_gym.tasks.spec import TaskSpec, TaskSuite


class FirstTasks(TaskSuite):
    argument = "N"

    def spec(self, kind: str, arg: str, default_seed: int) -> TaskSpec:
        return TaskSpec(kind, int(arg or 1))  # its argument as this kind defines it: an int

    def default_library(self, spec: TaskSpec) -> str:
        return "seed:0"

    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        from se_gym.tasks import builtin_tasks

        return list(builtin_tasks(split, seed=0, library=library, progress=progress))[: spec.arg]
