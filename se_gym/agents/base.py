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
import hashlib
import json
import os
import tempfile
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

    Attributes:
        task: the task (the benchmark shows its public view: no tests, no solutions).
        prompt: the full text rendered for ``book``.
        book: ``closed`` or ``open``.
        split: the split the question comes from.
        docs: the doc strings shown (empty for a closed book).
        closed_prompt: the query-only rendering, which learners need to train Closed-SFT/Closed-RL (the
            runner fills it on train splits only).
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

    Attributes:
        observation: the question.
        response: the agent's answer.
        reward: the judge's reward; ``None`` when the judge could not run the answer (an infrastructure
            failure that outlived the retries): such a trajectory says nothing about the answer and is
            scored nowhere.
        status: the verdict's status (``passed``, ``wrong_answer``...).
        info: anything else recorded with it (token fields, the failure's detail).
    """

    observation: Observation
    response: str
    reward: float | None
    status: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def split(self) -> str:
        """The split of the question answered."""
        return self.observation.split

    @property
    def judged(self) -> bool:
        """False for an infrastructure failure (no reward)."""
        return self.reward is not None


def check_learnable(trajectories: Sequence[Trajectory]) -> None:
    """Raise :class:`ProtocolError` if any trajectory comes from a split agents may not learn from.

    Args:
        trajectories: what an agent is about to learn from.
    """
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
    #: the book it is tested with, when that differs from ``book`` (learners roll out with the docs
    #: and are tested without them); None: ``book``
    test_book: str | None = None

    @abc.abstractmethod
    def act(self, observations: Sequence[Observation]) -> list[str]:
        """One answer (free text with a python block) per observation.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.

        Returns:
            The answers, in order.
        """

    def act_records(self, observations: Sequence[Observation]) -> list[dict]:
        """Like :meth:`act`, each answer a dict: ``text``, the ``prompt`` sent and the sample's token
        fields (:mod:`se_gym.trajectories`).  Agents that sample through a token-aware sampler
        (a ``se_gym.llm`` Generator) have it; the others say so.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.

        Raises:
            TrajectoryError: the agent cannot record token ids.
        """
        from ..trajectories import TrajectoryError

        raise TrajectoryError(f"{type(self).__name__} cannot record token ids: give it a se_gym.llm Generator to sample with")

    def learn(self, trajectories: Sequence[Trajectory]) -> dict:
        """Update from judged train-split trajectories.

        Args:
            trajectories: judged answers to train questions.

        Returns:
            Metrics of the update (numbers and text the benchmark logs).

        Raises:
            ProtocolError: a trajectory comes from a test split, or the agent is frozen (:meth:`freeze`).
        """
        if getattr(self, "_frozen", False):
            raise ProtocolError(f"{type(self).__name__} is frozen (the test phase): learn() is refused")
        check_learnable(trajectories)
        return self._learn(list(trajectories))

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        return {}

    def freeze(self) -> None:
        """End of the learn phase: from now on :meth:`learn` raises :class:`ProtocolError`."""
        self._frozen = True

    # -- memory: what an agent learned, for the benchmark's freeze hash and size ------------------
    def memory_state(self) -> Any:
        """The agent's learned memory as JSON-able data, or None (then :meth:`state_digest` hashes
        what :meth:`save` writes).  Agents with a custom memory define this and :meth:`set_memory_state`
        and get saving, loading, the freeze hash and the size for free."""
        return None

    def set_memory_state(self, state: Any) -> None:
        """Restore what :meth:`memory_state` returned (called by the default :meth:`load`).

        Args:
            state: the JSON data :meth:`memory_state` gave.
        """

    def state_digest(self) -> str:
        """A SHA-256 of the agent's memory: of :meth:`memory_state`, else of the files :meth:`save` writes.

        Returns:
            64 hex digits; equal before and after a phase exactly when the memory did not change.
        """
        state = self.memory_state()
        if state is not None:
            return hashlib.sha256(json.dumps(state, sort_keys=True, default=str).encode()).hexdigest()
        with tempfile.TemporaryDirectory() as tmp:
            return _digest_files(self.save(tmp))

    def memory_size(self) -> tuple[int | None, int]:
        """(entries or None, bytes) of the memory: entries of a list/dict :meth:`memory_state` and its JSON
        size, else the bytes :meth:`save` writes."""
        state = self.memory_state()
        if state is not None:
            entries = len(state) if isinstance(state, (list, dict)) else None
            return entries, len(json.dumps(state, sort_keys=True, default=str).encode())
        with tempfile.TemporaryDirectory() as tmp:
            root = self.save(tmp)
            return None, sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file() and p.name != "agent.json")

    def save(self, directory: str | os.PathLike) -> Path:
        """Write what the agent learned into ``directory`` (the default: ``agent.json`` and
        :meth:`memory_state` as ``memory_state.json``).  A fresh agent's :meth:`load` of it must give the
        same memory: the benchmark answers every test batch with one.

        Args:
            directory: the folder (made if missing).

        Returns:
            The folder written.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "agent.json").write_text(json.dumps({"class": type(self).__name__, "book": self.book}), encoding="utf-8")
        state = self.memory_state()
        if state is not None:
            from se_gym.storage import write_json_atomic

            write_json_atomic(directory / "memory_state.json", state)
        return directory

    def load(self, directory: str | os.PathLike) -> "Agent":
        """Restore what :meth:`save` wrote (the default: ``memory_state.json`` through :meth:`set_memory_state`).

        Args:
            directory: the folder :meth:`save` wrote.

        Returns:
            The agent itself.
        """
        path = Path(directory) / "memory_state.json"
        if path.is_file():
            self.set_memory_state(json.loads(path.read_text(encoding="utf-8")))
        return self


def _digest_files(root: Path) -> str:
    """SHA-256 over the relative paths and contents of the files under ``root`` (agent.json left out:
    it names the class, not what was learned)."""
    h = hashlib.sha256()
    for p in sorted(q for q in Path(root).rglob("*") if q.is_file() and q.name != "agent.json"):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()
