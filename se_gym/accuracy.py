"""One accuracy summary for every report: ``se-gym eval``, ``se-gym judge``, the Runner and the demo.

A sample whose judging failed for infrastructure reasons (the sandbox died or was unreachable: the
verdict says ``infrastructure``) says nothing about the answer, so it is never scored: it is left out
of accuracy, mean reward and pass@k, and counted on its own so that every report can say how many.

* :class:`Tally` adds samples one by one (a reward, or an infrastructure failure) and gives accuracy
  (share of judged samples with reward 1), mean reward and unbiased pass@k per task.
* :func:`spread` summarises one number over seeds (mean, sample sd, the values); :func:`seed_table`
  a demo's methods and metrics that way.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .errors import SEGymError

__all__ = ["InfrastructureError", "Tally", "is_infrastructure", "pass_at_k", "spread"]

SOLVED = 1.0 - 1e-9  # a reward at least this is a right answer


class InfrastructureError(SEGymError, RuntimeError):
    """Every sample of a measurement failed in the infrastructure: there is no accuracy to report."""


def is_infrastructure(verdict: Any) -> bool:
    """Whether a verdict (``Verdict``, a verdict dict or a rollout row) records an infrastructure failure.

    Args:
        verdict: the verdict, or a mapping with an ``infrastructure`` key.
    """
    if isinstance(verdict, Mapping):
        return bool(verdict.get("infrastructure"))
    return bool(getattr(verdict, "infrastructure", False))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al., 2021): chance that k of n samples, c of them right, hold one right.

    Computed as ``1 - C(n-c, k) / C(n, k)`` through a product, which stays exact for large n.

    Args:
        n: samples drawn.
        c: the right ones among them.
        k: samples picked.

    Raises:
        ValueError: ``c`` outside 0..n or ``k`` outside 1..n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n, got n={n}, c={c}")
    if k < 1 or k > n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


@dataclass
class Tally:
    """Samples of one measurement.  ``add(None)`` (or ``infrastructure=True``) records a sample the
    infrastructure failed on: counted in ``samples`` and ``infrastructure``, scored nowhere.

    Attributes:
        samples: every sample added, judged or not.
        infrastructure: the samples the infrastructure failed on.
        reward_sum: the sum of the judged samples' rewards.
        solved: the judged samples with a right answer (reward 1).
        per_task: task -> [judged samples, right ones] (for pass@k).
    """

    samples: int = 0
    infrastructure: int = 0
    reward_sum: float = 0.0
    solved: int = 0
    # task -> [judged samples, solved samples]
    per_task: dict[Any, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def add(self, reward: float | None, *, infrastructure: bool = False, task: Any = None) -> "Tally":
        """Add one sample.

        Args:
            reward: its reward; None for an infrastructure failure.
            infrastructure: the infrastructure failed on it (its reward is ignored).
            task: the task it answers (any hashable key), for pass@k.

        Returns:
            The tally itself (so calls chain).
        """
        self.samples += 1
        if infrastructure or reward is None:
            self.infrastructure += 1
            return self
        reward = float(reward)
        self.reward_sum += reward
        self.solved += reward >= SOLVED
        counts = self.per_task[task]
        counts[0] += 1
        counts[1] += reward >= SOLVED
        return self

    @classmethod
    def of(cls, rewards: Iterable[float | None], tasks: Iterable[Any] | None = None) -> "Tally":
        """A tally of ``rewards`` (``None``: an infrastructure failure), each of the task at the same place.

        Args:
            rewards: one reward (or None) per sample.
            tasks: the task of each sample, in the same order (None: no per-task counts).

        Returns:
            The :class:`Tally`.
        """
        tally = cls()
        rewards = list(rewards)
        for reward, task in zip(rewards, tasks if tasks is not None else [None] * len(rewards)):
            tally.add(reward, task=task)
        return tally

    @property
    def judged(self) -> int:
        """The samples judged (all but the infrastructure failures)."""
        return self.samples - self.infrastructure

    @property
    def accuracy(self) -> float | None:
        """Share of judged samples answered right (None when nothing was judged)."""
        return self.solved / self.judged if self.judged else None

    @property
    def mean_reward(self) -> float | None:
        """The mean reward of the judged samples (None when none was judged)."""
        return self.reward_sum / self.judged if self.judged else None

    @property
    def tasks(self) -> int:
        """How many distinct tasks the samples came from."""
        return len(self.per_task)

    def pass_at(self, k: int) -> float | None:
        """Mean pass@k over tasks with at least k judged samples (None when no task has k).

        Args:
            k: the number of samples drawn.
        """
        values = [pass_at_k(n, c, k) for n, c in self.per_task.values() if n >= k]
        return sum(values) / len(values) if values else None

    def max_samples_per_task(self) -> int:
        """The most judged samples any one task has (1 when none has a task)."""
        return max((n for n, _ in self.per_task.values()), default=1)

    def require_accuracy(self, what: str = "the measurement") -> float:
        """The accuracy, or :class:`InfrastructureError` when every sample failed in the infrastructure.

        Args:
            what: the measurement's name, for the error message.
        """
        if self.samples and not self.judged:
            raise InfrastructureError(f"{what}: the sandbox failed on all {self.samples} samples; no accuracy to report")
        return self.accuracy if self.accuracy is not None else 0.0

    def to_dict(self) -> dict[str, Any]:
        """``samples``, ``judged``, ``infrastructure``, ``accuracy`` and ``mean_reward`` as a dict."""
        return {
            "samples": self.samples,
            "judged": self.judged,
            "infrastructure": self.infrastructure,
            "accuracy": self.accuracy,
            "mean_reward": self.mean_reward,
        }


def spread(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample standard deviation (0 for one value) and the values themselves, e.g. over seeds.

    Args:
        values: one number per seed (at least one).

    Returns:
        ``{"mean", "sd", "per_seed"}``.
    """
    values = [float(v) for v in values]
    if not values:
        raise ValueError("spread of no values")
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5 if len(values) > 1 else 0.0
    return {"mean": mean, "sd": sd, "per_seed": values}


def seed_table(per_seed: Sequence[Mapping[str, Any]], methods: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """The demos' results table: method -> metric -> :func:`spread` over the seeds.

    Args:
        per_seed: one result per seed, each with ``"methods"``: method -> metric -> value.
        methods: the methods in table order; one no seed has is left out.

    Returns:
        ``{method: {metric: {"mean", "sd", "per_seed"}}}``, the metrics those of the first seed having the method.
    """
    table: dict = {}
    for method in methods:
        rows = [r["methods"][method] for r in per_seed if method in r["methods"]]
        if rows:
            table[method] = {key: spread([r[key] for r in rows]) for key in rows[0]}
    return table
