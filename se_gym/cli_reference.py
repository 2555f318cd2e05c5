"""Write the CLI reference (docs/cli.md) from the parsers themselves, so it cannot drift from them.

    python -m se_gym.cli_reference > docs/cli.md

tests/test_readme.py checks that the file in the checkout is what this prints.
"""
from __future__ import annotations

import argparse
import os

WIDTH = "100"  # argparse wraps help to $COLUMNS: fixed, so the text is the same on every terminal


def _sections(parser: argparse.ArgumentParser, name: str, depth: int = 2) -> list[str]:
    out = [f"{'#' * depth} `{name}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                out += _sections(sub, f"{name} {sub_name}", min(depth + 1, 4))
    return out


def reference() -> str:
    """The reference as Markdown: every command's and subcommand's help, in the parser's order."""
    from .cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        lines = ["# CLI reference", "",
                 "Generated from the parsers by `python -m se_gym.cli_reference > docs/cli.md`; a test keeps it current.", ""]
        lines += _sections(build_parser(), "se-gym", 2)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(reference(), end="")
