"""The ``se-gym`` command: one CLI, one subcommand per part of the package.

Each subcommand lives in the module that owns the feature and exposes ``configure(parser)``
(which sets ``parser.set_defaults(func=run)``).  Those modules import nothing heavy at the top,
so ``se-gym --help`` stays fast; torch, vLLM and Ray load only inside the command that uses them.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ._deps import DependencyError
from .errors import CLIError
from .llm.base import ContextTooLong

# name -> (module, one-line help).  Every module is part of the package: one that fails to import is a
# broken install, and the CLI says so instead of leaving the subcommand out.
COMMANDS: dict[str, tuple[str, str]] = {
    "library": ("se_gym.library.cli", "mint, write and inspect obfuscated libraries"),
    "tasks": ("se_gym.tasks.cli", "build and inspect task suites"),
    "judge": ("se_gym.judge.cli", "judge SE-Bench rollouts (JSONL in, verdicts out)"),
    "sandbox": ("se_gym.sandbox.cli", "inspect or serve the execution sandbox"),
    "rollout": ("se_gym.llm.rollout_cli", "generate answers with a model and judge them"),
    "eval": ("se_gym.llm.eval_cli", "summarize rollout files: accuracy, pass@k, error types"),
    "serve": ("se_gym.integrations.serve_cli", "serve SEBench-v0 over an environment protocol (openenv)"),
    "demo": ("se_gym.demo", "the offline demo: Open-SFT vs Closed-SFT (and RL) on a tiny model"),
    "experience": ("se_gym.experience.cli", "experience internalization: extract, inject, distil, iterate (and the 2x2x2 grid)"),
    "doctor": ("se_gym.doctor", "check what this machine's setup can do, and how to fix what it cannot"),
    "bench": ("se_gym.bench.cli", "benchmark memory-augmented and learning agents under the SE-Bench protocol (and: bench report)"),
    "validate": ("se_gym.validate.cli", "check every task of a suite (oracle, floor, library dependence, determinism, leakage, containment): one report"),
    "selfplay": ("se_gym.selfplay.cli", "self-play: the model proposes its own tasks, solves them and internalizes the library (resumable; --ray-address for a cluster)"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; ``only``: the one subcommand whose module is imported and configured (the
    others are listed with their help, not loaded: ``se-gym judge`` starts on the judge alone)."""
    parser = argparse.ArgumentParser(prog="se-gym", description="se-gym: a gym for knowledge internalization (SE-Bench).")
    from ._version import __version__

    parser.add_argument("--version", action="version", version=f"se-gym {__version__}")
    # dests of their own: subcommands have --quiet/--verbose flags of their own (progress bar, requests)
    parser.add_argument("-v", "--verbose", dest="log_more", action="count", default=0, help="show debug log lines too")
    parser.add_argument("-q", "--quiet", dest="log_less", action="count", default=0,
                        help="show only warnings and errors (-qq: errors only); a command's results still print")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            importlib.import_module(module).configure(command)
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option of the top parser),
    or None: then every subcommand is configured, as ``--help`` or an error message may list them."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-") or word in ("-h", "--help", "--version"):
            return None
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(only=_command_of(sys.argv[1:] if argv is None else list(argv)))
    args = parser.parse_args(argv)
    from .logs import setup

    setup(args.log_more - args.log_less)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if args.command is None else 2
    from . import metrics_log

    try:
        with metrics_log.from_args(args):  # --log of the training commands (nothing for the others)
            return int(args.func(args) or 0)
    except (CLIError, DependencyError, ContextTooLong) as exc:  # a user's error: one line
        print(f"se-gym {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"se-gym {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
