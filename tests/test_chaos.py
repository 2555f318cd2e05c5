"""Judging from several threads at once (issue 33)."""
from __future__ import annotations

import ast
import sys
import threading
import time

import pytest

from conftest import legit_skip

from se_gym.judge import Judge
from se_gym.tasks import build_suite

SMALL = {"train": 0, "single_test": 8, "multiple_test": 0}


@pytest.fixture(scope="module")
def tasks():
    return list(build_suite(0, sizes=SMALL, progress=False, validate="inprocess").splits["single_test"])


def answer(code: str) -> str:
    return f"```python\n{code}\n```"


def right(task, slow: bool = False, tag: str = "") -> str:
    # slow: still running when cancels land (some 0.1 s of work at import, before the tests run)
    return answer(f"# {tag}\n" + ("_spin = sum(range(4_000_000))\n" if slow else "") + task.library_solution)


def wrong(task, tag: str = "") -> str:
    return answer(f"# {tag}\n{task.function_name}\n    return 'not it'\n")


def _run_all(threads: list[threading.Thread]) -> None:
    """Start them and wait for them; a bound, not a speed: a caller whose program was never
    answered (a dead serving thread) would wait for ever."""
    for t in threads:
        t.start()
    deadline = time.monotonic() + 180
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not [t.name for t in threads if t.is_alive()], "callers still waiting for verdicts"


def test_judges_on_several_threads_parse_in_turn_where_cpython_needs_it(tasks, monkeypatch):
    """CPython < 3.11.8 (and 3.12 < 3.12.2) can fail one of two parses running at once (see
    se_gym.judge.parsing).  There the judge's parses take turns: with a parse made slow enough
    for another thread to start one, none ever overlaps."""
    from se_gym.judge import parsing

    if not parsing.TAKE_TURNS:
        legit_skip(f"Python {sys.version.split()[0]} builds syntax trees safely from several threads")
    real, inside, overlaps = ast.parse, [0], []

    def slow_parse(*args, **kwargs):
        inside[0] += 1
        overlaps.append(inside[0] > 1)
        time.sleep(0.002)  # (lets another thread run, as a collection in the middle of a parse can)
        try:
            return real(*args, **kwargs)
        finally:
            inside[0] -= 1

    with Judge("seed:0", workers=1) as judge:
        judge.sandbox  # started before the parses are watched
        monkeypatch.setattr(ast, "parse", slow_parse)
        items = [(right(t), t.test_cases, t.function_name) for t in tasks] + [(wrong(t), t.test_cases, t.function_name) for t in tasks]
        results: list = []
        threads = [threading.Thread(target=lambda: results.append([v.reward for v in judge.judge_many(items)]), daemon=True)
                   for _ in range(3)]
        _run_all(threads)
    assert results == [[1.0] * len(tasks) + [0.0] * len(tasks)] * 3
    assert len(overlaps) > 3 * len(items) and not any(overlaps)
