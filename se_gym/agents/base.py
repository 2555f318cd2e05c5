"""The agent contract, and the records that carry the protocol.

An agent answers batches of :class:`Observation` and may learn from judged
:class:`Trajectory` records between episodes.  Two rules of SE-Bench are enforced here and in
the :class:`~se_gym.agents.runner.Runner`, not left to agents' good manners:

* a closed-book observation carries no docs (``Observation.docs`` is empty and the prompt was
  rendered without them), and
* nothing an agent learns may come from a test split: :meth:`Agent.learn` callers go through
  :func:`check_learnable`, which raises :class:`ProtocolError`.
"""
from __future__ import annotations

import abc
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..choices import BOOKS  # one place for the book names
from ..errors import SEGymError

TRAIN_SPLITS = frozenset({"train", "pretrain"})


class ProtocolError(SEGymError, RuntimeError):
    """An action that breaks the experiment's protocol (e.g. learning from a test split)."""


@dataclass(frozen=True)
class Observation:
    """One question as an agent sees it.

    ``prompt`` is the full text rendered for ``book``; ``docs`` holds the doc strings shown (empty
    for a closed book); ``closed_prompt`` is the query-only rendering, which learners need to
    train Closed-SFT/Closed-RL (the runner fills it on train splits only).
    """

    task: Any  # se_gym.tasks.record.Task
    prompt: str
    book: str
    split: str
    docs: tuple[str, ...] = ()
    closed_prompt: str | None = None

    def __post_init__(self):
        if self.book not in BOOKS:
            raise ValueError(f"book must be one of {BOOKS}, got {self.book!r}")
        if self.book == "closed" and self.docs:
            raise ProtocolError("a closed-book observation must not carry docs")


@dataclass(frozen=True)
class Trajectory:
    """A judged answer: one step (SE-Bench tasks are single-turn).

    ``reward`` is ``None`` when the judge could not run the answer (an infrastructure failure that
    outlived the retries): such a trajectory says nothing about the answer and is scored nowhere.
    """

    observation: Observation
    response: str
    reward: float | None
    status: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def split(self) -> str:
        return self.observation.split

    @property
    def judged(self) -> bool:
        """False for an infrastructure failure (no reward)."""
        return self.reward is not None


def check_learnable(trajectories: Sequence[Trajectory]) -> None:
    """Raise :class:`ProtocolError` if any trajectory comes from a split agents may not learn from."""
    for t in trajectories:
        if t.split not in TRAIN_SPLITS or getattr(t.observation.task, "split", "train") not in TRAIN_SPLITS:
            raise ProtocolError(f"refusing to learn from split {t.split!r} (task {getattr(t.observation.task, 'id', '?')}): only train splits may be learned from")


def sample_answers(sampler: Any, prompts: Sequence[str], temperature: float, max_new_tokens: int, records: bool = False) -> list:
    """One answer per prompt: the text, or (``records``) a dict with the text, the prompt and the
    sample's token fields, from a sampler that has ``sample_records``."""
    if not records:
        return [g[0] for g in sampler.sample(list(prompts), 1, temperature, max_new_tokens)]
    if not hasattr(sampler, "sample_records"):
        from ..trajectories import TrajectoryError

        raise TrajectoryError(f"{type(sampler).__name__} samples text only, without token ids: sample with a se_gym.llm "
                              "Generator (se_gym.agents.TokenSampler) to record tokens")
    groups = sampler.sample_records(list(prompts), 1, temperature, max_new_tokens)
    return [dict(g[0], prompt=p) for p, g in zip(prompts, groups)]


class Agent(abc.ABC):
    """Base class: subclasses implement :meth:`act`; learners also :meth:`_learn`, :meth:`save`, :meth:`load`."""

    #: which book the agent is built for; the runner renders observations accordingly
    book: str = "closed"

    @abc.abstractmethod
    def act(self, observations: Sequence[Observation]) -> list[str]:
        """One answer (free text with a python block) per observation."""

    def act_records(self, observations: Sequence[Observation]) -> list[dict]:
        """Like :meth:`act`, each answer a dict: ``text``, the ``prompt`` sent and the sample's token
        fields (:mod:`se_gym.trajectories`).  Agents that sample through a token-aware sampler
        (a ``se_gym.llm`` Generator) have it; the others say so."""
        from ..trajectories import TrajectoryError

        raise TrajectoryError(f"{type(self).__name__} cannot record token ids: give it a se_gym.llm Generator to sample with")

    def learn(self, trajectories: Sequence[Trajectory]) -> dict:
        """Update from judged train-split trajectories; returns metrics.  Raises on test data."""
        check_learnable(trajectories)
        return self._learn(list(trajectories))

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        return {}

    def save(self, directory: str | os.PathLike) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "agent.json").write_text(json.dumps({"class": type(self).__name__, "book": self.book}), encoding="utf-8")
        return directory

    def load(self, directory: str | os.PathLike) -> "Agent":
        return self
