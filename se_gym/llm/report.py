"""Summaries of rollout files: accuracy, unbiased pass@k, status and error-type counts.

Reads the JSONL rows written by :mod:`se_gym.llm.rollout` (one row per sample, with the verdict
fields flat in the row).  Samples whose verdict says ``infrastructure: true`` (the sandbox failed,
not the model) are left out of accuracy and pass@k and counted on their own.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..accuracy import Tally, pass_at_k

__all__ = [
    "GroupSummary",
    "pass_at_k",
    "read_rows",
    "row_task_id",
    "summarize",
    "to_markdown",
    "to_json",
    "plot_error_types",
]


def read_rows(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) for every row; a truncated last line (a killed writer) is skipped.

    Args:
        path: a rollout JSONL file.
    """
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            if number == len(lines):  # only the unterminated last line may be cut short
                continue
            raise ValueError(f"{path}:{number}: not a JSON row ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: a row must be a JSON object")
        yield number, row


def row_task_id(row: Mapping[str, Any]) -> str:
    """The task a row answers: ``task_id``, else the se_gym id, else a hash of the query.

    Args:
        row: a rollout row.
    """
    if row.get("task_id"):
        return str(row["task_id"])
    extra = row.get("se_gym")
    if isinstance(extra, Mapping) and extra.get("id"):
        return str(extra["id"])
    if "1func_query_id" in row:
        return f"sebench:{row['1func_query_id']}"
    import hashlib

    return "query:" + hashlib.sha256(str(row.get("query", "")).encode()).hexdigest()[:12]


VERDICT_FIELDS = ("reward", "status", "error_type", "infrastructure")


def verdict_of(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verdict fields of a row, wherever the producer put them: at the top level
    (``se-gym rollout``) or nested under ``judge`` (``se-gym judge``, which keeps the input row and
    adds its verdict; a nested verdict is the newer one, so it wins).  None: the row is unjudged."""
    nested = row.get("judge")
    if isinstance(nested, Mapping) and ("reward" in nested or nested.get("infrastructure")):
        return {k: nested.get(k) for k in VERDICT_FIELDS}
    if "reward" in row or row.get("infrastructure"):
        return {k: row.get(k) for k in VERDICT_FIELDS}
    return None


@dataclass
class GroupSummary:
    """One line of the table: the samples of one (file, split, book, model).

    Attributes:
        file: the rollout file.
        split: the split.
        book: the book.
        model: the model.
        tally: the samples' rewards (:class:`se_gym.accuracy.Tally`).
        status: verdict status -> count.
        error_type: error type -> count.
        pass_at: k -> mean pass@k (filled by :meth:`finish`).
    """

    file: str
    split: str
    book: str
    model: str
    tally: Tally = field(default_factory=Tally)
    status: Counter = field(default_factory=Counter)
    error_type: Counter = field(default_factory=Counter)
    pass_at: dict[int, float | None] = field(default_factory=dict)

    @property
    def samples(self) -> int:
        """Every sample."""
        return self.tally.samples

    @property
    def infrastructure(self) -> int:
        """Samples the infrastructure failed on."""
        return self.tally.infrastructure

    @property
    def judged(self) -> int:
        """Samples judged."""
        return self.tally.judged

    @property
    def accuracy(self) -> float | None:
        """Share of the judged samples answered right (None when none was judged)."""
        return self.tally.accuracy

    @property
    def tasks(self) -> int:
        """Distinct tasks."""
        return self.tally.tasks

    @property
    def per_task(self) -> dict[str, list[int]]:
        """Task -> [judged samples, right ones]."""
        return self.tally.per_task

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one row.

        Args:
            row: a rollout row with its verdict.

        Raises:
            ValueError: the row has no verdict.
        """
        verdict = verdict_of(row)
        if verdict is None:
            raise ValueError("row has no verdict (no 'reward', at the top level or under 'judge')")
        self.status[str(verdict.get("status"))] += 1
        if verdict.get("infrastructure"):
            self.tally.add(None)  # the sandbox failed, not the model: no accuracy, no error type
            return
        if verdict.get("error_type"):
            self.error_type[str(verdict["error_type"])] += 1
        self.tally.add(float(verdict["reward"]), task=row_task_id(row))

    def finish(self, ks: Sequence[int]) -> None:
        """Mean pass@k over tasks with at least k judged samples (None when no task has k).

        Args:
            ks: the k values.
        """
        for k in ks:
            self.pass_at[k] = self.tally.pass_at(k)

    def to_dict(self) -> dict[str, Any]:
        """The line as a dict (the JSON report's)."""
        return {
            "file": self.file,
            "split": self.split,
            "book": self.book,
            "model": self.model,
            "tasks": self.tasks,
            **self.tally.to_dict(),
            "pass_at_k": {str(k): v for k, v in self.pass_at.items()},
            "status": dict(sorted(self.status.items())),
            "error_type": dict(self.error_type.most_common()),
        }


def summarize(paths: Iterable[str | os.PathLike], ks: Sequence[int] | None = None) -> list[GroupSummary]:
    """One summary per (file, split, book, model), in file order.

    Args:
        paths: rollout files.
        ks: the pass@k values (None: {1, n} where n is the most samples any task has in the group's file).
    """
    groups: dict[tuple[str, ...], GroupSummary] = {}
    for path in paths:
        name = str(path)
        if not Path(path).is_file():
            raise ValueError(f"no such rollout file: {name}")
        for number, row in read_rows(path):
            if verdict_of(row) is None:
                raise ValueError(f"{name}:{number}: row has no verdict (no 'reward', at the top level or under "
                                 "'judge'); judge it first (se-gym judge)")
            key = (name, str(row.get("split", "?")), str(row.get("book", "?")), str(row.get("model", "?")))
            if key not in groups:
                groups[key] = GroupSummary(*key)
            groups[key].add(row)
    for group in groups.values():
        chosen = sorted(set(ks)) if ks else sorted({1, group.tally.max_samples_per_task()})
        group.finish(chosen)
    return list(groups.values())


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(groups: Sequence[GroupSummary]) -> str:
    """The accuracy table, then status counts, then error-type counts (percentages in %).

    Args:
        groups: the summaries.
    """
    ks = sorted({k for g in groups for k in g.pass_at})
    keys = lambda g: [Path(g.file).name, g.split, g.book, g.model]  # noqa: E731
    main = _table(
        ["file", "split", "book", "model", "tasks", "samples", "infra", "accuracy %"] + [f"pass@{k} %" for k in ks],
        [keys(g) + [g.tasks, g.samples, g.infrastructure, _fmt(g.accuracy)] + [_fmt(g.pass_at.get(k)) for k in ks] for g in groups],
    )
    statuses = sorted({s for g in groups for s in g.status})
    status = _table(["file", "split", "book", "model"] + statuses, [keys(g) + [g.status.get(s, 0) for s in statuses] for g in groups])
    errors = [e for e, _ in sum((g.error_type for g in groups), Counter()).most_common()]
    parts = ["## Accuracy\n", main, "\n\n## Status\n", status]
    if errors:
        error = _table(["file", "split", "book", "model"] + errors, [keys(g) + [g.error_type.get(e, 0) for e in errors] for g in groups])
        parts += ["\n\n## Error types (infrastructure failures excluded)\n", error]
    return "".join(parts) + "\n"


def to_json(groups: Sequence[GroupSummary]) -> dict[str, Any]:
    """The report as JSON data: ``{"groups": [...]}``.

    Args:
        groups: the summaries.
    """
    return {"groups": [g.to_dict() for g in groups]}


def plot_error_types(groups: Sequence[GroupSummary], out: str | os.PathLike) -> Path:
    """A grouped bar chart of error-type counts, one colour per group (needs the ``plot`` extra).

    Args:
        groups: the summaries.
        out: the image to write.

    Returns:
        The image's path.
    """
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers
    import matplotlib.pyplot as plt

    errors = [e for e, _ in sum((g.error_type for g in groups), Counter()).most_common()] or ["(none)"]
    width = 0.8 / max(1, len(groups))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(errors)), 4.0))
    for i, g in enumerate(groups):
        xs = [j + i * width for j in range(len(errors))]
        ax.bar(xs, [g.error_type.get(e, 0) for e in errors], width, label=f"{Path(g.file).stem} · {g.book} · {g.model}")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(errors))], errors, rotation=30, ha="right")
    ax.set_ylabel("samples")
    ax.set_title("Error types")
    ax.legend(fontsize="small")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out

