"""Deterministic, pronounceable identifiers for minted libraries.

Names come from SHA-256 of ``(seed, key, attempt)`` rather than from ``random.Random``: the result
is the same on every machine and Python version, and a name that has to be rejected (a keyword,
a builtin, a NumPy name, a clash) only changes the name of that one function.
"""
from __future__ import annotations

import builtins
import hashlib
import keyword

ONSETS = "bcdfghjklmnpqrstvwxyz"
VOWELS = "aeiou"
CODAS = "bcdfgjklmnpqrstvwxz"

# Names a minted identifier must never take.  Kept as a fixed list (plus keywords and builtins)
# so that a NumPy upgrade cannot silently rename a library; NumPy's own names are checked too.
_RESERVED = frozenset(
    """np numpy linalg array ndarray zwc rfx math sys os solve main test tests self cls int float
    bool complex list dict tuple set str bytes none true false""".split()
)


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()


def candidate(seed: int, key: str, attempt: int, syllables: tuple[int, int] = (2, 3)) -> str:
    """The ``attempt``-th candidate identifier for ``key`` under ``seed`` (CV syllables, maybe a coda)."""
    d = _digest("se-gym-name", seed, key, attempt)
    lo, hi = syllables
    n = lo + d[0] % (hi - lo + 1)
    out = []
    for i in range(n):
        out.append(ONSETS[d[1 + 2 * i] % len(ONSETS)])
        out.append(VOWELS[d[2 + 2 * i] % len(VOWELS)])
    if d[20] % 2:
        out.append(CODAS[d[21] % len(CODAS)])
    return "".join(out)


def forbidden_names() -> frozenset[str]:
    """Keywords, builtins, NumPy's public names and a fixed reserved list."""
    names = set(_RESERVED) | set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
    try:
        import numpy

        names |= set(dir(numpy)) | set(dir(numpy.linalg))
    except ImportError:  # pragma: no cover - numpy is a core dependency
        pass
    return frozenset(n.lower() for n in names)


def allowed(name: str, taken: set[str], forbidden: frozenset[str]) -> bool:
    return name.isidentifier() and name not in taken and name.lower() not in forbidden
