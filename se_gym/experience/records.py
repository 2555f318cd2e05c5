"""What experience is made of: finished episodes, and the experience extracted from them.

* :class:`Turn` / :class:`Episode`: one question answered in one or more turns (``max_turns > 1``
  gives the execution feedback of a failed answer before the next one), each turn with the prompt
  the model saw, its answer, the judge's verdict (status, error type, exception) and the feedback.
* :class:`Experience`: one lesson drawn from episodes, at a *granularity*: ``instance`` (what one
  trajectory did and how it ended, tied to its task), ``principle`` (an abstract reusable lesson,
  grouped and deduplicated across episodes) or ``oracle`` (the library's own doc entry: the reference
  arm only SE-Bench can offer).  Its :class:`Provenance` names the episodes, the iteration and the
  extractor it came from.

All records are frozen and round-trip through JSON (``to_json`` / ``from_json``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from ..errors import SEGymError

GRANULARITIES = ("instance", "principle", "oracle")


class ExperienceError(SEGymError, ValueError):
    """A malformed experience or episode record (one line naming the problem)."""


def _verdict_from(d):
    from ..judge.types import Verdict

    return d if d is None or isinstance(d, Verdict) else Verdict.from_dict(d)


@dataclass(frozen=True)
class Turn:
    """One answer of an episode.

    Attributes:
        prompt: the prompt it was given (experience included, if any).
        answer: the answer.
        verdict: the judge's :class:`se_gym.judge.Verdict`.
        feedback: what the environment returned (empty on the last turn or a pass).
        injected: the ids of the experiences injected into the prompt.
    """

    prompt: str
    answer: str
    verdict: Any  # se_gym.judge.Verdict
    feedback: str = ""
    injected: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "verdict", _verdict_from(self.verdict))
        object.__setattr__(self, "injected", tuple(self.injected))

    @property
    def passed(self) -> bool:
        """Whether the verdict is a pass."""
        return bool(self.verdict is not None and self.verdict.passed)

    @property
    def error_type(self) -> str | None:
        """The verdict's error type (None when it passed or has none)."""
        v = self.verdict
        return v.error_type.value if v is not None and v.error_type is not None else None

    @property
    def status(self) -> str:
        """The verdict's status (empty without a verdict)."""
        return self.verdict.status.value if self.verdict is not None else ""

    @property
    def error(self) -> str:
        """One line: the exception (or the judge's detail) of a failed answer; empty when it passed."""
        v = self.verdict
        if v is None or v.passed:
            return ""
        if v.exception:
            return f"{v.exception}: {v.exception_message or ''}".rstrip(": ")
        return v.detail or v.status.value

    def to_json(self) -> dict:
        """Every field, JSON-ready."""
        return {"prompt": self.prompt, "answer": self.answer, "verdict": self.verdict.to_dict() if self.verdict is not None else None,
                "feedback": self.feedback, "injected": list(self.injected)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Turn":
        """The turn :meth:`to_json` wrote.

        Args:
            d: the dict.

        Raises:
            ExperienceError: a field is missing.
        """
        try:
            return cls(d["prompt"], d["answer"], d.get("verdict"), d.get("feedback", ""), tuple(d.get("injected", ())))
        except KeyError as exc:
            raise ExperienceError(f"turn record is missing {exc}") from None


@dataclass(frozen=True)
class Episode:
    """One question answered in up to ``max_turns`` turns.

    Attributes:
        id: the episode's id.
        task: the task (:class:`se_gym.tasks.Task`).
        turns: the turns, in order.
        iteration: the loop's iteration it belongs to.
        context: what the prompts held (``closed``: nothing; ``experience:global`` /
            ``experience:stepwise``; ``docs``).
        model: the model that answered.
    """

    id: str
    task: Any  # se_gym.tasks.Task
    turns: tuple[Turn, ...]
    iteration: int = 0
    context: str = "closed"
    model: str = ""

    def __post_init__(self):
        from ..tasks.record import Task

        if isinstance(self.task, Mapping):
            object.__setattr__(self, "task", Task.from_json(self.task))
        object.__setattr__(self, "turns", tuple(t if isinstance(t, Turn) else Turn.from_json(t) for t in self.turns))
        if not self.turns:
            raise ExperienceError(f"episode {self.id!r} has no turns")

    @property
    def query(self) -> str:
        """The task's question."""
        return self.task.query

    @property
    def answer(self) -> str:
        """The last answer given."""
        return self.turns[-1].answer

    @property
    def verdict(self):
        """The last turn's verdict."""
        return self.turns[-1].verdict

    @property
    def passed(self) -> bool:
        """Whether the last turn passed."""
        return self.turns[-1].passed

    @property
    def reward(self) -> float:
        """The last turn's reward (0 when it has no verdict)."""
        return float(self.verdict.reward) if self.verdict is not None else 0.0

    @property
    def error_types(self) -> tuple[str, ...]:
        """The error type of every failed turn, in order."""
        return tuple(t.error_type or t.status for t in self.turns if not t.passed)

    def to_json(self) -> dict:
        """Every field, JSON-ready (the task and the turns as their own JSON)."""
        return {"id": self.id, "task": self.task.to_json(), "turns": [t.to_json() for t in self.turns],
                "iteration": self.iteration, "context": self.context, "model": self.model}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Episode":
        """The episode :meth:`to_json` wrote.

        Args:
            d: the dict.

        Raises:
            ExperienceError: a field is missing.
        """
        try:
            return cls(d["id"], d["task"], tuple(d["turns"]), int(d.get("iteration", 0)), d.get("context", "closed"), d.get("model", ""))
        except KeyError as exc:
            raise ExperienceError(f"episode record is missing {exc}") from None


@dataclass(frozen=True)
class Provenance:
    """Where an experience came from.

    Attributes:
        episodes: the ids of the episodes behind it.
        iteration: the iteration it was extracted in.
        extractor: the extractor's name.
    """

    episodes: tuple[str, ...] = ()
    iteration: int = 0
    extractor: str = ""

    def __post_init__(self):
        object.__setattr__(self, "episodes", tuple(self.episodes))

    def to_json(self) -> dict:
        """Every field, JSON-ready."""
        return {"episodes": list(self.episodes), "iteration": self.iteration, "extractor": self.extractor}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Provenance":
        """The provenance :meth:`to_json` wrote.

        Args:
            d: the dict.
        """
        return cls(tuple(d.get("episodes", ())), int(d.get("iteration", 0)), d.get("extractor", ""))


@dataclass(frozen=True)
class Experience:
    """One lesson.

    Attributes:
        text: the lesson.
        granularity: ``instance``, ``principle`` or ``oracle``.
        topic: groups lessons about the same thing (``function:cumsum``,
            ``mistake:library_function_hallucination``, ``task:<id>``): principles with the same topic
            are merged.
        keys: the library functions it is about.
        task_id: the task an instance lesson comes from.
        support: the episodes behind it.
        provenance: where it came from.
    """

    text: str
    granularity: str
    topic: str
    keys: tuple[str, ...] = ()
    task_id: str | None = None
    support: int = 1
    provenance: Provenance = field(default_factory=Provenance)

    def __post_init__(self):
        if self.granularity not in GRANULARITIES:
            raise ExperienceError(f"granularity must be one of {GRANULARITIES}, got {self.granularity!r}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise ExperienceError("an experience needs a non-empty text")
        if self.granularity == "instance" and not self.task_id:
            raise ExperienceError("an instance experience must name its task (task_id)")
        object.__setattr__(self, "keys", tuple(self.keys))
        if isinstance(self.provenance, Mapping):
            object.__setattr__(self, "provenance", Provenance.from_json(self.provenance))

    @property
    def id(self) -> str:
        """Content id (granularity, topic, text): the same lesson gets the same id in every process."""
        blob = json.dumps([self.granularity, self.topic, self.text], ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def merged(self, other: "Experience") -> "Experience":
        """This lesson with ``other``'s support and episodes added (same topic; the newer text wins).

        Args:
            other: the newer lesson.
        """
        eps = tuple(dict.fromkeys(self.provenance.episodes + other.provenance.episodes))
        prov = Provenance(eps, max(self.provenance.iteration, other.provenance.iteration), other.provenance.extractor or self.provenance.extractor)
        keys = tuple(dict.fromkeys(self.keys + other.keys))
        return replace(other, keys=keys, support=self.support + other.support, provenance=prov)

    def to_json(self) -> dict:
        """Every field and the id, JSON-ready."""
        return {"id": self.id, "text": self.text, "granularity": self.granularity, "topic": self.topic, "keys": list(self.keys),
                "task_id": self.task_id, "support": self.support, "provenance": self.provenance.to_json()}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Experience":
        """The lesson :meth:`to_json` wrote (its id checked).

        Args:
            d: the dict.

        Raises:
            ExperienceError: a field is missing, or the id does not match the content.
        """
        try:
            exp = cls(d["text"], d["granularity"], d["topic"], tuple(d.get("keys", ())), d.get("task_id"), int(d.get("support", 1)),
                      Provenance.from_json(d.get("provenance", {})))
        except KeyError as exc:
            raise ExperienceError(f"experience record is missing {exc}") from None
        if "id" in d and d["id"] != exp.id:
            raise ExperienceError(f"experience {d['id']!r}: the id does not match its content (edited by hand?)")
        return exp


def dump_jsonl(records: Sequence[Any]) -> str:
    return "".join(json.dumps(r.to_json(), sort_keys=True) + "\n" for r in records)


def load_jsonl(text: str, cls) -> list:
    return [cls.from_json(json.loads(line)) for line in text.splitlines() if line.strip()]
