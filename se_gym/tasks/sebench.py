"""Load the official SE-Bench tasks (local JSONL files, or the Hugging Face dataset).

Accepted ``path`` layouts: the repository's ``datasets/`` tree (``datasets/train/train.jsonl``,
``datasets/test/single_test.jsonl``, ``datasets/test/multiple_test.jsonl``,
``datasets/train/api_doc.jsonl``), a flat folder holding ``<split>.jsonl``, or one JSONL file.
Without a path the rows come from the hub dataset ``jintailin/SE-Bench`` (extra ``hf``).
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from ..choices import SPLITS  # one place for the split names
from ..jsonl import iter_jsonl
from .record import VERSION, Task, TaskError, parse_row  # noqa: F401  (parse_row, VERSION: this module's names too)

log = logging.getLogger(__name__)
HF_DATASET = "jintailin/SE-Bench"
_LAYOUT = {
    "train": ("datasets/train/train.jsonl", "train/train.jsonl", "train.jsonl"),
    "single_test": ("datasets/test/single_test.jsonl", "test/single_test.jsonl", "single_test.jsonl"),
    "multiple_test": ("datasets/test/multiple_test.jsonl", "test/multiple_test.jsonl", "multiple_test.jsonl"),
    "api_doc": ("datasets/train/api_doc.jsonl", "train/api_doc.jsonl", "api_doc.jsonl"),
}


@dataclass(frozen=True)
class LoadReport:
    """What a load read: rows kept, rows skipped on purpose (``is_valid: false``) and why."""

    source: str
    kept: int
    skipped: int
    reasons: tuple[str, ...] = ()


_last_report: LoadReport | None = None


def last_report() -> LoadReport | None:
    """The report of the most recent :func:`load_sebench` call in this process."""
    return _last_report


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    return iter_jsonl(path, TaskError)


def resolve_file(split: str, path: str | os.PathLike) -> Path:
    """The JSONL file of ``split`` under ``path`` (a file is taken as is)."""
    if split not in _LAYOUT:
        raise TaskError(f"split must be one of {SPLITS} (or 'api_doc'), got {split!r}")
    root = Path(path)
    if root.is_file():
        return root
    if not root.exists():
        raise TaskError(f"no such file or directory: {root}")
    for rel in _LAYOUT[split]:
        if (root / rel).is_file():
            return root / rel
    raise TaskError(f"{root} holds no {split} file (looked for {', '.join(_LAYOUT[split])})")


def tasks_from_rows(
    rows: Iterable[tuple[str, dict]],
    split: str,
    library: Any = None,
    include_invalid: bool = False,
    source_name: str = "",
) -> list[Task]:
    """Parse ``(where, row)`` pairs; rows with ``is_valid: false`` are skipped and reported."""
    global _last_report
    tasks: list[Task] = []
    skipped: list[str] = []
    for index, (where, row) in enumerate(rows):
        if isinstance(row, Mapping) and row.get("is_valid") is False and not include_invalid:
            skipped.append(f"{where}: is_valid is false")
            continue
        tasks.append(parse_row(row, split=split, index=index, library=library, where=where))
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):  # ids must be unique: fall back to the position on clashes
        if t.id in seen:
            from dataclasses import replace

            tasks[i] = replace(t, id=f"{t.id}#{i}")
        seen[t.id] = i
    _last_report = LoadReport(source_name, len(tasks), len(skipped), tuple(skipped))
    if skipped:
        log.info("se-gym: %s: skipped %d row(s) marked is_valid=false", source_name, len(skipped))
    return tasks


def load_sebench(
    split: str,
    path: str | os.PathLike | None = None,
    library: Any = None,
    include_invalid: bool = False,
) -> list[Task]:
    """Official tasks of ``split`` from local files, or from the hub when ``path`` is None.

    Args:
        split: ``train``, ``single_test`` or ``multiple_test``.
        path: a folder of the official layout or one JSONL file (None: the Hugging Face dataset).
        library: fills each task's ``library_solution`` with the translated NumPy reference (e.g.
            ``se_gym.library.official(api_doc)``).
        include_invalid: keep the rows marked ``is_valid: false``.
    """
    if split not in SPLITS:
        raise TaskError(f"split must be one of {SPLITS}, got {split!r}")
    if path is None:
        return _load_hub(split, library, include_invalid)
    file = resolve_file(split, path)
    rows = ((f"{file}:{lineno}", row) for lineno, row in _read_jsonl(file))
    return tasks_from_rows(rows, split, library, include_invalid, str(file))


def _load_hub(split: str, library: Any, include_invalid: bool, data_files: str | None = None) -> list[Task]:
    try:
        import datasets  # heavy and optional: the 'hf' extra
    except ImportError:
        raise TaskError("loading SE-Bench from the hub needs the 'hf' extra (pip install 'se-gym[hf]'), or pass a local path") from None
    if data_files is not None:  # the same code path on local files (used by tests)
        ds = datasets.load_dataset("json", data_files=data_files, split="train")
        name = data_files
    else:
        ds = datasets.load_dataset(HF_DATASET, split, split="train")
        name = f"hf:{HF_DATASET}/{split}"
    rows = ((f"{name} row {i}", dict(row)) for i, row in enumerate(ds))
    return tasks_from_rows(rows, split, library, include_invalid, name)


def load_api_doc(path: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """Rows of ``api_doc.jsonl`` (original_name, curr_name, rewritten_doc, func_mapping as a dict).

    Args:
        path: the file, or a folder holding it.
    """
    if path is None:
        raise TaskError("load_api_doc needs a path (the hub dataset does not ship api_doc.jsonl)")
    file = resolve_file("api_doc", path)
    out = []
    for lineno, row in _read_jsonl(file):
        where = f"{file}:{lineno}"  # (iter_jsonl has checked that the row is an object)
        for fld in ("original_name", "curr_name", "func_mapping"):
            if fld not in row:
                raise TaskError(f"{where}: missing field {fld!r}")
        fm = row["func_mapping"]
        if isinstance(fm, str):
            try:
                fm = json.loads(fm)
            except json.JSONDecodeError as exc:
                raise TaskError(f"{where}: field 'func_mapping' is not JSON ({exc.msg})") from None
        if not isinstance(fm, dict):
            raise TaskError(f"{where}: field 'func_mapping' must be an object")
        out.append({**row, "func_mapping": fm})
    return out
