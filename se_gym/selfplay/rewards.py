"""Rewards of self-play and Absolute Zero's task-relative advantage.

Proposer rewards, from a valid task's solve rates (``p``: share of the solver's samples the judge
accepted):

* ``learnability`` (Absolute Zero): ``1 - p`` when ``0 < p < 1``, else 0;
* ``4p(1-p)``: the same idea, symmetric (largest at p = 1/2);
* ``gap``: open-book rate minus closed-book rate (clipped at 0): the tasks the model solves with
  the docs but not without, exactly what is worth internalizing.

On SE-Bench the first two vanish at both ends (closed book a base solves almost nothing, open book
almost everything); :func:`signal_share` measures how often each gives a signal at all.
An invalid proposal gets ``invalid_penalty``; a valid one whose reward is 0 gets ``zero_reward``
(Absolute Zero uses -1 and -0.5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Sequence

KINDS = ("learnability", "4p1p", "gap")


def learnability(p: float) -> float:
    """Absolute Zero's proposer reward: ``1 - p`` when the task is sometimes but not always solved, else 0.

    Args:
        p: the solve rate (share of accepted samples).
    """
    return 1.0 - p if 0.0 < p < 1.0 else 0.0


def four_p(p: float) -> float:
    """``4p(1-p)``: 1 at p = 1/2, 0 at both ends.

    Args:
        p: the solve rate.
    """
    return 4.0 * p * (1.0 - p)


def gap(open_rate: float, closed_rate: float) -> float:
    """Open-book minus closed-book solve rate, clipped at 0.

    Args:
        open_rate: the solve rate with the docs.
        closed_rate: the solve rate without them.
    """
    return max(0.0, open_rate - closed_rate)


@dataclass(frozen=True)
class ProposerReward:
    """Which reward, from which solve rate, and the penalties; calling it gives a proposal's reward
    (``reward(valid, open_rate, closed_rate)``).

    Attributes:
        kind: ``learnability``, ``4p1p`` or ``gap`` (:data:`KINDS`).
        rate_book: the book whose solve rate learnability and 4p(1-p) read (``open`` or ``closed``).
        invalid_penalty: the reward of an invalid proposal.
        zero_reward: the reward of a valid one whose reward would be 0.
    """

    kind: str = "gap"
    rate_book: str = "closed"  # the solve rate learnability and 4p(1-p) read
    invalid_penalty: float = -1.0
    zero_reward: float = 0.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"proposer reward must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.rate_book not in ("open", "closed"):
            raise ValueError(f"rate_book must be open or closed, got {self.rate_book!r}")

    def raw(self, open_rate: float | None, closed_rate: float | None, kind: str | None = None) -> float:
        """The reward of a valid task before the zero-reward substitution.

        Args:
            open_rate: its open-book solve rate (None: not measured).
            closed_rate: its closed-book solve rate (None: not measured).
            kind: another reward than :attr:`kind` (None: this one's).
        """
        kind = kind or self.kind
        if kind == "gap":
            if open_rate is None or closed_rate is None:
                raise ValueError("the gap reward needs both the open-book and the closed-book solve rate")
            return gap(open_rate, closed_rate)
        rate = open_rate if self.rate_book == "open" else closed_rate
        if rate is None:
            raise ValueError(f"the {kind} reward needs the {self.rate_book}-book solve rate")
        return learnability(rate) if kind == "learnability" else four_p(rate)

    def __call__(self, valid: bool, open_rate: float | None = None, closed_rate: float | None = None) -> float:
        if not valid:
            return self.invalid_penalty
        r = self.raw(open_rate, closed_rate)
        return r if r != 0.0 else self.zero_reward


def signal_share(values: Sequence[float]) -> float:
    """Share of valid tasks whose reward is not 0 (0.0 for none).

    Args:
        values: the valid tasks' rewards.
    """
    return sum(1 for v in values if v != 0.0) / len(values) if values else 0.0


def task_relative_advantages(rewards: Sequence[float], groups: Sequence[Hashable], eps: float = 1e-6) -> list[float]:
    """Absolute Zero's task-relative advantage (TRR++): rewards whitened within each group
    (a role, or a role and task type), ``(r - mean_g) / (std_g + eps)`` with the population std;
    a group whose rewards are all equal gets 0 (it says nothing about which sample was better).

    Args:
        rewards: one per sample.
        groups: each sample's group label.
        eps: added to the std.
    """
    if len(rewards) != len(groups):
        raise ValueError(f"{len(rewards)} rewards but {len(groups)} group labels")
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    out = [0.0] * len(rewards)
    for idx in members.values():
        vals = [float(rewards[i]) for i in idx]
        mean = sum(vals) / len(vals)
        std = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
        if std == 0.0:
            continue
        for i, v in zip(idx, vals):
            out[i] = (v - mean) / (std + eps)
    return out


def histogram(rates: Sequence[float]) -> dict[str, int]:
    """Solve rates counted in bins that keep both ends apart: exactly 0, four quarters of (0, 1),
    exactly 1 (the ends are where learnability gives no signal).

    Args:
        rates: solve rates in [0, 1].
    """
    labels = ("0", "(0,.25)", "[.25,.5)", "[.5,.75)", "[.75,1)", "1")
    counts = dict.fromkeys(labels, 0)
    for r in rates:
        if r <= 0.0:
            counts["0"] += 1
        elif r >= 1.0:
            counts["1"] += 1
        else:
            counts[labels[1 + min(3, int(r * 4))]] += 1
    return counts
