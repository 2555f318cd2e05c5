"""The judge's and the model's options are declared once (issue 48): every command's ``--profile``,
``--sandbox``, limits, ``--library``, ``--model``, ``--backend`` and sampling flags are built from the
shared dataclasses of se_gym.sandbox.options / se_gym.judge.options / se_gym.llm.options, gym.make's
signature reads its defaults from them, and every command's --help lists the same backends."""
from __future__ import annotations

import argparse
import ast
import inspect
import logging
import re
import textwrap

import pytest

from se_gym.choices import OfficialProfileOption, ProfileOption
from se_gym.cli import build_parser
from se_gym.errors import CLIError
from se_gym.judge.options import JUDGE_DEFAULTS, JudgeOptions
from se_gym.llm.base import BACKENDS
from se_gym.llm.options import BackendFlag, BackendOptionFlag, ModelFlag, SamplingOptions
from se_gym.sandbox.options import LibraryOption, LimitOptions
from se_gym.sandbox.spec import SandboxFlags

# each shared option's field name -> the dataclasses allowed to declare it (the profile has two defaults
# by design: the official judge's for the commands that judge official rollouts)
SHARED = {
    "profile": (ProfileOption, OfficialProfileOption),
    "sandbox": (SandboxFlags,), "sandbox_option": (SandboxFlags,),
    "wall_s": (LimitOptions,), "cpu_s": (LimitOptions,), "memory_mb": (LimitOptions,),
    "library": (LibraryOption,),
    "model": (ModelFlag,), "backend": (BackendFlag,), "backend_option": (BackendOptionFlag,),
    "temperature": (SamplingOptions,), "top_p": (SamplingOptions,), "max_tokens": (SamplingOptions,),
}
FLAGS = {"--" + name.replace("_", "-"): name for name in SHARED}


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, its parser) for every command and subcommand."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


def _shared_actions():
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            name = FLAGS.get(next((o for o in action.option_strings if o in FLAGS), ""), None)
            if action.dest in SHARED or name:
                yield " ".join(path), action, name or action.dest


def test_every_command_s_shared_options_are_declared_once_in_the_shared_dataclasses():
    seen, wrong = set(), []
    for command, action, name in _shared_actions():
        if type(action).__name__ == "_Deprecated":  # an old spelling: stores into the shared option
            continue
        owner = getattr(action, "declared_in", None)  # (set by se_gym.configs.add_config_arguments)
        seen.add(name)
        if owner not in SHARED[name]:
            wrong.append(f"se-gym {command} {'/'.join(action.option_strings)}: declared in "
                         f"{getattr(owner, '__name__', 'a plain add_argument')}, not {SHARED[name][0].__name__}")
    assert not wrong, "\n".join(wrong)
    # (and the walk found them: every shared option is a flag of some command)
    assert seen == set(SHARED), set(SHARED) - seen


def test_the_commands_that_take_the_shared_options():
    takes: dict[str, set[str]] = {}
    for command, action, name in _shared_actions():
        takes.setdefault(name, set()).add(command)
    assert {"judge", "rollout", "bench", "sandbox info", "serve openenv"} <= takes["profile"]
    assert {"judge", "rollout", "sandbox run", "serve openenv", "validate"} <= takes["library"]
    assert {"judge", "rollout", "bench", "sandbox serve"} <= takes["wall_s"]
    assert {"rollout", "demo", "experience", "experience grid", "bench", "selfplay"} <= takes["backend"]
    assert {"rollout", "demo", "experience", "bench", "selfplay"} <= takes["model"]


def _defaults_of(func) -> dict[str, ast.expr]:
    """A function's parameter -> the expression its default is written as."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    args = tree.body[0].args
    positional = args.posonlyargs + args.args
    out = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    out.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return out


@pytest.mark.parametrize("where", ["env", "judge", "shared_judge"])
def test_gym_make_and_the_judge_read_their_defaults_from_the_judge_options(where):
    from se_gym.envs.sebench import SEBenchEnv
    from se_gym.integrations._common import shared_judge
    from se_gym.judge import Judge

    func = {"env": SEBenchEnv.__init__, "judge": Judge.__init__, "shared_judge": shared_judge}[where]
    names = {"env": ("profile", "sandbox", "library"), "judge": ("profile", "sandbox"), "shared_judge": ("profile", "sandbox")}[where]
    written = _defaults_of(func)
    params = inspect.signature(func).parameters
    for name in names:
        source = ast.unparse(written[name])
        assert source == f"JUDGE_DEFAULTS.{name}", f"{where}: {name}={source} (write it once: JUDGE_DEFAULTS.{name})"
        assert params[name].default == getattr(JUDGE_DEFAULTS, name)
    assert JUDGE_DEFAULTS == JudgeOptions()


def _backend_list(help_text: str) -> list[str]:
    match = re.search(r"backend[^:]*: ([\w, -]+) \(a registered name, or module:Class\)", " ".join(help_text.split()))
    assert match, help_text
    return [n.strip() for n in match.group(1).split(",")]


def test_every_command_s_help_lists_the_same_backends():
    lists = {}
    for path, parser in _commands(build_parser()):
        text = " ".join(parser.format_help().split())
        for action in parser._actions:
            if action.dest in ("backend", "extractor_backend") and type(action).__name__ != "_Deprecated":
                assert action.choices is None, f"se-gym {' '.join(path)} {action.option_strings[0]}: a choice list of its own"
                shown = " ".join(action.help.split())
                assert shown.split(" (default")[0] in text  # (what --help prints)
                lists[f"{' '.join(path)} {action.option_strings[0]}"] = _backend_list(action.help)
    assert {"rollout --backend", "demo --backend", "experience --backend", "experience grid --backend",
            "bench --backend", "selfplay --backend", "experience --extractor-backend"} <= set(lists)
    assert {tuple(v) for v in lists.values()} == {BACKENDS.registered()}, lists
    assert {"hf", "vllm", "openai"} <= set(BACKENDS.registered())


def test_a_command_that_cannot_drive_a_backend_says_so_in_one_line():
    from se_gym.demo import DemoOptions
    from se_gym.experience.cli import CellOptions

    for cls, command in ((DemoOptions, "se-gym demo"), (CellOptions, "se-gym experience")):
        with pytest.raises(CLIError) as err:
            cls(backend="openai")
        assert str(err.value).startswith(f"{command} cannot use --backend openai: it samples from the model it trains")
        assert "\n" not in str(err.value) and str(err.value).endswith("(hf, vllm)")
        with pytest.raises(CLIError, match="generation backend must be one of hf, vllm, openai.*did you mean 'vllm'"):
            cls(backend="vlm")
    from se_gym.bench.config import BenchConfig

    assert BenchConfig(backend="openai").backend == "openai"  # (bench drives every backend)
    with pytest.raises(ValueError, match="--backend: generation backend must be one of"):
        BenchConfig(backend="nope")


def test_rollout_asks_for_its_model_in_one_line(capsys):
    from se_gym.cli import main

    assert main(["rollout", "--out", "x.jsonl"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("se-gym rollout: error: --model is required") and "\n" not in err


def test_the_limits_flags_give_the_judge_its_limits():
    from se_gym.configs import config_from_args
    from se_gym.judge.cli import JudgeRunConfig
    from se_gym.sandbox.base import Limits

    parser = build_parser(only="judge")
    args = parser.parse_args(["judge", "--input", "i", "--out", "o", "--library", "seed:0", "--wall-s", "7", "--memory-mb", "512"])
    cfg = config_from_args(JudgeRunConfig, args)
    assert cfg.judge_kwargs()["limits"] == Limits(wall_s=7.0, cpu_s=7.0, memory_mb=512)
    assert JudgeRunConfig(input="i", out="o", library="seed:0").judge_kwargs()["limits"] is None  # (the Judge's own default)
    with pytest.raises(CLIError, match="--wall-s must be a positive number"):
        JudgeRunConfig(input="i", out="o", library="seed:0", wall_s=0)
    with pytest.raises(CLIError, match="--library is required"):
        JudgeRunConfig(input="i", out="o")


def test_old_spellings_keep_working(caplog):
    from se_gym.configs import config_from_args
    from se_gym.sandbox.cli import SandboxOptions

    parser = build_parser(only="sandbox")
    with caplog.at_level(logging.WARNING):
        args = parser.parse_args(["sandbox", "run", "--wall", "5", "f.py"])
    assert config_from_args(SandboxOptions, args).limits().wall_s == 5.0
    assert any("--wall is deprecated" in r.getMessage() for r in caplog.records)
    # --backend-option, once a plain flag of rollout and selfplay, is the shared dataclass's
    from se_gym.llm.rollout import RolloutConfig

    args = build_parser(only="rollout").parse_args(["rollout", "--model", "m", "--out", "o", "--backend-option", "dtype=float32",
                                                    "--backend-option", "max_model_len=4096"])
    assert config_from_args(RolloutConfig, args).backend_options == {"dtype": "float32", "max_model_len": 4096}


def test_run_folders_bound_before_the_shared_options_still_resume(tmp_path):
    """The fields the shared dataclasses added (limits, library, backend options) stay out of a run
    folder's binding at their defaults, so a rollout file or bench folder bound before resumes."""
    from se_gym.bench.config import BenchConfig
    from se_gym.llm.rollout import RolloutConfig

    assert sorted(BenchConfig().run_config()) == ["backend", "batch_size", "learn_book", "learn_passes", "learn_samples", "limit",
                                                   "model", "online", "profile", "quick", "samples", "sandbox", "tasks"]
    import json

    from se_gym.llm.rollout import bind_output

    out = tmp_path / "rows.jsonl"
    bind_output(RolloutConfig(model="m"), out)
    bound = json.loads((tmp_path / "rows.jsonl.run.json").read_text())["config"]
    assert sorted(bound) == ["backend", "backend_options", "batch_size", "book", "chat", "enable_thinking", "library", "limit",
                             "max_tokens", "model", "n", "profile", "seed", "split", "tasks", "temperature", "top_p"]
    bind_output(RolloutConfig(model="m", backend_option=("dtype=float32",), wall_s=5), tmp_path / "other.jsonl")
    bound = json.loads((tmp_path / "other.jsonl.run.json").read_text())["config"]
    assert bound["backend_options"] == {"dtype": "float32"} and bound["wall_s"] == 5 and "cpu_s" not in bound


def test_self_play_s_own_values_no_longer_borrow_the_suite_kind_s_name(caplog, monkeypatch):
    """``--eval miniature`` (self-play's questions about the run's functions) is ``--eval functions``
    now, and ``--seed-tasks miniature`` (an empty buffer) is the empty default: ``miniature`` names the
    task-suite kind; the old spellings still work, with one deprecation line."""
    from se_gym.selfplay import loop
    from se_gym.selfplay.loop import RUN_FUNCTIONS, SelfPlayConfig

    monkeypatch.setattr(loop, "_WARNED_EVAL", set())  # (once per process: an earlier test may have warned)

    with caplog.at_level(logging.WARNING):
        old = SelfPlayConfig(model="m", eval="miniature", seed_tasks="miniature")
    assert (old.eval, old.seed_tasks) == (RUN_FUNCTIONS, "") == ("functions", "")
    assert sum("deprecated" in r.getMessage() for r in caplog.records) == 2
    assert SelfPlayConfig(model="m", eval="functions") == SelfPlayConfig(model="m", eval="miniature")
    # the shared options' None resolve to the values folders bound before hold
    cfg = SelfPlayConfig(model="m")
    assert (cfg.library, cfg.wall_s) == ("seed:0", 3.0)
