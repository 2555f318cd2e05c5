"""Non-parametric memory agents: remember train-split experience, retrieve it at answer time.

The memory holds (key text, value text) entries: successful train trajectories (query ->
accepted answer) and the docs seen on train tasks.  Retrieval is BM25 over word tokens by
default; ``embed`` (any callable text -> vector, e.g. a sentence-transformers model) switches to
cosine similarity.  The ExpeL-style agent inserts the retrieved experiences into the prompt.
Entries only enter through :meth:`Agent.learn`, which refuses test-split trajectories.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..retrieval import BM25, words  # noqa: F401  (BM25: still importable from here)
from ..tasks.prompts import memory_context, with_memory
from .base import Agent, Observation, Trajectory, sample_answers
from .prompting import as_sampler


@dataclass(frozen=True)
class MemoryEntry:
    """One remembered item.

    Attributes:
        key: what retrieval matches against (the query, or the doc).
        value: what goes into the prompt.
        kind: ``experience`` or ``doc``.
        source: the id of the task it came from.
    """
    key: str  # what retrieval matches against (the query, or the doc)
    value: str  # what goes into the prompt
    kind: str  # "experience" or "doc"
    source: str  # task id it came from


class Memory:
    """Entries plus an index; ``search`` returns the top-k entries for a query.

    Args:
        embed: text -> vector for dense retrieval (None: BM25 over the keys).
    """

    def __init__(self, embed: Callable[[str], Sequence[float]] | None = None):
        self.entries: list[MemoryEntry] = []
        self.embed = embed
        self._bm25 = BM25()
        self._vectors: list[Sequence[float]] = []

    def add(self, entry: MemoryEntry) -> bool:
        """Add ``entry`` unless an entry with its key and value is there already.

        Args:
            entry: the entry.

        Returns:
            Whether it was added.
        """
        if any(e.key == entry.key and e.value == entry.value for e in self.entries):
            return False
        self.entries.append(entry)
        self._bm25.add(entry.key)
        if self.embed is not None:
            self._vectors.append(self.embed(entry.key))
        return True

    def search(self, query: str, k: int, kind: str | None = None) -> list[MemoryEntry]:
        """The ``k`` entries that match ``query`` best (ties: the older first).

        Args:
            query: the text to match.
            k: how many.
            kind: only entries of this kind (``experience``, ``doc``); None: any.

        Returns:
            The entries, best first.
        """
        if self.embed is not None:
            qv = self.embed(query)
            scores = [_cosine(qv, v) for v in self._vectors]
        else:
            scores = self._bm25.scores(query)
        ranked = sorted(range(len(self.entries)), key=lambda i: (-scores[i], i))
        hits = [self.entries[i] for i in ranked if scores[i] > 0 and (kind is None or self.entries[i].kind == kind)]
        return hits[:k]

    def save(self, path: str | os.PathLike) -> None:
        """Write the entries as JSON (atomically).

        Args:
            path: the file.
        """
        from se_gym.storage import write_json_atomic

        write_json_atomic(path, [asdict(e) for e in self.entries])

    def load(self, path: str | os.PathLike) -> None:
        """Add the entries a :meth:`save` wrote.

        Args:
            path: the JSON file.
        """
        for row in json.loads(Path(path).read_text(encoding="utf-8")):
            self.add(MemoryEntry(**row))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(y * y for y in b)) or 1.0
    return dot / (na * nb)


def _query_of(o: Observation) -> str:
    return getattr(o.task, "query", "") or o.prompt


class MemoryAgent(Agent):
    """ExpeL-style: retrieved experiences (and, with ``use_docs``, remembered docs) go before the prompt.

    Args:
        model: what answers (see :func:`se_gym.agents.as_sampler`).
        k: entries retrieved per kind.
        use_docs: also remember the docs shown on train questions, and retrieve them.
        book: the book the agent answers with at test time ("closed" by default: the memory is its only
            source of the library's names).  Training rollouts may use either book.
        temperature: sampling temperature (0: greedy).
        max_new_tokens: the longest answer.
        embed: text -> vector for dense retrieval (None: BM25).
    """

    def __init__(self, model: Any, k: int = 2, use_docs: bool = True, book: str = "closed", temperature: float = 0.0,
                 max_new_tokens: int = 512, embed: Callable[[str], Sequence[float]] | None = None):
        self.sampler = as_sampler(model)
        self.k = k
        self.use_docs = use_docs
        self.book = book
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.memory = Memory(embed)

    def context(self, observation: Observation) -> str:
        """The retrieved experiences and docs for ``observation``, as the prompt shows them.

        Args:
            observation: the question.
        """
        query = _query_of(observation)
        experiences = [(e.key, e.value) for e in self.memory.search(query, self.k, kind="experience")]
        docs = [e.value for e in self.memory.search(query, self.k, kind="doc")] if self.use_docs else []
        return memory_context(experiences, docs)

    def prompts(self, observations: Sequence[Observation]) -> list[str]:
        """The prompts sent: each observation's prompt under its retrieved memory.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return [with_memory(self.context(o), o.prompt) for o in observations]

    def act(self, observations: Sequence[Observation]) -> list[str]:
        """Answer each observation with the retrieved memory above its prompt.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return sample_answers(self.sampler, self.prompts(observations), self.temperature, self.max_new_tokens)

    def act_records(self, observations: Sequence[Observation]) -> list[dict]:
        """Like :meth:`act`, with each answer's prompt and token fields.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        return sample_answers(self.sampler, self.prompts(observations), self.temperature, self.max_new_tokens, records=True)

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        added = 0
        for t in trajectories:
            query = _query_of(t.observation)
            if t.judged and t.reward >= 1.0:
                added += self.memory.add(MemoryEntry(query, t.response, "experience", getattr(t.observation.task, "id", "")))
            if self.use_docs:
                for doc in t.observation.docs:
                    added += self.memory.add(MemoryEntry(doc, doc, "doc", getattr(t.observation.task, "id", "")))
        return {"memory_added": added, "memory_size": len(self.memory.entries)}

    def memory_state(self) -> list[dict]:
        """Every entry, as dicts (what is saved and hashed)."""
        return [asdict(e) for e in self.memory.entries]

    def set_memory_state(self, state: list[dict]) -> None:
        """Replace the memory with the entries of ``state``.

        Args:
            state: what :meth:`memory_state` returned.
        """
        self.memory = Memory(self.memory.embed)
        for row in state:
            self.memory.add(MemoryEntry(**row))


class DocMemoryAgent(MemoryAgent):
    """Remembers the docs shown on train tasks (nothing else) and, closed book, puts the ``k`` docs
    retrieved for the question before it: ``header`` + one doc per line + the prompt.

    For the demo's tiny base, ``header="Docs:\n"`` is the miniature's open-book layout, which it
    learned to read in pre-training (``se-gym bench --quick`` passes it).

    Args:
        model: what answers (see :func:`se_gym.agents.as_sampler`).
        k: docs retrieved per question.
        header: the line above the docs.
        temperature: sampling temperature (0: greedy).
        max_new_tokens: the longest answer.
        embed: text -> vector for dense retrieval (None: BM25).
    """

    def __init__(self, model: Any, k: int = 2, header: str = "### Docs remembered from training\n", temperature: float = 0.0,
                 max_new_tokens: int = 512, embed: Callable[[str], Sequence[float]] | None = None):
        super().__init__(model, k=k, use_docs=True, book="closed", temperature=temperature, max_new_tokens=max_new_tokens, embed=embed)
        self.header = header

    def prompts(self, observations: Sequence[Observation]) -> list[str]:
        """The prompts sent: ``header``, the retrieved docs, then the observation's prompt.

        Args:
            observations: the questions, as the runner rendered them for the agent's book.
        """
        out = []
        for o in observations:
            docs = [e.value for e in self.memory.search(_query_of(o), self.k, kind="doc")]
            out.append(f"{self.header}" + "\n".join(docs) + "\n" + o.prompt if docs else o.prompt)
        return out

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        added = 0
        for t in trajectories:
            for doc in t.observation.docs:
                added += self.memory.add(MemoryEntry(doc, doc, "doc", getattr(t.observation.task, "id", "")))
        return {"memory_added": added, "memory_size": len(self.memory.entries)}
