"""Rewrite NumPy's own docstrings into the docs of a minted library.

Every code-form mention of a catalogue function (``np.X``, ``numpy.linalg.X``, ``X(...)``,
```X``` in backticks, the names listed under "See Also", ``obj.X`` method references) becomes the
library's name, ``ndarray`` becomes the array type and ``numpy``/``np`` the package.  Prose words
that merely coincide with a function name ("the sum of") are left alone, as in SE-Bench's docs,
except the documented function's own name when it is not an ordinary English word.
"""
from __future__ import annotations

import functools
import re

from .catalogue import CATALOGUE, entry

# Function names that are also ordinary words; as prose they give nothing away.
ENGLISH = frozenset(
    """abs absolute maximum minimum degrees radians conjugate percentile quantile gradient histogram
    invert roots correlate convolve product all any array average block choose clip compress copy cross delete diagonal diff divide
    empty equal extract eye flip floor full identity imag inner insert interp less log max mean median
    min mod multiply negative norm ones outer pad partition place positive power product put real
    remainder repeat reshape resize roll round select shape sign size sort split square stack subtract
    sum take tile trace transpose unique var where""".split()
)
ARRAY_ATTRIBUTES = frozenset({"shape", "dtype", "size", "ndim", "T"})


@functools.lru_cache(maxsize=None)
def _short_to_keys() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for e in CATALOGUE:
        table.setdefault(e.short, []).append(e.key)
    # the names NumPy's own callables carry (np.abs is `absolute`, trapz's successor `trapezoid`)
    return table


def _lib_name(lib, short: str, prefer_linalg: bool = False) -> str | None:
    keys = _short_to_keys().get(short)
    if not keys:
        return None
    keys = sorted(keys, key=lambda k: k.startswith("linalg.") != prefer_linalg)
    return lib.qualified(keys[0])


def _section_spans(text: str) -> list[tuple[str, int, int]]:
    """(title, start, end) of numpydoc sections (a title line underlined with dashes)."""
    spans = []
    for m in re.finditer(r"^([A-Z][A-Za-z ]+)\n-{3,}\n", text, flags=re.M):
        spans.append((m.group(1).strip(), m.start(), m.end()))
    out = []
    for i, (title, start, body) in enumerate(spans):
        end = spans[i + 1][1] if i + 1 < len(spans) else len(text)
        out.append((title, body, end))
    return out


def rewrite_text(lib, text: str, own_key: str | None = None) -> str:
    """Apply the replacement rules to ``text`` (``own_key``: the documented function)."""
    pkg, arr = lib.package, lib.array_type

    def qualified_ref(m: re.Match) -> str:
        linalg, name = m.group(2), m.group(3)
        if name == "ndarray":
            return f"{pkg}.{arr}"
        found = _lib_name(lib, name, prefer_linalg=bool(linalg))
        if found:
            return found
        return f"{pkg}.{lib.linalg}.{name}" if linalg else f"{pkg}.{name}"

    # np.X / numpy.X / numpy.linalg.X / np.linalg.X
    text = re.sub(r"\b(numpy|np)\.(linalg\.)?([A-Za-z_]\w*)", qualified_ref, text)
    text = re.sub(r"\bfrom numpy import linalg\b", f"from {pkg} import {lib.linalg}", text)
    text = re.sub(r"\bimport (?:numpy|np)(?: as np)?\b", f"import {pkg}", text)
    text = re.sub(r"\b(?:numpy|np)\.linalg\b", f"{pkg}.{lib.linalg}", text)

    # Example output lines print arrays as array([...]): that is the array type's repr now.
    text = re.sub(r"(?m)^(\s*)array\(", rf"\1{arr}(", text)
    text = re.sub(r"(?<![\w.])ndarray(s?)\b", rf"{arr}\1", text)

    def bare(m: re.Match) -> str:
        name = m.group(2)
        found = _lib_name(lib, name)
        return m.group(1) + (found.rsplit(".", 1)[-1] if found and m.group(1) == "." else (found or name))

    # X( calls and obj.X method references; attribute names the array type keeps stay as they are
    text = re.sub(r"((?<![\w.])|(?<=\w)\.)([A-Za-z_]\w*)(?=\()", lambda m: bare(_Fake(m.group(1) or "", m.group(2))), text)
    text = re.sub(
        r"(?<=[\w)\]])(\.)([A-Za-z_]\w*)\b",
        lambda m: m.group(0) if m.group(2) in ARRAY_ATTRIBUTES else bare(_Fake(".", m.group(2))),
        text,
    )
    # `X` and ``X`` references
    def ticked(m: re.Match) -> str:
        found = _lib_name(lib, m.group(2))
        return f"{m.group(1)}{found or m.group(2)}{m.group(3)}"

    text = re.sub(r"(`{1,2})([A-Za-z_]\w*)(`{1,2})", ticked, text)

    # "See Also" entries: each listed name before ':' or in a comma list
    for title, start, end in reversed(_section_spans(text)):
        if title.lower() != "see also":
            continue
        body = text[start:end]

        def see_also_line(m: re.Match) -> str:
            names = re.sub(
                r"(?<![\w.])([A-Za-z_]\w*)(?![\w.])",
                lambda n: (_lib_name(lib, n.group(1)) or n.group(1)),
                m.group(1),
            )
            return names + m.group(2)

        body = re.sub(r"(?m)^((?:[\w.]+\s*,\s*)*[\w.]+)(\s*(?::.*)?)$", see_also_line, body)
        text = text[:start] + body + text[end:]

    if own_key is not None:
        e = entry(own_key)
        own_names = {e.short, getattr(e.target(), "__name__", e.short)}
        for name in own_names:
            if name not in ENGLISH and name.isidentifier():
                text = re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", lib.qualified(own_key).rsplit(".", 1)[-1], text)
    text = re.sub(r"\b(?:NumPy|numpy)\b|\bnp\b(?=\.)", pkg, text)
    return text


class _Fake:
    """A tiny stand-in for a match with groups (prefix, name)."""

    def __init__(self, prefix: str, name: str):
        self._g = (None, prefix, name)

    def group(self, i: int) -> str:
        return self._g[i]


_SCIPY_SECTION = re.compile(r"\n\*\*Array API Standard Support\*\*\n.*?(?=\n[A-Z][^\n]*\n-{3,}\n|\Z)", re.S)


def rewrite_numpy_doc(lib, key: str) -> str:
    """The doc of catalogue function ``key`` for ``lib``, from the installed NumPy's docstring."""
    import inspect

    target = entry(key).target()
    # The same text whatever the process imported and on every Python: cleandoc (3.13 dedents
    # docstrings when it compiles them; SciPy rewrites np.sinc's dedented), and without the section
    # SciPy appends to np.sinc's docstring in place when scipy.signal is imported
    doc = _SCIPY_SECTION.sub("", inspect.cleandoc(getattr(target, "__doc__", None) or ""))
    doc = doc or f"{entry(key).short}(...)\n\nNo documentation."
    return rewrite_text(lib, doc, own_key=key).strip("\n") + "\n"


def code_mentions(text: str, names) -> list[str]:
    """Code-form mentions of ``names`` left in ``text`` (used by tests and by validation)."""
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    pat = rf"\b(?:np|numpy)\.(?:linalg\.)?({alt})\b|(?<![\w.])({alt})\(|`({alt})`"
    return sorted({next(g for g in m.groups() if g) for m in re.finditer(pat, text)})
