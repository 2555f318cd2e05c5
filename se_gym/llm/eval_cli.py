"""``se-gym eval``: the table a paper needs from one or more rollout files."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import CLIError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", help="rollout JSONL files (se-gym rollout or se-gym judge output)")
    parser.add_argument("--k", type=int, action="append", metavar="K", help="pass@K to report (repeatable; default 1 and n)")
    parser.add_argument("--json", metavar="OUT", help="also write the summary as JSON")
    parser.add_argument("--plot", metavar="OUT.png", help="also draw a bar chart of error types (needs matplotlib)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .report import plot_error_types, summarize, to_json, to_markdown

    if args.k and min(args.k) < 1:
        raise CLIError(f"--k must be at least 1, got {min(args.k)}")
    try:
        groups = summarize(args.files, ks=args.k)
    except (OSError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    if not groups:
        raise CLIError("the rollout files hold no rows")
    print(to_markdown(groups), end="")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(to_json(groups), indent=2) + "\n", encoding="utf-8")
    if args.plot:
        try:
            plot_error_types(groups, args.plot)
        except ImportError:
            raise CLIError("--plot needs matplotlib: pip install 'se-gym[plot]'") from None
    return 0
