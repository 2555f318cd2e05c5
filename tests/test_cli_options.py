"""The CLIs' options (issue 37): every flag says what it does, and the commands built from config
dataclasses read the same options from a TOML/JSON file (flags on the command line win)."""
from __future__ import annotations

import argparse

import pytest

from se_gym import cli


def _without_help(parser: argparse.ArgumentParser, path: str):
    """(command, flag) of every option and argument of ``parser`` and its subcommands with no help text."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _without_help(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction) and not (action.help or "").strip():
            yield path, "/".join(action.option_strings) or action.dest


def _commands():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_flag_of_every_subcommand_has_a_help_text():
    missing = [m for name, p in _commands().items() for m in _without_help(p, name)]
    assert not missing, missing


def test_a_config_file_gives_the_options_and_flags_win(tmp_path):
    from se_gym.configs import config_from_args
    from se_gym.errors import CLIError
    from se_gym.judge.cli import JudgeRunConfig

    toml = tmp_path / "judge.toml"
    toml.write_text('input = "in.jsonl"\nout = "out.jsonl"\nlibrary = "seed:3"\nbatch_size = 7\nsandbox = "docker"\n')
    parser = cli.build_parser()
    cfg = config_from_args(JudgeRunConfig, parser.parse_args(["judge", "--config", str(toml), "--batch-size", "9"]))
    assert (cfg.input, cfg.library, cfg.sandbox, cfg.batch_size, cfg.profile) == ("in.jsonl", "seed:3", "docker", 9, "sebench")
    toml.write_text('input = "in.jsonl"\nout = "out.jsonl"\nlibrary = "seed:3"\nsandbox = "dockr"\n')
    with pytest.raises(CLIError, match=r"sandbox must be one of local, docker, http, ray.*did you mean 'docker'"):
        config_from_args(JudgeRunConfig, parser.parse_args(["judge", "--config", str(toml)]))
    with pytest.raises(CLIError, match="--library is required"):
        config_from_args(JudgeRunConfig, parser.parse_args(["judge", "--input", "i", "--out", "o"]))


def test_the_sandbox_command_offers_the_local_backends_isolation_levels():
    from se_gym.sandbox.cli import ISOLATIONS
    from se_gym.sandbox.local import LEVELS

    assert ISOLATIONS == LEVELS  # (written out there so that building the parser imports no backend)


def test_a_repeated_flag_collects_its_values():
    from se_gym.configs import config_from_args
    from se_gym.llm.eval_cli import EvalOptions

    args = cli.build_parser().parse_args(["eval", "a.jsonl", "--k", "1", "--k", "5"])
    assert config_from_args(EvalOptions, args).k == (1, 5) and args.files == ["a.jsonl"]
