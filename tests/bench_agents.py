"""Agents written outside the package, loaded by `se-gym bench --agent tests/bench_agents.py:NAME`."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from bench_my_agent import CallMemoryAgent  # noqa: E402

from se_gym.agents import Trajectory  # noqa: E402


class NotAnAgent:
    pass


class CheatingAgent(CallMemoryAgent):
    """Tries to learn from each test question (with a made-up accepted answer) before answering it."""

    def act(self, observations):
        if observations[0].split != "train":
            self.learn([Trajectory(observations[0], "```python\npass\n```", 1.0, "passed")])
        return super().act(observations)


class ScribblingAgent(CallMemoryAgent):
    """Writes into its memory while answering test questions (an online agent)."""

    def act(self, observations):
        if observations[0].split != "train":
            self.notes.append([["seen"], observations[0].task.id])
        return super().act(observations)


class FlakyAgent(CallMemoryAgent):
    """Raises at test time on a batch holding a first question about a function (task id ending in -0)."""

    def act(self, observations):
        if any(o.task.id.endswith("-0") and o.split != "train" for o in observations):
            raise RuntimeError("flaky agent failed")
        return super().act(observations)


class SlowAgent(CallMemoryAgent):
    """Sleeps per batch (BENCH_SLOW_S seconds) so a test can kill it mid-run; counts its answers in a file."""

    def act(self, observations):
        time.sleep(float(os.environ.get("BENCH_SLOW_S", "0.3")))
        with open(os.environ["BENCH_COUNT_FILE"], "a") as fh:
            fh.write("".join(f"{o.split} {o.task.id}\n" for o in observations))
        return super().act(observations)


class HoardingAgent(CallMemoryAgent):
    """Keeps a count of the test batches it answered in an attribute outside ``memory_state()`` and
    writes it under each answer: an agent loaded fresh for every batch always writes 0."""

    def __init__(self, min_overlap: int = 2):
        super().__init__(min_overlap)
        self.test_batches_seen = 0

    def act(self, observations):
        answers = super().act(observations)
        if observations[0].split != "train":
            answers = [f"{a}\n# test batches before this one: {self.test_batches_seen}" for a in answers]
            self.test_batches_seen += 1
        return answers


class ForgetfulAgent(CallMemoryAgent):
    """Built to forget: each learn() replaces the memory with what that call brought."""

    def _learn(self, trajectories):
        self.notes = []
        return super()._learn(trajectories)


class SpyAgent(CallMemoryAgent):
    """Writes everything it is given (its options, every observation, the process's arguments and
    environment) to the file named by BENCH_SPY_FILE: a season's secret must appear nowhere in it."""

    def __init__(self, min_overlap: int = 2):
        super().__init__(min_overlap)
        self._spy(repr({"options": {"min_overlap": min_overlap}, "argv": sys.argv, "env": dict(os.environ)}))

    def _spy(self, text):
        with open(os.environ["BENCH_SPY_FILE"], "a") as fh:
            fh.write(text + "\n")

    def act(self, observations):
        for o in observations:
            self._spy(repr(o))
        return super().act(observations)

    def _learn(self, trajectories):
        for t in trajectories:
            self._spy(repr(t))
        return super()._learn(trajectories)
