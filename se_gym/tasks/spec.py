"""The one grammar for task specs, ``KIND[:ARG]``, and the registry of suite kinds.

- ``builtin`` / ``builtin:SEED``: the procedural suite made with library ``mint(SEED)``;
- ``sebench`` / ``sebench:PATH``: the official files (the Hugging Face dataset when no path);
- ``jsonl:PATH``: a file of se-gym task records or official rows; ``selfplay:PATH``: a self-play
  run's buffer (see :mod:`se_gym.tasks.files`).

The argument is the suite's own (a seed, a path); the **split is never part of the spec**: it is
always its own option (``split=``, ``--split``), so ``builtin:3`` means seed 3 wherever it is typed.
The env (``tasks=``), ``se-gym rollout --tasks`` and every other entry point go through
:func:`parse_task_spec` and :func:`load_task_spec`, so the defaults are the same everywhere:
``builtin`` without a seed is ``builtin:<default_seed>`` (0 unless the caller has a seed of its own),
and the library defaults to the one the tasks were made for (``mint(SEED)`` for the built-in suite,
the official names from ``api_doc.jsonl`` beside official files).  A new kind is a
:class:`TaskSuite` subclass plus one ``TASK_SUITES.register`` call (or an entry point in the
``se_gym.task_suites`` group).
"""
from __future__ import annotations

import abc
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..registry import Registry, RegistryError
from .record import TaskError

log = logging.getLogger(__name__)

GRAMMAR = "'builtin[:SEED]', 'sebench[:PATH]', 'jsonl:PATH' or 'selfplay:PATH'"


@dataclass(frozen=True)
class TaskSpec:
    """A parsed ``KIND[:ARG]``."""

    kind: str  # a TASK_SUITES name
    seed: int | None = None  # builtin's argument
    path: str | None = None  # the argument of the other kinds (sebench: a folder or file; None: the hub dataset)

    def __str__(self) -> str:
        arg = self.seed if self.kind == "builtin" else self.path
        return self.kind if arg is None else f"{self.kind}:{arg}"


class TaskSuite(abc.ABC):
    """A kind of task suite: what ``KIND[:ARG]`` names, its default library and how it loads.

    ``references_pass`` declares that every task's ``library_solution`` passes its own tests under
    both judge profiles (:func:`se_gym.testing.check_task_suite` checks it); a suite whose references
    are not its own to vouch for says False, and the checker then only reports how many pass.
    """

    references_pass: bool = True

    def spec(self, kind: str, arg: str, default_seed: int) -> TaskSpec:
        """The spec for ``KIND:ARG`` (``arg`` "" when there is none); the default keeps ARG as ``path``."""
        return TaskSpec(kind, path=arg or None)

    @abc.abstractmethod
    def default_library(self, spec: TaskSpec) -> str:
        """The library the tasks of ``spec`` were written for, as a library spec string."""

    @abc.abstractmethod
    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        """The tasks of ``split`` (a list of :class:`~se_gym.tasks.Task`) against ``library``."""


class BuiltinSuite(TaskSuite):
    """``builtin[:SEED]``: the procedural suite of library ``mint(SEED)``."""

    def spec(self, kind: str, arg: str, default_seed: int) -> TaskSpec:
        if arg and not arg.isdigit():
            raise TaskError(f"'builtin:SEED' needs a non-negative integer seed, got {kind}:{arg!r} "
                            "(the split is its own option, not part of the spec)")
        return TaskSpec(kind, seed=int(arg) if arg else default_seed)

    def default_library(self, spec: TaskSpec) -> str:
        return f"seed:{spec.seed}"

    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        from .builtin import builtin_tasks

        return list(builtin_tasks(split, seed=spec.seed, library=library, progress=progress))


def api_doc_candidates(path: Path) -> list[Path]:
    """Where the ``api_doc.jsonl`` of official files at ``path`` may be, the most specific place first:
    inside a folder (its ``datasets/train/``, ``train/``, ``datasets/``, itself), then beside it; for
    one JSONL file, its own folder, the ``train/`` beside that folder (``test/x.jsonl``), then outward.
    A stray ``api_doc.jsonl`` in a parent folder never wins over the suite's own."""
    name = "api_doc.jsonl"
    if path.is_dir():
        return [path / "datasets" / "train" / name, path / "train" / name, path / "datasets" / name, path / name,
                path.parent / name]
    folder = path.parent
    return [folder / name, folder.parent / "train" / name, folder.parent / name]


class SEBenchSuite(TaskSuite):
    """``sebench[:PATH]``: SE-Bench's official files (the Hugging Face dataset when no path)."""

    # the official references are NumPy code translated name for name: most call methods the official
    # library's arrays lack (.tolist()), and on 28 of 259 tasks the NumPy code does not reproduce the
    # official outputs (a known quirk of the official data); 8 of the 130 dev tasks pass under sebench
    references_pass = False

    def default_library(self, spec: TaskSpec) -> str:
        if spec.path is None:
            raise TaskError("tasks 'sebench' (the hub dataset) needs a library: pass 'official:PATH/api_doc.jsonl'")
        for cand in api_doc_candidates(Path(spec.path)):
            if cand.is_file():
                log.info("tasks %s: library from %s", spec.path, cand)
                return f"official:{cand}"
        raise TaskError(f"no api_doc.jsonl beside {spec.path}; pass the library as 'official:PATH/api_doc.jsonl'")

    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        from .sebench import load_sebench

        return list(load_sebench(split, path=spec.path, library=library))


TASK_SUITES = Registry("task spec kind", group="se_gym.task_suites", base=TaskSuite)
TASK_SUITES.register("builtin", BuiltinSuite)
TASK_SUITES.register("sebench", SEBenchSuite)
TASK_SUITES.register("jsonl", "se_gym.tasks.files:JsonlSuite")
TASK_SUITES.register("selfplay", "se_gym.tasks.files:SelfPlaySuite")


def _suite(kind: str) -> TaskSuite:
    try:
        return TASK_SUITES.load(TASK_SUITES.check(kind))()
    except RegistryError as exc:
        raise TaskError(f"{exc} (write {GRAMMAR})") from None


def parse_task_spec(spec: str, default_seed: int = 0) -> TaskSpec:
    """Parse ``KIND[:ARG]``.

    Args:
        spec: ``"builtin[:SEED]"``, ``"sebench[:PATH]"`` or another registered kind.
        default_seed: the seed of a ``builtin`` without one.

    Returns:
        The :class:`TaskSpec`.

    Raises:
        TaskError: not a spec, an unknown kind (one line listing the kinds) or a bad argument.
    """
    if not isinstance(spec, str):
        raise TaskError(f"a task spec is {GRAMMAR}, got {spec!r}")
    kind, _, arg = spec.partition(":")
    return _suite(kind).spec(kind, arg, default_seed)


def default_library_spec(spec: TaskSpec) -> str:
    """The library the tasks of ``spec`` were written for, as a library spec string."""
    return _suite(spec.kind).default_library(spec)


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
    return _suite(spec.kind).load(spec, split, lib, progress), lib
