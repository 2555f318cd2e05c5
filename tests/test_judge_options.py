"""The judge's options are written once (issue 48): the profile's default is a constant of
se_gym.choices, and every command that judges shares one options dataclass for --profile,
--sandbox and --sandbox-option."""
from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

from se_gym.choices import DEFAULT_PROFILE, OFFICIAL_PROFILE
from se_gym.judge.options import JudgeOptions, OfficialJudgeOptions

ROOT = Path(__file__).resolve().parents[1] / "se_gym"


def test_the_commands_that_judge_share_the_judge_options():
    from se_gym.bench.config import BenchConfig
    from se_gym.judge.cli import JudgeRunConfig
    from se_gym.llm.rollout import RolloutConfig

    assert issubclass(RolloutConfig, JudgeOptions) and RolloutConfig(model="m").profile == DEFAULT_PROFILE
    for cls in (JudgeRunConfig, BenchConfig):
        assert issubclass(cls, OfficialJudgeOptions)
        assert {f.name: f.default for f in dataclasses.fields(cls)}["profile"] == OFFICIAL_PROFILE
    # none of them declares the flags again
    for cls in (RolloutConfig, JudgeRunConfig, BenchConfig):
        own = inspect.getsource(cls)
        assert not re.search(r"^\s+(profile|sandbox|sandbox_option):", own, re.M), cls.__name__


def test_no_entry_point_writes_the_judge_profile_s_default_as_a_literal():
    from se_gym.envs.sebench import SEBenchEnv
    from se_gym.judge import Judge

    assert inspect.signature(Judge).parameters["profile"].default == DEFAULT_PROFILE
    assert inspect.signature(SEBenchEnv).parameters["profile"].default == DEFAULT_PROFILE
    where = ["judge/core.py", "judge/types.py", "judge/cli.py", "envs/sebench.py", "llm/rollout.py", "bench/config.py",
             "integrations/trl.py", "integrations/_common.py", "integrations/openenv.py", "integrations/nemo_gym.py",
             "integrations/_verifiers_v1.py"]
    literal = re.compile(r"profile: [^=\n]+= *(field\(default=)?[\"'](strict|sebench)[\"']")
    found = [f"{w}:{i}" for w in where for i, line in enumerate((ROOT / w).read_text().splitlines(), 1) if literal.search(line)]
    assert not found, found
