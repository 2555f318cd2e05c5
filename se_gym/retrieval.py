"""Text retrieval shared by the memory agents and the experience loop: word tokens and Okapi BM25."""
from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


def words(text: str) -> list[str]:
    """The lower-cased identifier and number tokens of ``text``."""
    return [w.lower() for w in _WORD.findall(text)]


class BM25:
    """Okapi BM25 over a growing list of documents (k1 = 1.5, b = 0.75).

    Args:
        k1: how fast a term's weight saturates with its count in a document.
        b: how much a document's length scales its terms' weights (0: not at all).
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.docs: list[Counter] = []
        self.df: Counter = Counter()

    def add(self, text: str) -> None:
        """Add a document (its index is the number of documents before it).

        Args:
            text: the document.
        """
        tf = Counter(words(text))
        self.docs.append(tf)
        self.df.update(tf.keys())

    def scores(self, query: str) -> list[float]:
        """The BM25 score of ``query`` against every document, in the order they were added.

        Args:
            query: the query text.

        Returns:
            One score per document (empty when there are none).
        """
        n = len(self.docs)
        if not n:
            return []
        avg = sum(sum(d.values()) for d in self.docs) / n
        q = words(query)
        out = []
        for d in self.docs:
            length = sum(d.values())
            s = 0.0
            for w in q:
                f = d.get(w, 0)
                if not f:
                    continue
                idf = math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5))
                s += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / max(avg, 1e-9)))
            out.append(s)
        return out
