"""The task buffer: accepted self-proposed tasks, newest first, capped, exportable as SE-Bench JSONL."""
from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..storage import write_text_atomic

DEFAULT_CAP = 16_384  # Absolute Zero's cap


class TaskBuffer:
    """Tasks in the order they were accepted (newest last internally, newest first when read).

    Args:
        tasks: the first tasks (``se_gym.tasks.Task``), oldest first.
        cap: the most tasks held; beyond it the oldest are dropped (Absolute Zero's 16,384).
    """

    def __init__(self, tasks: Iterable[Any] = (), cap: int = DEFAULT_CAP):
        if cap < 1:
            raise ValueError(f"buffer cap must be >= 1, got {cap}")
        self.cap = cap
        self._tasks: list[Any] = []
        self._ids: set[str] = set()
        self.add(tasks)

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._ids

    def add(self, tasks: Iterable[Any]) -> int:
        """Add tasks not already held (by id); drop the oldest beyond the cap; return how many were added.

        Args:
            tasks: the tasks to add, oldest first.
        """
        n = 0
        for t in tasks:
            if t.id in self._ids:
                continue
            self._tasks.append(t)
            self._ids.add(t.id)
            n += 1
        while len(self._tasks) > self.cap:
            old = self._tasks.pop(0)
            self._ids.discard(old.id)
        return n

    def tasks(self) -> list[Any]:
        """Newest first."""
        return self._tasks[::-1]

    def sample(self, k: int, rng: random.Random, exclude: Iterable[str] = ()) -> list[Any]:
        """Up to ``k`` tasks drawn without replacement.

        Args:
            k: how many.
            rng: the draw's random source (seeded by the caller: a rerun draws the same).
            exclude: ids never drawn (e.g. the validation split).
        """
        ex = set(exclude)
        pool = [t for t in self._tasks if t.id not in ex]
        return rng.sample(pool, min(k, len(pool)))

    def references(self, k: int, rng: random.Random, functions: Sequence[str] = ()) -> list[Any]:
        """Up to ``k`` tasks to show the proposer: those about the given functions first, then any.

        Args:
            k: how many.
            rng: the draw's random source.
            functions: catalogue keys the proposal is about.
        """
        fs = set(functions)
        near = [t for t in self._tasks if fs & set(t.functions)]
        picked = rng.sample(near, min(k, len(near)))
        if len(picked) < k:
            picked += self.sample(k - len(picked), rng, exclude=[t.id for t in picked])
        return picked

    def top_up(self, fresh: Sequence[Any], minimum: int, rng: random.Random, exclude: Iterable[str] = ()) -> tuple[list[Any], int]:
        """``fresh`` plus older buffer tasks (none of ``exclude``) until there are ``minimum`` (so
        training never runs dry); returns the tasks and how many came from the buffer.

        Args:
            fresh: the round's new tasks.
            minimum: how many tasks training wants at least.
            rng: the draw's random source.
            exclude: ids never added (e.g. the validation split).
        """
        need = max(0, minimum - len(fresh))
        extra = self.sample(need, rng, exclude=[t.id for t in fresh] + list(exclude)) if need else []
        return list(fresh) + extra, len(extra)

    # -- files ----------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """se-gym's own record (every field, oldest first), written atomically.

        Args:
            path: the JSONL file.
        """
        write_text_atomic(path, "".join(json.dumps(t.to_json(), ensure_ascii=False) + "\n" for t in self._tasks))

    @classmethod
    def load(cls, path: str | os.PathLike, cap: int = DEFAULT_CAP) -> "TaskBuffer":
        """A buffer saved by :meth:`save` (empty when ``path`` does not exist).

        Args:
            path: the JSONL file.
            cap: the loaded buffer's cap.
        """
        from ..tasks.record import Task

        p = Path(path)
        if not p.is_file():
            return cls(cap=cap)
        return cls((Task.from_json(json.loads(ln)) for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()), cap=cap)

    def export(self, out_dir: str | os.PathLike, library: Any = None, split: str = "train") -> Path:
        """The buffer as an SE-Bench suite folder (``datasets/train/train.jsonl`` in the official row
        layout, plus ``api_doc.jsonl`` when ``library`` is given), loadable by
        :func:`se_gym.tasks.load_sebench` and judged like any other suite.

        Args:
            out_dir: the suite folder (written atomically).
            library: the tasks' library, for its ``api_doc.jsonl`` (None: no docs).
            split: the official split the rows are written as.
        """
        from ..storage import atomic_dir
        from ..tasks.builtin import API_DOC_FILE, OFFICIAL_FILES, api_doc_rows

        out = Path(out_dir)
        with atomic_dir(out) as tmp:
            f = tmp / OFFICIAL_FILES[split]
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("".join(json.dumps(t.to_official_row(), ensure_ascii=False) + "\n" for t in self.tasks()), encoding="utf-8")
            if library is not None:
                d = tmp / API_DOC_FILE
                d.parent.mkdir(parents=True, exist_ok=True)
                d.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in api_doc_rows(library)), encoding="utf-8")
        return out
