"""A Gymnasium space for free text (prompts and model answers)."""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

# What ``sample()`` draws from: printable ASCII plus whitespace, code punctuation and a few non-ASCII
# letters, so sampled actions look like (bad) answers.  ``contains`` accepts any Unicode text.
_SAMPLE_CHARS = tuple(chr(c) for c in range(32, 127)) + ("\n", "\t", "é", "λ", "→", "中")


class UnicodeText(spaces.Space[str]):
    """Any ``str`` of at most ``max_length`` characters.

    Gymnasium's ``spaces.Text`` only accepts characters from a fixed charset (alphanumerics by
    default), which rejects source code; prompts and answers need all of Unicode.
    """

    def __init__(self, max_length: int, min_length: int = 0, seed: int | np.random.Generator | None = None):
        if not (isinstance(max_length, int) and max_length > 0 and 0 <= min_length <= max_length):
            raise ValueError(f"UnicodeText needs 0 <= min_length <= max_length and max_length > 0, got {min_length}, {max_length}")
        self.max_length = max_length
        self.min_length = min_length
        super().__init__(dtype=str, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise NotImplementedError("UnicodeText.sample takes no mask or probability")
        hi = min(self.max_length, self.min_length + 64)
        n = int(self.np_random.integers(self.min_length, hi + 1))
        idx = self.np_random.integers(0, len(_SAMPLE_CHARS), size=n)
        return "".join(_SAMPLE_CHARS[i] for i in idx)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)

    def to_jsonable(self, sample_n):
        return list(sample_n)

    def from_jsonable(self, sample_n):
        return list(sample_n)
