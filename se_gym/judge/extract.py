"""Getting the code out of a model's answer, and its entry function."""
from __future__ import annotations

import re

# The official rule: the LAST block that opens with exactly "```python" and a newline and is
# closed by "```".  Consequences, kept on purpose for parity: "```py", "```Python" and
# "```python3" blocks are not code; an unclosed fence is not a block; a "```" inside the code
# (e.g. in a string) ends the block early.
_BLOCK = re.compile(r"```python\n([\s\S]*?)```")
_THINK_END = "</think>"
_ENTRY = re.compile(r"def\s+([a-zA-Z_]\w*)\s*\(")


def fenced(code: str) -> str:
    """``code`` as an answer the judge reads: one python block (what :func:`extract_code` takes back).

    Args:
        code: the program (its surrounding blank lines and spaces are dropped).
    """
    return f"```python\n{code.strip()}\n```"


def strip_thinking(response: str) -> str:
    """The visible answer of a reasoning model: the text after the last ``</think>``.

    An unclosed ``<think>`` (the model ran out of tokens while thinking) leaves no answer."""
    if _THINK_END in response:
        return response.rsplit(_THINK_END, 1)[1]
    if "<think>" in response:
        return ""
    return response


def extract_code(response: str, strip_think: bool = True) -> str | None:
    """The last fenced python block of ``response`` (its text up to, not including, the
    closing fence), or ``None`` when there is none.

    Args:
        response: the model's answer.
        strip_think: leave out a ``<think>...</think>`` section first.
    """
    if not isinstance(response, str):
        return None
    if strip_think:
        response = strip_thinking(response)
    blocks = _BLOCK.findall(response)
    return blocks[-1] if blocks else None


def entry_function(code: str) -> str:
    """The official entry point: the first ``def NAME(`` in the code ("" when none)."""
    m = _ENTRY.search(code)
    return m.group(1) if m else ""


def function_name_of(signature: str | None) -> str | None:
    """``"def solve(x1, x2):"`` or ``"solve"`` -> ``"solve"``; None stays None."""
    if not signature:
        return None
    m = _ENTRY.search(signature)
    if m:
        return m.group(1)
    name = signature.strip()
    return name if name.isidentifier() else None
