"""The one grammar for task specs, ``KIND[:ARG]``, and the registry of suite kinds.

- ``builtin`` / ``builtin:SEED``: the procedural suite made with library ``mint(SEED)``;
- ``sebench`` / ``sebench:PATH``: the official files (the Hugging Face dataset when no path);
- ``jsonl:PATH``: a file of se-gym task records or official rows; ``selfplay:PATH``: a self-play
  run's buffer (see :mod:`se_gym.tasks.files`);
- ``miniature[:SEED]``: the miniature's questions for the tiny base models (:mod:`se_gym.bases`);
- ``path/file.py:Class`` or ``module:Class``: a :class:`TaskSuite` of your own, not registered (its
  argument after one more colon: ``path/file.py:Class:ARG``).

The argument is the suite's own (a seed, a path); the **split is never part of the spec**: it is
always its own option (``split=``, ``--split``), so ``builtin:3`` means seed 3 wherever it is typed.
The env (``tasks=``), ``se-gym rollout --tasks`` and every other entry point go through
:func:`parse_task_spec` and :func:`load_task_spec`, so the defaults are the same everywhere:
``builtin`` without a seed is ``builtin:<default_seed>`` (0 unless the caller has a seed of its own),
and the library defaults to the one the tasks were made for (``mint(SEED)`` for the built-in suite,
the official names from ``api_doc.jsonl`` beside official files).  A new kind is a
:class:`TaskSuite` subclass plus one ``TASK_SUITES.register`` call (or an entry point in the
``se_gym.task_suites`` group); the grammar in error messages (:func:`task_grammar`) is read from the
registry, each kind saying what its argument is (``argument``).
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

@dataclass(frozen=True, init=False)
class TaskSpec:
    """A parsed ``KIND[:ARG]``: the kind and its argument, as the kind's :meth:`TaskSuite.spec` made it.

    Attributes:
        kind: a TASK_SUITES name (or ``file.py:Class``).
        arg: the kind's argument as the kind defines it (builtin: an int seed; sebench, jsonl: a path;
            None: none given), or whatever a suite of your own parses its text into.
    """

    kind: str
    arg: Any = None

    def __init__(self, kind: str, arg: Any = None, *, seed: int | None = None, path: str | None = None):
        """``seed=`` and ``path=`` are the older spellings of ``arg`` (they win when given).

        Args:
            kind: the kind.
            arg: its argument.
            seed: an int argument.
            path: a path argument.
        """
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "arg", seed if seed is not None else path if path is not None else arg)

    @property
    def seed(self) -> int | None:
        """The argument when it is a seed (an int), else None."""
        return self.arg if isinstance(self.arg, int) and not isinstance(self.arg, bool) else None

    @property
    def path(self) -> str | None:
        """The argument when it is text (a path), else None."""
        return self.arg if isinstance(self.arg, str) else None

    def __str__(self) -> str:
        return self.kind if self.arg is None else f"{self.kind}:{self.arg}"


class TaskSuite(abc.ABC):
    """A kind of task suite: what ``KIND[:ARG]`` names, its default library and how it loads.

    ``references_pass`` declares that every task's ``library_solution`` passes its own tests under
    both judge profiles (:func:`se_gym.testing.check_task_suite` checks it); a suite whose references
    are not its own to vouch for says False, and the checker then only reports how many pass.
    """

    references_pass: bool = True
    # what the argument is, in the grammar (``KIND[:SEED]``), or None: the kind takes none
    argument: str | None = "PATH"
    # False: the argument must be given (``jsonl:PATH``)
    argument_optional: bool = True
    # True: a library and task set minted from a seed (a benchmark mints a fresh one per seed: seeded())
    minted: bool = False
    # True: the official SE-Bench tasks (a benchmark reports them beside the paper's rows)
    official: bool = False

    def spec(self, kind: str, arg: str, default_seed: int) -> TaskSpec:
        """The spec for ``KIND:ARG`` (``arg`` "" when there is none); the default keeps ARG as text.

        Args:
            kind: the kind as typed.
            arg: the text after the colon ("" when none).
            default_seed: the caller's seed, for a kind whose argument defaults to one.
        """
        if not arg and not self.argument_optional:
            raise TaskError(f"'{kind}:{self.argument}' needs its {str(self.argument).lower()}")
        return TaskSpec(kind, arg or None)

    def seeded(self, spec: TaskSpec, seed: int) -> TaskSpec:
        """``spec`` minted from ``seed`` (a ``minted`` kind: a fresh library and task set per seed).

        Args:
            spec: the spec.
            seed: the seed.
        """
        return TaskSpec(spec.kind, seed) if self.minted else spec

    def renderer(self, spec: TaskSpec, library: Any) -> Any:
        """The prompt renderer the tasks of ``spec`` are asked with (``render(task, book) -> (prompt,
        docs)``), or None: the default one (:func:`se_gym.agents.default_renderer`).

        Args:
            spec: the spec.
            library: the library loaded for it.
        """
        return None

    def held_out_split(self, spec: TaskSpec, library: Any, n: int) -> list | None:
        """Questions on ``n`` library functions that no train task uses, for a benchmark's unseen-function
        split; None: the suite has none of its own (the benchmark holds functions out of train instead).

        Args:
            spec: the spec.
            library: the library loaded for it.
            n: how many functions.
        """
        return None

    @abc.abstractmethod
    def default_library(self, spec: TaskSpec) -> str:
        """The library the tasks of ``spec`` were written for, as a library spec string."""

    @abc.abstractmethod
    def load(self, spec: TaskSpec, split: str, library: Any, progress: bool) -> list:
        """The tasks of ``split`` (a list of :class:`~se_gym.tasks.Task`) against ``library``."""


class BuiltinSuite(TaskSuite):
    """``builtin[:SEED]``: the procedural suite of library ``mint(SEED)``."""

    argument = "SEED"
    minted = True

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
    official = True

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
TASK_SUITES.register("miniature", "se_gym.bases:MiniatureSuite")


def task_grammar() -> str:
    """The task-spec grammar, read from the registry: ``'builtin[:SEED]', ..., 'jsonl:PATH' or ...``
    (a kind that does not load is named bare)."""
    forms = []
    for kind in TASK_SUITES.names():
        try:
            cls = TASK_SUITES.load(kind)
        except RegistryError:
            forms.append(f"'{kind}'")
            continue
        arg = cls.argument
        forms.append(f"'{kind}'" if arg is None else f"'{kind}[:{arg}]'" if cls.argument_optional else f"'{kind}:{arg}'")
    forms.append("'path/file.py:Class[:ARG]'")
    return ", ".join(forms[:-1]) + f" or {forms[-1]}"


def _split_plugin(spec: str) -> tuple[str, str]:
    """``(kind, arg)`` of ``KIND[:ARG]``, where KIND may be ``module:Class`` or ``path/file.py:Class``."""
    first, _, rest = spec.partition(":")
    if rest and (first.endswith(".py") or "." in first or "/" in first) and first not in TASK_SUITES:
        cls, _, arg = rest.partition(":")
        return f"{first}:{cls}", arg
    return first, rest


def _suite(kind: str) -> TaskSuite:
    try:
        if ":" in kind:
            return TASK_SUITES.load(kind)()
        return TASK_SUITES.load(TASK_SUITES.check(kind))()
    except RegistryError as exc:
        raise TaskError(f"{exc} (write {task_grammar()})") from None


def suite_of(spec: "str | TaskSpec") -> TaskSuite:
    """The :class:`TaskSuite` of a spec's kind (what it declares: ``minted``, ``official``...).

    Args:
        spec: a parsed spec or its kind.
    """
    return _suite(spec.kind if isinstance(spec, TaskSpec) else spec)


def parse_task_spec(spec: str, default_seed: int = 0) -> TaskSpec:
    """Parse ``KIND[:ARG]``.

    Args:
        spec: ``"builtin[:SEED]"``, ``"sebench[:PATH]"``, another registered kind, or
            ``"path/file.py:Class[:ARG]"`` (a TaskSuite of your own).
        default_seed: the seed of a ``builtin`` without one.

    Returns:
        The :class:`TaskSpec`.

    Raises:
        TaskError: not a spec, an unknown kind (one line listing the kinds) or a bad argument.
    """
    if not isinstance(spec, str):
        raise TaskError(f"a task spec is {task_grammar()}, got {spec!r}")
    kind, arg = _split_plugin(spec)
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
