"""Proposer agents: what writes self-play's tasks.

A proposer is shown the docs of a few library functions and some earlier valid tasks, and writes a
task (a :class:`~se_gym.agents.proposal.Proposal`, or its text).  Checking it (the validator), solving
it and rewarding it stay in :mod:`se_gym.selfplay`; the agent only writes, and may learn from how its
tasks fared.  Built-ins (``se-gym selfplay --proposer NAME``):

* ``policy``: the learner's own policy proposes (through the run's generation engine), so the
  solver's training also moves the proposer; rehearsal (``SelfPlayConfig.rehearsal``) mixes its own
  valid proposals into each learn step so that skill is kept.
* ``frozen``: the run's starting model proposes throughout, untouched by training.
* ``model:PATH`` (a checkpoint folder or a HF id): a separate model, e.g. a stronger teacher.

A user's own: ``--proposer my_pkg.mod:MyProposer`` or ``--proposer path/to/file.py:MyProposer``
(a subclass of :class:`ProposerAgent`), or a name installed packages declare under the
``se_gym.proposers`` entry-point group.
"""
from __future__ import annotations

import abc
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..registry import Registry
from .proposal import Proposal


@dataclass(frozen=True)
class ProposerDocs:
    """What a proposer is shown for one task.

    Attributes:
        functions: the catalogue keys the task is about (the curriculum's pick).
        names: their names in the library (``zwc.la.cumsum``), in the same order.
        package: the library's package (the reference's ``import``).
        text: their documentation.
        prompt: the whole prompt a model proposer reads (docs, example tasks, the format).
    """

    functions: tuple[str, ...]
    names: tuple[str, ...]
    package: str
    text: str
    prompt: str


@dataclass(frozen=True)
class ProposerSetup:
    """What the self-play loop hands a proposer class to build one (:meth:`ProposerAgent.build`).

    Attributes:
        model: the run's starting model (path or HF id).
        generate: the learner's generation, ``generate(prompts, temperature, max_tokens, seed) -> texts``
            (the run's engine: in this process or on Ray), or None.
        temperature: sampling temperature for proposals.
        max_tokens: the longest proposal, in tokens.
        device: the torch device of models the proposer loads itself (None: CUDA when available).
        path: ``model:PATH``'s PATH ("" otherwise).
    """

    model: str = ""
    generate: Callable[[Sequence[str], float, int, int], list[str]] | None = None
    temperature: float = 1.0
    max_tokens: int = 1024
    device: str | None = None
    path: str = ""


@dataclass(frozen=True)
class ProposerFeedback:
    """How one proposal fared, for :meth:`ProposerAgent.learn`.

    Attributes:
        docs: what the proposer was shown.
        text: what it wrote.
        valid: whether the validator accepted it.
        reason: the rejection reason (None when valid).
        reward: the proposer reward (None: no signal, e.g. its solve rates are missing).
    """

    docs: ProposerDocs
    text: str
    valid: bool
    reason: str | None
    reward: float | None


class ProposerAgent(abc.ABC):
    """The proposer contract: :meth:`propose` (or :meth:`propose_many`), and optionally
    :meth:`learn`, :meth:`save` and :meth:`load` (a run resumed in a new process loads the agent the
    last finished round saved)."""

    #: True when the learner's own policy proposes: the loop's rehearsal then applies to it
    shares_policy: bool = False

    @classmethod
    def build(cls, setup: ProposerSetup) -> "ProposerAgent":
        """A fresh agent for a run (default: ``cls()``).

        Args:
            setup: the run's model, generation engine and sampling settings.

        Returns:
            the agent.
        """
        return cls()

    @abc.abstractmethod
    def propose(self, docs: ProposerDocs, references: Sequence[Any]) -> Proposal | str:
        """Write one task.

        Args:
            docs: the functions to write about, their docs and the prompt.
            references: earlier valid tasks (``se_gym.tasks.Task``), most relevant first; may be empty.

        Returns:
            a :class:`Proposal`, or its text (``Question:`` / ``Inputs:`` / ``Reference:``).
        """

    def propose_many(self, requests: Sequence[tuple[ProposerDocs, Sequence[Any]]], seed: int) -> list[Proposal | str]:
        """One task per ``(docs, references)``; model proposers override this to generate in a batch.

        Args:
            requests: what to write about, per task.
            seed: the round's sampling seed.

        Returns:
            one proposal (or text) per request, in order.
        """
        return [self.propose(d, refs) for d, refs in requests]

    def learn(self, feedback: Sequence[ProposerFeedback]) -> dict:
        """Learn from this round's proposals and how they fared (default: nothing).

        Args:
            feedback: one record per proposal of the round, in order.

        Returns:
            JSON-ready metrics (``{"updated": bool, ...}``), logged with the round.
        """
        return {"updated": False}

    def save(self, directory: str | os.PathLike) -> Path:
        """Write what :meth:`load` needs into ``directory`` (default: the class name only)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "proposer.json").write_text(json.dumps({"class": type(self).__name__}), encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike, setup: ProposerSetup) -> "ProposerAgent":
        """The agent :meth:`save` wrote (default: a fresh one from ``setup``)."""
        return cls.build(setup)


def proposal_text(p: Proposal | str) -> str:
    """A proposer's answer as the text the validator reads."""
    if isinstance(p, str):
        return p
    if isinstance(p, Proposal):
        from .proposal import render_proposal

        return render_proposal(p.question, p.inputs, p.reference)
    raise TypeError(f"a proposer returns a Proposal or its text, got {type(p).__name__}")


class PolicyProposer(ProposerAgent):
    """The learner's own policy proposes, through the run's generation engine (always current)."""

    shares_policy = True

    def __init__(self, generate: Callable[[Sequence[str], float, int, int], list[str]], temperature: float, max_tokens: int):
        self.generate, self.temperature, self.max_tokens = generate, temperature, max_tokens

    @classmethod
    def build(cls, setup: ProposerSetup) -> "PolicyProposer":
        if setup.generate is None:
            raise ValueError("the policy proposer needs the run's generation engine")
        return cls(setup.generate, setup.temperature, setup.max_tokens)

    def propose(self, docs: ProposerDocs, references: Sequence[Any]) -> str:
        return self.propose_many([(docs, references)], 0)[0]

    def propose_many(self, requests: Sequence[tuple[ProposerDocs, Sequence[Any]]], seed: int) -> list[str]:
        return list(self.generate([d.prompt for d, _ in requests], self.temperature, self.max_tokens, seed))


class ModelProposer(ProposerAgent):
    """A separate model proposes (loaded once, in this process, never trained by the run)."""

    def __init__(self, model: str, temperature: float = 1.0, max_tokens: int = 1024, device: str | None = None):
        if not model:
            raise ValueError("a model proposer needs a model (model:PATH)")
        self.model, self.temperature, self.max_tokens, self.device = model, temperature, max_tokens, device
        self._gen = None

    @classmethod
    def build(cls, setup: ProposerSetup) -> "ModelProposer":
        return cls(setup.path, setup.temperature, setup.max_tokens, setup.device)

    def propose(self, docs: ProposerDocs, references: Sequence[Any]) -> str:
        return self.propose_many([(docs, references)], 0)[0]

    def propose_many(self, requests: Sequence[tuple[ProposerDocs, Sequence[Any]]], seed: int) -> list[str]:
        from ..llm import SamplingParams
        from ..llm.hf import HFGenerator

        if not requests:
            return []
        if self._gen is None:
            self._gen = HFGenerator(self.model, device=self.device or "auto", progress=False)
        params = SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, n=1, seed=seed)
        return [g.texts[0] for g in self._gen.generate([d.prompt for d, _ in requests], params)]


class FrozenProposer(ModelProposer):
    """The run's starting model proposes in every round (training the solver leaves it untouched)."""

    @classmethod
    def build(cls, setup: ProposerSetup) -> "FrozenProposer":
        return cls(setup.model, setup.temperature, setup.max_tokens, setup.device)


PROPOSERS = Registry("proposer", group="se_gym.proposers", base=ProposerAgent)
PROPOSERS.register("policy", "se_gym.agents.proposer:PolicyProposer")
PROPOSERS.register("frozen", "se_gym.agents.proposer:FrozenProposer")
MODEL_PREFIX = "model:"  # model:PATH|ID, a separate model (ModelProposer)


def proposer_class(spec: str) -> type[ProposerAgent]:
    """The class behind ``--proposer SPEC`` (a name, ``model:PATH``, ``module:Class``, ``file.py:Class``).

    Raises:
        se_gym.registry.RegistryError: the spec names nothing loadable, or no ProposerAgent.
    """
    if spec.startswith(MODEL_PREFIX):
        return ModelProposer
    return PROPOSERS.load(spec)


def build_proposer(spec: str, setup: ProposerSetup, saved: str | os.PathLike | None = None) -> ProposerAgent:
    """The agent for ``--proposer SPEC``: loaded from ``saved`` when that folder holds one, else fresh.

    Args:
        spec: the proposer (see :func:`proposer_class`).
        setup: the run's model, engine and sampling settings (``path`` is filled from ``model:PATH``).
        saved: a folder an earlier round's :meth:`ProposerAgent.save` wrote, or None.

    Returns:
        the agent.
    """
    from dataclasses import replace

    cls = proposer_class(spec)
    if spec.startswith(MODEL_PREFIX):
        setup = replace(setup, path=spec[len(MODEL_PREFIX):])
    if saved is not None and Path(saved).is_dir() and any(Path(saved).iterdir()):
        return cls.load(saved, setup)
    return cls.build(setup)
