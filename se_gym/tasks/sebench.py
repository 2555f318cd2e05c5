"""Load the official SE-Bench tasks (local JSONL files, or the Hugging Face dataset).

Accepted ``path`` layouts: the repository's ``datasets/`` tree (``datasets/train/train.jsonl``,
``datasets/test/single_test.jsonl``, ``datasets/test/multiple_test.jsonl``,
``datasets/train/api_doc.jsonl``), a flat folder holding ``<split>.jsonl``, or one JSONL file.
Without a path the rows come from the hub dataset ``jintailin/SE-Bench`` (extra ``hf``).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from ..jsonl import iter_jsonl
from .record import Task, TaskError, TestCase

from ..choices import SPLITS  # one place for the split names
HF_DATASET = "jintailin/SE-Bench"
VERSION = "sebench-2602.04811"
_LAYOUT = {
    "train": ("datasets/train/train.jsonl", "train/train.jsonl", "train.jsonl"),
    "single_test": ("datasets/test/single_test.jsonl", "test/single_test.jsonl", "single_test.jsonl"),
    "multiple_test": ("datasets/test/multiple_test.jsonl", "test/multiple_test.jsonl", "multiple_test.jsonl"),
    "api_doc": ("datasets/train/api_doc.jsonl", "train/api_doc.jsonl", "api_doc.jsonl"),
}
_REQUIRED = ("query", "function_name", "test_cases")


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


def _function_key(name: str) -> str | None:
    from ..library.catalogue import entry

    for candidate in (name, "linalg." + name.rsplit(".", 1)[-1]):
        try:
            return entry(candidate).key
        except KeyError:
            continue
    return None


def _case(value: Any, where: str, fld: str) -> TestCase:
    if not isinstance(value, Mapping):
        raise TaskError(f"{where}: field {fld!r} must be an object with 'input' and 'output', got {type(value).__name__}")
    for part in ("input", "output"):
        if not isinstance(value.get(part), str):
            raise TaskError(f"{where}: field {fld!r} needs a string {part!r}")
    return TestCase(value["input"], value["output"])


def parse_row(
    row: Mapping[str, Any],
    split: str,
    index: int = 0,
    source: str = "sebench",
    version: str = VERSION,
    library: Any = None,
    where: str | None = None,
) -> Task:
    """One official row -> Task; raises TaskError naming ``where`` (file:line) and the field."""
    where = where or f"{split} row {index}"
    if not isinstance(row, Mapping):
        raise TaskError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for fld in _REQUIRED:
        if fld not in row:
            raise TaskError(f"{where}: missing field {fld!r}")
    if not isinstance(row["query"], str) or not row["query"].strip():
        raise TaskError(f"{where}: field 'query' must be a non-empty string")
    fn = row["function_name"]
    if not isinstance(fn, str) or not fn.strip().startswith("def ") or "(" not in fn:
        raise TaskError(f"{where}: field 'function_name' must look like 'def solve(x):', got {str(fn)[:60]!r}")
    cases_raw = row["test_cases"]
    if not isinstance(cases_raw, list) or not cases_raw:
        raise TaskError(f"{where}: field 'test_cases' must be a non-empty list")
    cases = tuple(_case(c, where, f"test_cases[{i}]") for i, c in enumerate(cases_raw))
    example = _case(row["example"], where, "example") if row.get("example") is not None else cases[0]
    refs = row.get("example_output") or []
    if isinstance(refs, str):
        refs = [refs]
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise TaskError(f"{where}: field 'example_output' must be a list of strings")
    reference = refs[0] if refs else ""
    names = row.get("selected_functions") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TaskError(f"{where}: field 'selected_functions' must be a list of strings")
    keys = [_function_key(n) for n in names]
    metadata: dict[str, Any] = {}
    unknown = [n for n, k in zip(names, keys) if k is None]
    if unknown:  # kept, and said: the row stays usable, only its function tags are partial
        metadata["unknown_functions"] = unknown
    for extra in ("right_exe_result", "1func_query_id", "task_index", "is_valid"):
        if extra in row:
            metadata[extra] = row[extra]
    ident = row.get("task_index", row.get("1func_query_id", index))
    library_solution = library.translate(reference) if library is not None and reference else ""
    n = len(keys)
    extra = row.get("se_gym")
    if isinstance(extra, Mapping):  # a row written by se-gym: restore what the format lacks
        try:
            return Task(
                id=extra["id"], split=extra["split"], source=extra["source"], query=row["query"],
                function_name=fn.strip(), test_cases=cases, example=example, functions=tuple(extra["functions"]),
                reference_solution=reference, library_solution=extra.get("library_solution") or library_solution,
                difficulty=extra.get("difficulty", "medium"), metadata=extra.get("metadata") or {},
                version=extra.get("version", version),
            )
        except (KeyError, TypeError) as exc:
            raise TaskError(f"{where}: field 'se_gym' is malformed ({exc})") from None
    return Task(
        id=f"sebench/{split}/{ident}",
        split=split,
        source=source,
        query=row["query"],
        function_name=fn.strip(),
        test_cases=cases,
        example=example,
        functions=tuple(k for k in keys if k is not None),
        reference_solution=reference,
        library_solution=library_solution,
        difficulty="easy" if n <= 1 else ("medium" if n <= 3 else "hard"),
        metadata=metadata,
        version=version,
    )


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
        print(f"se-gym: {source_name}: skipped {len(skipped)} row(s) marked is_valid=false", file=sys.stderr)
    return tasks


def load_sebench(
    split: str,
    path: str | os.PathLike | None = None,
    library: Any = None,
    include_invalid: bool = False,
) -> list[Task]:
    """Official tasks of ``split`` from local files, or from the hub when ``path`` is None.

    ``library`` (e.g. ``se_gym.library.official(api_doc)``) fills each task's
    ``library_solution`` with the translated NumPy reference.
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
    """Rows of ``api_doc.jsonl`` (original_name, curr_name, rewritten_doc, func_mapping as a dict)."""
    if path is None:
        raise TaskError("load_api_doc needs a path (the hub dataset does not ship api_doc.jsonl)")
    file = resolve_file("api_doc", path)
    out = []
    for lineno, row in _read_jsonl(file):
        where = f"{file}:{lineno}"
        if not isinstance(row, dict):
            raise TaskError(f"{where}: expected a JSON object")
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
