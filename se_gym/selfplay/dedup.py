"""Near-duplicate detection of tasks: normalised question plus test inputs.

Two tasks are near-duplicates when their questions are equal after normalisation (case, numbers,
punctuation and spacing ignored) and their test inputs overlap by at least ``threshold``
(Jaccard over inputs with spacing removed).  A proposer that rewords nothing and changes one input
is repeating itself; the same question on other inputs is a new task.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

_NUM = re.compile(r"[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?")
_NON_WORD = re.compile(r"[^a-z0-9#]+")


def normalize_question(text: str) -> str:
    """``text`` lower-cased, every number as ``#``, punctuation and spacing folded to single spaces.

    Args:
        text: a task's question.
    """
    t = _NUM.sub("#", text.lower())
    return " ".join(_NON_WORD.sub(" ", t).split())


def normalize_inputs(inputs: Iterable[str]) -> frozenset[str]:
    return frozenset("".join(s.split()) for s in inputs)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


class DedupIndex:
    """Tasks seen so far, looked up by normalised question.

    Args:
        threshold: the input overlap (Jaccard, in (0, 1]) from which the same question is a near-duplicate.
    """

    def __init__(self, threshold: float = 0.5):
        if not 0 < threshold <= 1:
            raise ValueError(f"dedup threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self._by_q: dict[str, list[tuple[int, frozenset[str]]]] = {}
        self.size = 0

    def find(self, question: str, inputs: Sequence[str]) -> int | None:
        """The number (order of :meth:`add`) of a near-duplicate already in the index, or None.

        Args:
            question: the task's question.
            inputs: its test inputs.
        """
        ins = normalize_inputs(inputs)
        for number, other in self._by_q.get(normalize_question(question), ()):
            if jaccard(ins, other) >= self.threshold:
                return number
        return None

    def add(self, question: str, inputs: Sequence[str]) -> int:
        """Index a task; returns its number.

        Args:
            question: the task's question.
            inputs: its test inputs.
        """
        self._by_q.setdefault(normalize_question(question), []).append((self.size, normalize_inputs(inputs)))
        self.size += 1
        return self.size - 1
