"""ExpeL-style agent (Zhao et al., 2023): a pool of insights and a memory of successful trajectories.

Learning compares, per train task, the answers the judge rejected with those it accepted and turns
the difference into insights (ExpeL's ADD / UPVOTE: an insight found again gains a vote; the pool
keeps the ``max_insights`` with most votes).  At answer time the insights most relevant to the
question and the ``k`` most similar accepted trajectories go before the prompt: the trajectories in
the shared memory layout (:func:`se_gym.tasks.prompts.memory_context` under ``with_memory``, the one
the demo's experience base is pre-trained on), the insights below them (``k_insights=0``: none).

Insights come from one of two extractors: ``"rules"`` (the default; library calls present in the
accepted answer and absent from the rejected ones, and the reverse: deterministic, works with a
model too small to reflect) or ``"llm"`` (the agent's own model writes the rule, as in ExpeL).
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Sequence

from .base import Observation, Trajectory, sample_answers
from .memory import BM25, Memory, MemoryAgent, MemoryEntry, _query_of

_CALL = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\s*\(")
EXTRACTORS = ("rules", "llm")
REFLECT = ("Compare a rejected and an accepted answer to the same task and state, in one sentence, the rule "
           "that made the difference.\nTask: {query}\nRejected answer:\n{bad}\nAccepted answer:\n{good}\nRule:")


def calls(code: str) -> set[str]:
    """Dotted names called in ``code`` (``pkg.fn(`` -> ``pkg.fn``).

    Args:
        code: an answer's text or code.
    """
    return set(_CALL.findall(code))


class ExpeLAgent(MemoryAgent):
    """Insights plus retrieved successful trajectories in context; answers closed book.

    Args:
        model: a Policy, a ``se_gym.llm`` Generator or a sampler.
        k: accepted trajectories retrieved per question.
        k_insights: insights shown per question (the most relevant by BM25, ties by votes).
        max_insights: size of the insight pool (lowest votes dropped first).
        insights: ``"rules"`` or ``"llm"`` (see the module docstring).
    """

    def __init__(self, model: Any, k: int = 2, k_insights: int = 3, max_insights: int = 64, insights: str = "rules",
                 temperature: float = 0.0, max_new_tokens: int = 512):
        if insights not in EXTRACTORS:
            raise ValueError(f"insights must be one of {EXTRACTORS}, got {insights!r}")
        super().__init__(model, k=k, use_docs=False, book="closed", temperature=temperature, max_new_tokens=max_new_tokens)
        self.k_insights, self.max_insights, self.extractor = k_insights, max_insights, insights
        self.insights: dict[str, int] = {}  # text -> votes

    def _rules(self, query: str, bad: Sequence[str], good: Sequence[str]) -> list[str]:
        good_calls = set().union(*(calls(g) for g in good)) if good else set()
        bad_calls = set().union(*(calls(b) for b in bad)) if bad else set()
        out = [f"For a task like '{query}', call {c}." for c in sorted(good_calls - bad_calls)]
        out += [f"{c} did not solve '{query}'." for c in sorted(bad_calls - good_calls)]
        return out

    def _reflect(self, query: str, bad: Sequence[str], good: Sequence[str]) -> list[str]:
        if not (bad and good):
            return []
        prompt = REFLECT.format(query=query, bad=bad[0], good=good[0])
        text = sample_answers(self.sampler, [prompt], 0.0, min(self.max_new_tokens, 128))[0]
        line = text.strip().splitlines()[0].strip() if text.strip() else ""
        return [line] if line else []

    def _learn(self, trajectories: list[Trajectory]) -> dict:
        metrics = super()._learn(trajectories)  # accepted trajectories -> experience entries
        by_task: dict[str, tuple[str, list[str], list[str]]] = defaultdict(lambda: ("", [], []))
        for t in trajectories:
            if not t.judged:
                continue
            tid = getattr(t.observation.task, "id", "")
            query, bad, good = by_task[tid]
            (good if t.reward >= 1.0 else bad).append(t.response)
            by_task[tid] = (_query_of(t.observation), bad, good)
        extract = self._rules if self.extractor == "rules" else self._reflect
        found = 0
        for query, bad, good in by_task.values():
            for text in extract(query, bad, good):
                self.insights[text] = self.insights.get(text, 0) + 1  # ADD, or UPVOTE when found again
                found += 1
        if len(self.insights) > self.max_insights:
            kept = sorted(self.insights.items(), key=lambda kv: (-kv[1], kv[0]))[: self.max_insights]
            self.insights = dict(kept)
        return {**metrics, "insights_found": found, "insights": len(self.insights)}

    def relevant_insights(self, query: str) -> list[str]:
        """The insights shown for ``query``: the best-voted that match it.

        Args:
            query: the question's text.
        """
        texts = sorted(self.insights, key=lambda t: (-self.insights[t], t))
        index = BM25()
        for t in texts:
            index.add(t)
        scores = index.scores(query)
        ranked = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
        return [texts[i] for i in ranked if scores[i] > 0][: self.k_insights]

    def context(self, observation: Observation) -> str:
        # the retrieved trajectories first, in the shared layout a base learns to read in pre-training
        # (tasks.prompts.memory_context); the insights after them, so they do not shift that layout
        """The retrieved trajectories, then the insights relevant to the question.

        Args:
            observation: the question.
        """
        experience = super().context(observation)
        insights = "\n".join(f"Insight: {t}" for t in self.relevant_insights(_query_of(observation)))
        return "\n\n".join(part for part in (experience, insights) if part)

    def memory_state(self) -> list[dict]:
        """The entries, then each insight with its votes."""
        return super().memory_state() + [{"insight": t, "votes": v} for t, v in sorted(self.insights.items())]

    def set_memory_state(self, state: list[dict]) -> None:
        """Replace the entries and the insights.

        Args:
            state: what :meth:`memory_state` returned.
        """
        self.memory = Memory(self.memory.embed)
        self.insights = {}
        for row in state:
            if "insight" in row:
                self.insights[row["insight"]] = int(row["votes"])
            else:
                self.memory.add(MemoryEntry(**row))


__all__ = ["EXTRACTORS", "ExpeLAgent", "calls"]
