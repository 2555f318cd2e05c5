"""``se-gym validate TASKSPEC...``: check every task of a suite and write one report.

The flags come from :class:`se_gym.validate.config.ValidateConfig` (one source for each option's
name, default and help); the task specs are the positional arguments.  Exit status: 0 when no
defect has severity ``error``, 1 when one has, 2 for a bad command line or spec.
"""
from __future__ import annotations

import argparse

from ..configs import add_config_arguments, config_from_args
from ..errors import CLIError
from .config import ValidateConfig, ValidateError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", nargs="*", metavar="TASKSPEC",
                        help="task specs: builtin[:SEED], sebench:PATH, jsonl:PATH, selfplay:PATH (default: builtin)")
    add_config_arguments(parser, ValidateConfig, exclude=("specs",))
    parser.set_defaults(func=run)


def build_config(args: argparse.Namespace) -> ValidateConfig:
    fixed = {"specs": tuple(args.spec)} if getattr(args, "spec", None) else {}
    try:
        return config_from_args(ValidateConfig, args, **fixed)
    except ValidateError as exc:
        raise CLIError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from .report import screen
    from .run import validate

    config = build_config(args)
    try:
        rep = validate(config)
    except ValidateError as exc:
        raise CLIError(str(exc)) from None
    print(screen(rep, f"{config.out}/report.json"))
    return int(rep["summary"]["exit_status"])
