"""The se-gym command: every subcommand is there, or the CLI says why (none is silently left out)."""
from __future__ import annotations

import sys

import pytest

from se_gym import cli


def test_every_subcommand_is_in_the_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(cli.COMMANDS) and "doctor" in sub.choices


def test_a_subcommand_whose_module_is_broken_is_an_error_not_a_missing_command(monkeypatch):
    monkeypatch.setitem(cli.COMMANDS, "ghost", ("se_gym.no_such_module_here", "a module that is not there"))
    with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
        cli.build_parser()
    assert "se_gym.no_such_module_here" not in sys.modules


def test_rollout_is_seeded_by_default_and_says_so(monkeypatch, tmp_path, capsys):
    import se_gym.llm.rollout as rollout_module
    import se_gym.llm.rollout_cli as rollout_cli
    from se_gym.configs import config_from_args

    parser = cli.build_parser()
    base = ["rollout", "--model", "m", "--out", str(tmp_path / "o.jsonl")]

    def seed(argv):  # (flags not given are left to the config's defaults)
        return config_from_args(rollout_module.RolloutConfig, parser.parse_args(argv), also=(rollout_cli.RolloutRunOptions,)).seed

    assert seed(base) == 0
    assert seed(base + ["--seed", "7"]) == 7
    assert seed(base + ["--seed", "none"]) is None
    with pytest.raises(SystemExit):
        parser.parse_args(base + ["--seed", "x"])
    sub = next(a for a in parser._actions if a.dest == "command").choices["rollout"]
    assert "default: 0" in next(a for a in sub._actions if a.dest == "seed").help
    # the seed reaches the run's configuration (what makes batch i sample with seed + i)
    seen = []

    class Stop(Exception):
        pass

    def capture(config, *args, **kwargs):
        seen.append(config.seed)
        raise Stop  # nothing to generate here

    monkeypatch.setattr(rollout_module, "rollout", capture)
    for extra in ([], ["--seed", "none"]):
        with pytest.raises(Stop):
            cli.main(base + extra)
    assert seen == [0, None]
