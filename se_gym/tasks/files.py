"""Task specs for task files that are not a suite folder: ``jsonl:PATH`` and ``selfplay:PATH``.

- ``jsonl:PATH``: one task a line, either se-gym's own record (:meth:`Task.to_json`, what a self-play
  buffer holds) or an official SE-Bench row.  The file is one suite: every split option gives all of
  its tasks.  Its library: the records' own when they say it (``source`` ``builtin:seed=N`` on every
  record), else ``api_doc.jsonl`` beside the file; otherwise pass one (``library=``, ``--library``).
- ``selfplay:PATH``: a self-play run folder (its newest ``round_*/buffer.jsonl``; the library is the
  run's, from ``run.json``) or a buffer file itself.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .record import Task, TaskError
from .spec import TaskSpec, TaskSuite


def read_task_lines(path: Path, library: Any = None) -> list[Task]:
    """The tasks of a JSONL file of se-gym records or official rows (TaskError naming file:line)."""
    from .record import parse_row

    if not path.is_file():
        raise TaskError(f"no task file {path}")
    tasks = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise TaskError(f"{where}: not JSON ({exc})") from None
            if isinstance(row, dict) and {"id", "split", "source", "test_cases"} <= set(row):
                try:
                    tasks.append(Task.from_json(row))
                except (TypeError, ValueError) as exc:
                    raise TaskError(f"{where}: not a se-gym task record ({exc})") from None
            else:
                tasks.append(parse_row(row, split="file", index=n - 1, source=f"jsonl:{path.name}", library=library, where=where))
    if not tasks:
        raise TaskError(f"{path} holds no tasks")
    return tasks


def _own_library(path: Path) -> str | None:
    """The library every se-gym record of the file was made for (``builtin:seed=N``), if one."""
    seeds = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                return None
            if row is None:
                continue
            source = str(row.get("source", "")) if isinstance(row, dict) else ""
            if not source.startswith("builtin:seed="):
                return None
            seeds.add(source.split("=", 1)[1])
    return f"seed:{seeds.pop()}" if len(seeds) == 1 else None


class JsonlSuite(TaskSuite):
    """``jsonl:PATH``: a file of se-gym task records or official rows (every split: the whole file)."""

    argument_optional = False  # ('jsonl:PATH': the path of a JSONL file)

    def spec(self, kind: str, arg: str, default_seed: int) -> TaskSpec:
        if not arg:
            raise TaskError(f"'{kind}:PATH' needs the path of a JSONL file")
        return TaskSpec(kind, path=arg)

    def default_library(self, spec: TaskSpec) -> str:
        path = Path(str(spec.path))
        if not path.is_file():
            raise TaskError(f"no task file {path}")
        own = _own_library(path)
        if own:
            return own
        doc = path.parent / "api_doc.jsonl"
        if doc.is_file():
            return f"official:{doc}"
        raise TaskError(f"{path}: its tasks do not say their library; pass one ('seed:N' or 'official:PATH/api_doc.jsonl')")

    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        return read_task_lines(Path(str(spec.path)), library)


class SelfPlaySuite(JsonlSuite):
    """``selfplay:PATH``: a self-play run folder (its newest buffer) or a buffer file."""

    @staticmethod
    def buffer(spec: TaskSpec) -> Path:
        path = Path(str(spec.path))
        if path.is_file():
            return path
        rounds = sorted(path.glob("round_*/buffer.jsonl"))
        if not rounds:
            raise TaskError(f"{path} is neither a buffer file nor a self-play run folder with a round_*/buffer.jsonl")
        return rounds[-1]

    def default_library(self, spec: TaskSpec) -> str:
        buf = self.buffer(spec)
        for run in (buf.parent.parent / "run.json", buf.parent / "run.json"):
            if run.is_file():
                try:
                    lib = json.loads(run.read_text(encoding="utf-8"))["config"]["library"]
                except (ValueError, KeyError, TypeError):
                    continue
                if isinstance(lib, str):
                    return lib
        raise TaskError(f"{buf}: no self-play run.json names its library; pass one ('seed:N' or 'official:PATH')")

    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        return read_task_lines(self.buffer(spec), library)
