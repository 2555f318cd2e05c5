"""``check_task_suite``: does a kind of task suite keep the contract of :mod:`se_gym.tasks.spec`?

- ``spec``: ``spec(kind, arg, seed)`` gives a :class:`~se_gym.tasks.spec.TaskSpec` of that kind, and the
  spec written out (``str(spec)``) reads back as the same spec;
- ``library``: ``default_library(spec)`` is a library spec string that loads;
- ``load``: the split's tasks are a non-empty list of :class:`~se_gym.tasks.Task`, with unique ids, the
  split asked for, a signature and test cases each;
- ``deterministic``: a fresh suite object loads the same tasks again, field for field (the same seed,
  the same tasks: runs, resumes and seeds compare by task);
- ``picklable``: the suite, its spec and its tasks survive ``pickle`` (vector envs' workers, Ray and
  multiprocessing send them; a library travels as its ``to_json()``);
- ``references``: every task's ``library_solution`` passes its own tests under both profiles,
  judged for real; a suite that declares ``references_pass = False`` (SE-Bench's official files)
  is held only to none of them being an infrastructure failure, and the counts are reported.
"""
from __future__ import annotations

import pickle
from collections import Counter
from typing import Any, Sequence

from ..judge.extract import fenced
from .report import CheckFailed, Checks, Report, require


def _resolve(kind_or_spec: Any, arg: str | None) -> tuple[str, type, str]:
    """(kind, suite class, argument) for what the caller gave."""
    from ..tasks.spec import TASK_SUITES, TaskSpec, TaskSuite

    if isinstance(kind_or_spec, TaskSpec):
        text = str(kind_or_spec)
        kind, _, written = text.partition(":")
        return kind, TASK_SUITES.load(TASK_SUITES.check(kind)), written if arg is None else arg
    if isinstance(kind_or_spec, str):
        kind, _, written = kind_or_spec.partition(":")
        return kind, TASK_SUITES.load(TASK_SUITES.check(kind)), written if arg is None else arg
    cls = kind_or_spec if isinstance(kind_or_spec, type) else type(kind_or_spec)
    require(isinstance(cls, type) and issubclass(cls, TaskSuite), f"{cls.__name__} is not a se_gym.tasks.spec.TaskSuite")
    return getattr(cls, "kind", cls.__name__.lower()), cls, arg or ""


def check_task_suite(kind_or_spec: Any, *, split: str = "single_test", arg: str | None = None, default_seed: int = 0,
                     profiles: Sequence[str] = ("sebench", "strict"), limit: int | None = None, raises: bool = True) -> Report:
    """Check a kind of task suite against the contract (see the module docstring for each check).

    Args:
        kind_or_spec: a spec as users type it (``"builtin"``, ``"builtin:3"``, ``"sebench:PATH"``), a
            :class:`~se_gym.tasks.spec.TaskSpec`, or a :class:`~se_gym.tasks.spec.TaskSuite` subclass (or
            object) not registered yet; fresh objects of its class are built with no arguments.
        split: the split whose tasks are loaded.
        arg: the kind's argument (the part after ``KIND:``) for a suite class; overrides the spec's.
        default_seed: the seed a kind without an argument takes (as the env's ``seed=``).
        profiles: the judge profiles the references must pass under.
        limit: judge only the first ``limit`` references (None: all).
        raises: raise :class:`~se_gym.testing.ConformanceError` on the first failed check (after
            running them all); False returns the report.

    Returns:
        The :class:`~se_gym.testing.Report`.

    Raises:
        ConformanceError: a check failed (with ``raises``).
    """
    from ..library import from_spec
    from ..tasks.record import Task
    from ..tasks.spec import TaskSpec

    subject = repr(kind_or_spec) if isinstance(kind_or_spec, str) else str(kind_or_spec) if isinstance(kind_or_spec, TaskSpec) \
        else getattr(kind_or_spec if isinstance(kind_or_spec, type) else type(kind_or_spec), "__qualname__", "suite")
    checks = Checks("task suite", subject)
    got: dict[str, Any] = {}

    def spec() -> str:
        kind, cls, written = _resolve(kind_or_spec, arg)
        suite = kind_or_spec if not isinstance(kind_or_spec, (str, type, TaskSpec)) else cls()
        made = suite.spec(kind, written, default_seed)
        require(isinstance(made, TaskSpec), f"spec() returned {type(made).__name__}, not a TaskSpec")
        require(made.kind == kind, f"spec() of kind {kind!r} returned a spec of kind {made.kind!r}")
        again = cls().spec(kind, str(made).partition(":")[2], default_seed)
        require(again == made, f"the spec written out, {str(made)!r}, reads back as {again!r}, not {made!r}")
        got.update(kind=kind, cls=cls, suite=suite, spec=made)
        return str(made)

    def library() -> str:
        text = got["suite"].default_library(got["spec"])
        require(isinstance(text, str), f"default_library() returned {type(text).__name__}, not a library spec string")
        got["library_spec"], got["library"] = text, from_spec(text)
        return text

    def load() -> str:
        tasks = got["suite"].load(got["spec"], split, got["library"], False)
        require(isinstance(tasks, list) and tasks, f"load() of split {split!r} returned {type(tasks).__name__} "
                f"{'(empty)' if not tasks else ''}, not a non-empty list of tasks")
        twice = sorted(i for i, n in Counter(getattr(t, "id", None) for t in tasks).items() if n > 1)
        require(not twice, f"task ids repeat: {twice[:3]}")
        for t in tasks:
            require(isinstance(t, Task), f"load() returned {type(t).__name__} objects, not se_gym.tasks.Task")
            require(t.split == split, f"task {t.id} of split {split!r} says split {t.split!r}")
            require(t.test_cases and t.function_name, f"task {t.id} has no test cases or no function_name")
        got["tasks"] = tasks
        return f"{len(tasks)} tasks"

    def deterministic() -> None:
        cls, first = got["cls"], got["tasks"]
        spec_again = cls().spec(got["kind"], str(got["spec"]).partition(":")[2], default_seed)
        second = cls().load(spec_again, split, from_spec(cls().default_library(spec_again)), False)
        require([t.id for t in second] == [t.id for t in first], "a fresh suite loaded other tasks for the same spec "
                f"(first ids {[t.id for t in first][:3]} then {[t.id for t in second][:3]})")
        for a, b in zip(first, second):
            require(a.to_json() == b.to_json(), f"a fresh suite loaded task {a.id} with other content "
                    f"({', '.join(k for k in a.to_json() if a.to_json()[k] != b.to_json()[k])} differ)")

    def picklable() -> None:
        for what, obj in (("the suite", got["suite"]), ("its spec", got["spec"]), ("its tasks", got["tasks"])):
            try:
                back = pickle.loads(pickle.dumps(obj))
            except Exception as exc:
                raise CheckFailed(f"{what} cannot be pickled: {type(exc).__name__}: {exc}") from None
            if what == "its tasks":
                require([t.to_json() for t in back] == [t.to_json() for t in obj], "the tasks change through pickle")
            elif what == "its spec":
                require(back == obj, f"the spec changes through pickle: {back!r}")

    def references() -> str:
        from ..judge.core import Judge

        tasks = got["tasks"][:limit]
        declared = getattr(got["cls"], "references_pass", True)
        if declared:
            for t in tasks:
                require(t.library_solution.strip(), f"task {t.id} has no library_solution (references_pass is True)")
        counts = []
        for profile in profiles:
            with Judge(got["library"], profile=profile) as judge:
                verdicts = judge.judge_many([t.judge_item(fenced(t.library_solution)) for t in tasks])
            for t, v in zip(tasks, verdicts):
                require(not v.infrastructure, f"under {profile}, the reference of {t.id} was an infrastructure failure: {v.detail}")
            failed = [(t, v) for t, v in zip(tasks, verdicts) if v.reward != 1.0]
            if declared and failed:
                t, v = failed[0]
                raise CheckFailed(f"under {profile}, {len(failed)} of {len(tasks)} references fail their own tests; "
                                  f"first {t.id}: {v.status.value} ({v.detail})")
            counts.append(f"{len(tasks) - len(failed)}/{len(tasks)} pass under {profile}")
        return ", ".join(counts) + ("" if declared else " (references_pass is False: not required)")

    checks.run("spec", spec)
    checks.run("library", library, needs=("spec",))
    checks.run("load", load, needs=("library",))
    checks.run("deterministic", deterministic, needs=("load",))
    checks.run("picklable", picklable, needs=("load",))
    checks.run("references", references, needs=("load",))
    return checks.finish(raises)


__all__ = ["check_task_suite"]
