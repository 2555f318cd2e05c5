"""The built-in procedural suite: SE-Bench-shaped tasks for any minted library, offline.

``build_suite(seed)`` makes three splits -- ``train`` (single-function), ``single_test`` (at
least one task per catalogue function, told with other stories than train) and
``multiple_test`` (pipelines of three or more functions) -- deterministically from the seed.
Every task is checked before it ships: its library solution must reproduce the expected
outputs under both library profiles (and, when ``se_gym.judge`` is present, get reward 1 from
the judge while the NumPy reference and a wrong answer do not); a task that fails is drawn
again with the next attempt number.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from ...choices import SPLITS  # noqa: E402  (one place for the split names)
from ...storage import atomic_dir
from ..record import Task, TaskError
from .common import BadDraw, Spec
from .generate import VERSION, GenerationError, make_task

log = logging.getLogger(__name__)
DEFAULT_SIZES: Mapping[str, int] = MappingProxyType({"train": 718, "single_test": 278, "multiple_test": 440})
FAMILIES = ("creation", "shape", "elementwise", "bitwise", "logic", "reduction", "search_sort", "products", "strings", "linalg")
MAX_ATTEMPTS = 12
OFFICIAL_FILES = {
    "train": "datasets/train/train.jsonl",
    "single_test": "datasets/test/single_test.jsonl",
    "multiple_test": "datasets/test/multiple_test.jsonl",
}
API_DOC_FILE = "datasets/train/api_doc.jsonl"
MANIFEST_FILE = "se_gym_suite.json"

__all__ = ["Suite", "build_suite", "builtin_tasks", "load_suite", "redraw", "specs_by_function", "DEFAULT_SIZES", "SPLITS", "VERSION"]


def specs_by_function() -> dict[str, list[Spec]]:
    """Catalogue key -> the single-function specs that ask about it (family tables)."""
    out: dict[str, list[Spec]] = {}
    for fam in FAMILIES:
        for spec in importlib.import_module(f"{__name__}.{fam}").SPECS:
            out.setdefault(spec.keys[0], []).append(spec)
    return out


@dataclass(frozen=True)
class Suite:
    """Split name -> tasks, the library they are written for, and a manifest (counts, hashes).

    Attributes:
        splits: split -> its tasks.
        library: the library they are written for.
        manifest: counts and hashes (what :meth:`write` records).
    """

    splits: Mapping[str, tuple[Task, ...]]
    library: Any
    manifest: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, split: str) -> tuple[Task, ...]:
        return self.splits[split]

    def write(self, out_dir: str | os.PathLike, docs: bool = True) -> Path:
        """Write the official JSONL layout (plus ``api_doc.jsonl`` and a manifest) atomically.

        Args:
            out_dir: the folder.
            docs: also write the library's docs (``api_doc.jsonl``).

        Returns:
            The folder written.
        """
        out = Path(out_dir)
        if out.exists() and any(out.iterdir()) and not (out / MANIFEST_FILE).exists():
            raise TaskError(f"output directory {out} is not empty and holds no se-gym suite")
        with atomic_dir(out) as tmp:
            for split, tasks in self.splits.items():
                path = tmp / OFFICIAL_FILES[split]
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    for t in tasks:
                        f.write(json.dumps(t.to_official_row(), ensure_ascii=False) + "\n")
            if docs:
                path = tmp / API_DOC_FILE
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    for row in api_doc_rows(self.library):
                        f.write(json.dumps(row, ensure_ascii=False) + "\n")
            (tmp / MANIFEST_FILE).write_text(json.dumps(dict(self.manifest), indent=1, sort_keys=True), encoding="utf-8")
        return out


def api_doc_rows(library: Any) -> Iterable[dict[str, Any]]:
    """The library's docs in SE-Bench's ``api_doc.jsonl`` row format."""
    from ...library.catalogue import entry

    for key in library.names:
        e = entry(key)
        yield {
            "original_name": e.short,
            "curr_name": library.names[key],
            "rewritten_doc": library.doc(key),
            "func_mapping": json.dumps({e.numpy_path: library.qualified(key)}),
        }


def load_suite(path: str | os.PathLike, library: Any = None) -> Suite:
    """Read a suite written by :meth:`Suite.write` (or any official-layout folder).

    Args:
        path: the folder.
        library: the library (None: the one its manifest names, when it was minted; else none).
    """
    from ...library import from_spec
    from ..sebench import load_sebench, resolve_file

    root = Path(path)
    manifest: dict[str, Any] = {}
    if (root / MANIFEST_FILE).exists():
        manifest = json.loads((root / MANIFEST_FILE).read_text(encoding="utf-8"))
    if library is None:
        lib_json = manifest.get("library") or {}
        library = from_spec(int(lib_json["source"].split(":")[1])) if str(lib_json.get("source", "")).startswith("seed:") else None
    splits = {}
    for split in SPLITS:
        try:
            resolve_file(split, root)
        except TaskError:
            continue
        splits[split] = tuple(load_sebench(split, root, library=library))
    return Suite(MappingProxyType(splits), library, MappingProxyType(manifest))


# -- generation -----------------------------------------------------------------------------------


def _resolve_sizes(sizes: Mapping[str, int] | None) -> dict[str, int]:
    out = dict(DEFAULT_SIZES)
    for k, v in (sizes or {}).items():
        if k not in SPLITS:
            raise TaskError(f"sizes: unknown split {k!r} (choose from {', '.join(SPLITS)})")
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise TaskError(f"sizes: {k} must be a non-negative int, got {v!r}")
        out[k] = v
    return out


def _resolve_functions(functions: Sequence[str] | None) -> tuple[str, ...]:
    from ...library.catalogue import KEYS, entry

    if functions is None:
        return KEYS
    keys = []
    for name in functions:
        try:
            keys.append(entry(name).key)
        except KeyError:
            try:
                keys.append(entry("linalg." + name).key)
            except KeyError:
                raise TaskError(f"functions: {name!r} is not in the catalogue") from None
    if not keys:
        raise TaskError("functions: the list is empty")
    return tuple(dict.fromkeys(keys))


def _draft(split: str, seed: int, index: int, library: Any, keys: Sequence[str], specs: Mapping[str, list[Spec]], first_attempt: int) -> Task:
    """The task at ``index``, from the first attempt (>= first_attempt) that generates cleanly."""
    from ...library.catalogue import entry
    from .multi import pipeline_spec

    for attempt in range(first_attempt, MAX_ATTEMPTS):
        rng = random.Random(f"{seed}:{split}:{index}:{attempt}:spec")
        if split == "multiple_test":
            spec, family = pipeline_spec(rng), "multi"
        else:
            key = keys[index % len(keys)]
            spec, family = rng.choice(specs[key]), entry(key).group
        try:
            return make_task(spec, split=split, seed=seed, index=index, library=library, attempt=attempt, family=family)
        except (BadDraw, GenerationError):
            continue
    raise GenerationError(f"{split} task {index}: no attempt out of {MAX_ATTEMPTS} produced a valid task")


def redraw(task: Task, library: Any = None) -> Task:
    """Draw a built-in task again from what it records (seed, split, index, attempt), from scratch:
    the same bytes in every process when generation is deterministic (``se-gym validate`` compares).

    Args:
        task: a task of the default built-in suite (``builtin/sSEED/SPLIT/INDEX``, ``metadata["attempt"]``).
        library: the library to write its solution for (a Library or spec; None: ``mint(SEED)``).

    Returns:
        The task as the generator draws it now.

    Raises:
        TaskError: ``task`` is not a built-in task.
    """
    import re

    from ...library import from_spec

    m = re.fullmatch(r"builtin/s(\d+)/(\w+)/(\d+)", task.id)
    if m is None or "attempt" not in task.metadata:
        raise TaskError(f"task {task.id!r} is not a built-in task (no seed, split, index and attempt to draw it from)")
    seed, split, index = int(m.group(1)), m.group(2), int(m.group(3))
    library = from_spec(seed if library is None else library)
    if not _TABLES:
        _TABLES.append((_resolve_functions(None), specs_by_function()))
    keys, specs = _TABLES[0]
    return _draft(split, seed, index, library, keys, specs, int(task.metadata["attempt"]))


_TABLES: list = []  # (catalogue keys, specs by function) of redraw, made once


def _generate_split(split, seed, library, size, keys, specs, validate, progress) -> tuple[tuple[Task, ...], dict]:
    from .validate import check_in_process, check_with_judge

    bar = _bar(size, f"{split}", progress)
    tasks = []
    for index in range(size):
        tasks.append(_draft(split, seed, index, library, keys, specs, 0))
        bar.update(1)
    bar.close()
    stats = {"regenerated": 0, "judge": False}
    checks = []
    if validate:
        checks.append(check_in_process)
        if validate != "inprocess":  # the judge is part of the package: never silently downgraded
            checks.append(check_with_judge)
            stats["judge"] = True
    for check in checks:
        if progress and check is check_with_judge:
            log.info("%s: validating %d tasks through the judge (strict and sebench)...", split, len(tasks))
        pending = list(range(len(tasks)))
        while pending:
            failures = check([tasks[i] for i in pending], library)
            pending = [i for i in pending if tasks[i].id in failures]
            for i in pending:  # draw again, from the next attempt on
                nxt = tasks[i].metadata["attempt"] + 1
                tasks[i] = _draft(split, seed, i, library, keys, specs, nxt)
                stats["regenerated"] += 1
    return tuple(tasks), stats


def _bar(total: int, desc: str, enabled: bool):
    from ...progress import bar

    return bar(total=total, desc=f"drafting {desc}", unit="task", disable=not enabled, leave=False)


def build_suite(
    seed: int = 0,
    library: Any = None,
    sizes: Mapping[str, int] | None = None,
    functions: Sequence[str] | None = None,
    progress: bool = True,
    validate: bool | str = True,
) -> Suite:
    """Generate the three splits for ``library`` (default: ``mint(seed)``).

    Args:
        seed: the library's seed (and the draw's).
        library: the library (None: ``mint(seed)``).
        sizes: tasks per split (None: the defaults).
        functions: restrict the single-function splits to these catalogue keys (the pipelines of
            ``multiple_test`` are not restricted).
        progress: show progress.
        validate: True (both library profiles in this process, then the judge: the library solution
            must pass under ``strict`` and ``sebench``, the NumPy reference and a wrong answer must fail;
            a task that fails is drawn again), ``"inprocess"`` (only the first check, for quick
            experiments), or False.
    """
    from ...library import from_spec

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise TaskError(f"seed must be a non-negative int, got {seed!r}")
    library = from_spec(seed if library is None else library)
    sizes_ = _resolve_sizes(sizes)
    keys = _resolve_functions(functions)
    specs = specs_by_function()
    splits: dict[str, tuple[Task, ...]] = {}
    stats: dict[str, Any] = {}
    for split in SPLITS:
        splits[split], stats[split] = _generate_split(split, seed, library, sizes_[split], keys, specs, validate, progress)
    covered = sorted({k for t in splits["train"] + splits["single_test"] for k in t.functions[:1]})
    manifest = {
        "version": VERSION,
        "seed": seed,
        "library": library.to_json(),
        "sizes": sizes_,
        "counts": {s: len(ts) for s, ts in splits.items()},
        "functions_requested": len(keys),
        "functions_covered": len(covered),
        "validation": {"enabled": bool(validate), "stats": stats},
        "hashes": {s: hashlib.sha256("".join(t.hash for t in ts).encode()).hexdigest()[:16] for s, ts in splits.items()},
    }
    return Suite(MappingProxyType(splits), library, MappingProxyType(manifest))


def _cache_dir(seed: int, library: Any, sizes: Mapping[str, int], keys: Sequence[str], level: str) -> Path:
    from ...library.writer import cache_root

    blob = json.dumps([VERSION, seed, library.id, sorted(sizes.items()), list(keys), level])
    digest = hashlib.sha256(blob.encode()).hexdigest()[:12]
    return cache_root() / "tasks" / f"{VERSION}-seed{seed}-{library.id}-{digest}"


def builtin_tasks(
    split: str,
    seed: int = 0,
    library: Any = None,
    sizes: Mapping[str, int] | None = None,
    functions: Sequence[str] | None = None,
    progress: bool = False,
    validate: bool | str = True,
    cache: bool = True,
) -> list[Task]:
    """One split of the built-in suite, built once and then read from the se-gym cache.

    The first build validates every task through the judge (about two minutes for the default
    sizes on two cores; later calls load the cache in well under a second).

    Args:
        split: ``train``, ``single_test`` or ``multiple_test``.
        seed: the library's seed.
        library: the library (None: ``mint(seed)``).
        sizes: tasks per split (None: the defaults).
        functions: restrict the single-function splits to these catalogue keys (the pipelines of
            ``multiple_test`` are not restricted).
        progress: show progress.
        validate: True (both library profiles in this process, then the judge: the library solution
            must pass under ``strict`` and ``sebench``, the NumPy reference and a wrong answer must fail;
            a task that fails is drawn again), ``"inprocess"`` (only the first check, for quick
            experiments), or False.
        cache: read and write the se-gym cache.
    """
    from ...library import from_spec

    if split not in SPLITS:
        raise TaskError(f"split must be one of {SPLITS}, got {split!r}")
    library = from_spec(seed if library is None else library)
    sizes_ = _resolve_sizes(sizes)
    keys = _resolve_functions(functions)
    level = "none" if not validate else ("inprocess" if validate == "inprocess" else "judge")
    target = _cache_dir(seed, library, sizes_, keys, level)
    if cache and (target / MANIFEST_FILE).exists():
        from ..sebench import load_sebench

        return load_sebench(split, target, library=library)
    if progress:  # the first gym.make / rollout spends its time here: say so
        where = f"; cached in {target} for next time" if cache else ""
        log.info("se-gym: building the built-in task suite (seed %s, library %s, validated through the judge "
                 "when available), first time only%s", seed, library.id, where)
    suite = build_suite(seed, library, sizes_, functions, progress, validate)
    if cache:
        try:
            suite.write(target, docs=False)
        except OSError:  # a read-only cache is not fatal: the suite is in memory
            pass
    return list(suite[split])
