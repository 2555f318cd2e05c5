"""Reading JSONL files with errors that name the file and line."""
from __future__ import annotations

import json
import os
from typing import Iterator


def iter_jsonl(path: str | os.PathLike, error: type[Exception] = ValueError, what: str = "") -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, object)`` for each non-blank line of ``path``.

    Every problem raises ``error`` with a one-line message: an unreadable file
    (``cannot read <what> <path>: ...``), a line that is not JSON (``<path>:<n>: not valid JSON``)
    or not an object (``<path>:<n>: expected a JSON object``).
    """
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read {what + ' ' if what else ''}{path}: {exc.strerror or exc}") from None
    with handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise error(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, row
