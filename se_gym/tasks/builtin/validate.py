"""Check built-in tasks: in-process against the written library, and through the judge.

In process: the library solution runs under each profile of the task's library and must
print exactly the expected outputs.  Through the judge (when ``se_gym.judge`` is present):
the library solution must get reward 1 under each profile, the NumPy reference must be
rejected, and the right code checked against shifted expectations (an answer that returns
the neighbouring case's result) must fail.
"""
from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

from ...choices import PROFILES  # one place for the profile names
from ...judge.extract import fenced
from ..record import Task, TestCase
from .common import compile_solution, run_case


@contextlib.contextmanager
def library_modules(path: Path, package: str) -> Iterator[Any]:
    """Import ``package`` from ``path`` for a while, restoring whatever was there before."""
    mine = lambda name: name == package or name.startswith(package + ".")  # noqa: E731
    saved = {k: v for k, v in sys.modules.items() if mine(k)}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(path))
    importlib.invalidate_caches()
    channel = None
    try:
        module = importlib.import_module(package)
        client = sys.modules.get(f"{package}._client")
        channel = getattr(client, "_CHANNEL", None)
        if channel is not None and channel.fd < 0:
            # a server of its own, now: left to find one, the client would take any socket on the
            # sandbox's fd for its server (another library's, made earlier in this process)
            channel.spawn()
        yield module
    finally:
        if channel is not None:
            channel.close()
        for k in [k for k in sys.modules if mine(k)]:
            del sys.modules[k]
        sys.modules.update(saved)
        with contextlib.suppress(ValueError):
            sys.path.remove(str(path))


def check_in_process(tasks: Sequence[Task], library: Any, profiles: Sequence[str] = PROFILES) -> dict[str, str]:
    """task id -> why it failed (absent when it passed every profile)."""
    failures: dict[str, str] = {}
    for profile in profiles:
        with library_modules(library.materialize(profile), library.package):
            for task in tasks:
                if task.id in failures:
                    continue
                why = _run_task(task)
                if why:
                    failures[task.id] = f"{profile}: {why}"
    return failures


def _run_task(task: Task) -> str | None:
    try:
        fn = compile_solution(task.library_solution, task.entry_point)
    except Exception as exc:  # noqa: BLE001 - any failure disqualifies the task
        return f"library solution does not compile: {exc}"
    for i, case in enumerate(task.test_cases):
        try:
            got = run_case(fn, case.input, warn=True)
        except Exception as exc:  # noqa: BLE001
            return f"case {i}: {type(exc).__name__}: {exc}"
        if got != case.output:
            return f"case {i}: printed {got[:60]!r}, expected {case.output[:60]!r}"
    return None


def _shifted(cases: Sequence[TestCase]) -> list[TestCase]:
    outs = [c.output for c in cases]
    outs = outs[1:] + outs[:1]
    return [TestCase(c.input, o) for c, o in zip(cases, outs)]


def check_with_judge(tasks: Sequence[Task], library: Any, profiles: Sequence[str] = PROFILES) -> dict[str, str]:
    """task id -> why the judge disagrees with it; one ``judge_many`` call per profile."""
    from ...judge import Judge

    failures: dict[str, str] = {}
    for profile in profiles:
        items: list[tuple[str, list[TestCase]]] = []
        owners: list[tuple[str, str]] = []
        for t in tasks:
            cases = list(t.test_cases)
            items.append((fenced(t.library_solution), cases))
            owners.append((t.id, "library solution"))
            if profile == profiles[0]:  # these two verdicts do not depend on the profile
                items.append((fenced(t.reference_solution), cases))
                owners.append((t.id, "numpy reference"))
                if len({c.output for c in cases}) > 1:
                    items.append((fenced(t.library_solution), _shifted(cases)))
                    owners.append((t.id, "wrong answer"))
        # (whether the reference passes its own tests: strict's library dependence check, which
        # compares answers with the reference, has nothing to say about the reference itself)
        with Judge(library, profile, dependence=False) as judge:
            verdicts = judge.judge_many(items)
        broken = [v for v in verdicts if v.infrastructure]
        if broken:  # the sandbox failed, not the tasks: regenerating would not help
            raise RuntimeError(f"judge sandbox failed on {len(broken)} item(s): {broken[0].detail}")
        for (tid, what), verdict in zip(owners, verdicts):
            ok = verdict.reward == 1 if what == "library solution" else verdict.reward < 1
            if not ok and tid not in failures:
                failures[tid] = f"{profile}: {what} got reward {verdict.reward} ({verdict.status})"
    return failures
