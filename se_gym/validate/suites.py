"""Which suites a ``se-gym validate`` run checks, and their tasks, the same way in both processes."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..choices import SPLITS
from .config import ValidateConfig, ValidateError


@dataclass(frozen=True)
class SuiteRef:
    """One suite: a task spec (a ``builtin`` one names its seed) and the library option."""

    spec: str
    library: str | None = None

    @property
    def name(self) -> str:
        return self.spec if self.library is None else f"{self.spec} (library {self.library})"


def expand(config: ValidateConfig) -> list[SuiteRef]:
    """The suites of ``config``: each spec, a minted kind's (``builtin[:SEED]``) as ``--libraries`` seeds."""
    from ..tasks import TaskError
    from ..tasks.spec import default_library_spec, parse_task_spec, suite_of

    out: list[SuiteRef] = []
    for text in config.specs:
        try:
            spec = parse_task_spec(text)
        except TaskError as exc:
            raise ValidateError(f"task spec {text!r}: {exc}") from None
        # what makes a spec fail to load, said now: before a cluster starts or a progress bar is drawn
        if spec.kind in ("sebench", "jsonl", "selfplay") and isinstance(spec.arg, str) and not Path(spec.arg).exists():
            raise ValidateError(f"{text}: no task file {spec.arg} (no such file or directory)")
        if config.library is None:
            try:
                default_library_spec(spec)
            except TaskError as exc:
                raise ValidateError(f"{text}: no tasks ({exc})") from None
        if suite_of(spec).minted:
            out += [SuiteRef(f"{spec.kind}:{spec.arg + k}", config.library) for k in range(config.libraries)]
        else:
            out.append(SuiteRef(str(spec), config.library))
    seen: set[SuiteRef] = set()
    return [s for s in out if not (s in seen or seen.add(s))]  # type: ignore[func-returns-value]


def content_key(task: Any) -> str:
    """What makes two tasks the same question (a file read under two split names is one suite)."""
    from .checks import text_digest

    return text_digest(task.query, task.function_name, *(t for c in task.test_cases for t in (c.input, c.output)), task.reference_solution,
                       task.library_solution)


def load(ref: SuiteRef, splits: Sequence[str] = (), limit: int | None = None, progress: bool = False) -> tuple[list[Any], Any, list[str]]:
    """``(tasks, library, splits read)``: every split of ``ref`` (or ``splits``), at most ``limit``
    tasks of each, the same task read under two splits kept once, in a fixed order."""
    from ..tasks import TaskError
    from ..tasks.spec import load_task_spec

    wanted = list(splits) or list(SPLITS)
    bad = [s for s in wanted if s not in SPLITS]
    if bad:
        raise ValidateError(f"unknown split {bad[0]!r} (choose from {', '.join(SPLITS)})")
    path = Path(ref.spec.partition(":")[2])
    if ref.spec.partition(":")[2] and path.is_file():  # one file is one split: the one its name says
        wanted = [s for s in wanted if s in path.name][:1] or wanted[:1]
    tasks: list[Any] = []
    read: list[str] = []
    seen: set[str] = set()
    library = None
    errors = []
    for split in wanted:
        try:
            got, library = load_task_spec(ref.spec, split, ref.library, progress=progress)
        except TaskError as exc:
            errors.append(str(exc))
            continue
        read.append(split)
        for t in got[:limit] if limit else got:
            key = content_key(t)
            if key not in seen:
                seen.add(key)
                tasks.append(t)
    if not tasks:
        raise ValidateError(f"{ref.spec}: no tasks ({errors[0] if errors else 'every split is empty'})")
    return tasks, library, read


def regenerate(ref: SuiteRef, task: Any, library: Any) -> Any:
    """The task made again from scratch: a ``builtin`` suite's task is drawn again from its seed (the
    cache is not read); any other suite's is what loading it again gave (the caller's copy)."""
    if ref.spec.partition(":")[0] == "builtin" and "attempt" in task.metadata:
        from ..tasks.builtin import redraw

        return redraw(task, library)
    return task
