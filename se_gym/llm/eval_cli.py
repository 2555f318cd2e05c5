"""``se-gym eval``: the table a paper needs from one or more rollout files."""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..configs import add_config_arguments, config_from_args
from ..errors import CLIError


@dataclass(frozen=True)
class EvalOptions:
    """What ``se-gym eval`` reports (the files are its arguments)."""

    k: tuple[int, ...] | None = field(default=None, metadata={
        "help": "pass@K to report (repeatable: --k 1 --k 5; None: 1 and n)", "repeat": True, "metavar": "K"})
    json: str | None = field(default=None, metadata={"help": "also write the summary as JSON", "metavar": "OUT"})
    plot: str | None = field(default=None, metadata={"help": "also draw a bar chart of error types (needs matplotlib)",
                                                     "metavar": "OUT.png"})

    def __post_init__(self) -> None:
        if self.k and min(self.k) < 1:
            raise CLIError(f"--k must be at least 1, got {min(self.k)}")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", help="rollout JSONL files (se-gym rollout or se-gym judge output)")
    add_config_arguments(parser, EvalOptions)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .report import plot_error_types, summarize, to_json, to_markdown

    files, o = args.files, config_from_args(EvalOptions, args)
    try:
        groups = summarize(files, ks=list(o.k) if o.k else None)
    except (OSError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    if not groups:
        raise CLIError("the rollout files hold no rows")
    print(to_markdown(groups), end="")
    if o.json:
        Path(o.json).parent.mkdir(parents=True, exist_ok=True)
        Path(o.json).write_text(json.dumps(to_json(groups), indent=2) + "\n", encoding="utf-8")
    if o.plot:
        try:
            plot_error_types(groups, o.plot)
        except ImportError:
            raise CLIError("--plot needs matplotlib: pip install 'se-gym[plot]'") from None
    return 0
