"""se_gym.configs: flags from dataclass fields; defaults < --config file < flags."""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field

import pytest

from se_gym.configs import add_config_arguments, config_from_args
from se_gym.errors import CLIError


@dataclass(frozen=True)
class Cfg:
    n: int = field(default=1, metadata={"help": "samples per task", "short": "-n"})
    lr: float = field(default=0.5, metadata={"help": "learning rate"})
    book: str = field(default="closed", metadata={"help": "prompt book", "choices": ("closed", "open")})
    seeds: tuple[int, ...] = field(default=(0,), metadata={"help": "seeds"})
    progress: bool = field(default=True, metadata={"help": "progress bars"})
    out: str | None = field(default=None, metadata={"help": "output folder"})


def parse(argv):
    p = argparse.ArgumentParser()
    add_config_arguments(p, Cfg)
    return p, p.parse_args(argv)


def test_defaults_flags_and_help_come_from_the_dataclass():
    p, a = parse([])
    assert config_from_args(Cfg, a) == Cfg()
    _, a = parse(["-n", "3", "--lr", "0.1", "--book", "open", "--seeds", "1", "2", "--no-progress", "--out", "x"])
    assert config_from_args(Cfg, a) == Cfg(n=3, lr=0.1, book="open", seeds=(1, 2), progress=False, out="x")
    text = p.format_help()
    assert "samples per task (default: 1)" in text and "--no-progress" in text
    with pytest.raises(SystemExit):
        p.parse_args(["--book", "ajar"])


@pytest.mark.parametrize("suffix, body", [(".json", json.dumps({"n": 7, "book": "open"})), (".toml", 'n = 7\nbook = "open"\n')])
def test_a_config_file_sits_between_defaults_and_flags(tmp_path, suffix, body):
    f = tmp_path / f"c{suffix}"
    f.write_text(body)
    _, a = parse(["--config", str(f)])
    assert config_from_args(Cfg, a) == Cfg(n=7, book="open")
    _, a = parse(["--config", str(f), "-n", "2"])
    assert config_from_args(Cfg, a) == Cfg(n=2, book="open")


def test_bad_config_files_are_one_line_errors(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"nn": 1}))
    with pytest.raises(CLIError, match="unknown option"):
        config_from_args(Cfg, parse(["--config", str(f)])[1])
    f.write_text("{")
    with pytest.raises(CLIError, match="not valid JSON"):
        config_from_args(Cfg, parse(["--config", str(f)])[1])


def test_a_field_without_help_is_refused():
    @dataclass
    class Bad:
        x: int = 1

    with pytest.raises(TypeError, match="help"):
        add_config_arguments(argparse.ArgumentParser(), Bad)
