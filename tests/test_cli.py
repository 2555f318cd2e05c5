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
