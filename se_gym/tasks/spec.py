"""The one parser for task specs: ``builtin`` / ``builtin:SEED`` (the procedural suite) and
``sebench`` / ``sebench:PATH`` (official files; the Hugging Face dataset when no path).

The env (``tasks=``), ``se-gym rollout --tasks`` and every other entry point go through
:func:`parse_task_spec` and :func:`load_task_spec`, so the defaults are the same everywhere:
``builtin`` without a seed is ``builtin:<default_seed>`` (0 unless the caller has a seed of its own),
and the library defaults to the one the tasks were made for (``mint(SEED)`` for the built-in suite,
the official names from ``api_doc.jsonl`` beside official files).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..choices import TASK_KINDS, describe
from .record import TaskError


@dataclass(frozen=True)
class TaskSpec:
    kind: str  # "builtin" | "sebench"
    seed: int | None = None  # builtin only
    path: str | None = None  # sebench only (None: the hub dataset)

    def __str__(self) -> str:
        arg = self.seed if self.kind == "builtin" else self.path
        return self.kind if arg is None else f"{self.kind}:{arg}"


def parse_task_spec(spec: str, default_seed: int = 0) -> TaskSpec:
    """``"builtin[:SEED]"`` or ``"sebench[:PATH]"`` -> :class:`TaskSpec` (TaskError on anything else)."""
    if not isinstance(spec, str):
        raise TaskError(f"a task spec is 'builtin[:SEED]' or 'sebench[:PATH]', got {spec!r}")
    kind, _, arg = spec.partition(":")
    if kind not in TASK_KINDS:
        raise TaskError(describe("task spec kind", kind, TASK_KINDS) + " (write 'builtin[:SEED]' or 'sebench[:PATH]')")
    if kind == "builtin":
        if arg and not arg.isdigit():
            raise TaskError(f"'builtin:SEED' needs a non-negative integer seed, got {spec!r}")
        return TaskSpec("builtin", seed=int(arg) if arg else default_seed)
    return TaskSpec("sebench", path=arg or None)


def default_library_spec(spec: TaskSpec) -> str:
    """The library the tasks of ``spec`` were written for, as a library spec string."""
    if spec.kind == "builtin":
        return f"seed:{spec.seed}"
    if spec.path is None:
        raise TaskError("tasks 'sebench' (the hub dataset) needs a library: pass 'official:PATH/api_doc.jsonl'")
    base = Path(spec.path)
    for cand in (base / "api_doc.jsonl", base.parent / "api_doc.jsonl", base / "datasets" / "train" / "api_doc.jsonl",
                 base / "datasets" / "api_doc.jsonl", base / "train" / "api_doc.jsonl"):
        if cand.is_file():
            return f"official:{cand}"
    raise TaskError(f"no api_doc.jsonl beside {spec.path}; pass the library as 'official:PATH/api_doc.jsonl'")


def load_task_spec(spec: str | TaskSpec, split: str, library: Any = None, default_seed: int = 0, progress: bool = True):
    """``(list[Task], Library)`` for ``spec`` and ``split``; ``library`` None: the spec's own library.

    ``progress``: say so (and show progress) when the built-in suite has to be built first."""
    from ..library import from_spec
    from ..library.core import LibraryError

    if not isinstance(spec, TaskSpec):
        spec = parse_task_spec(spec, default_seed)
    try:
        lib = from_spec(library if library is not None else default_library_spec(spec))
    except LibraryError as exc:
        raise TaskError(f"library: {exc}") from None
    if spec.kind == "builtin":
        from .builtin import builtin_tasks

        return list(builtin_tasks(split, seed=spec.seed, library=lib, progress=progress)), lib
    from .sebench import load_sebench

    return list(load_sebench(split, path=spec.path, library=lib)), lib
