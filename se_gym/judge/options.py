"""The judge's options as one dataclass every command that judges shares, so each flag, its help and
its default are written once: ``--profile``, ``--sandbox SPEC`` and ``--sandbox-option KEY=VALUE``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..choices import DEFAULT_PROFILE, OFFICIAL_PROFILE, PROFILES
from ..sandbox.spec import SandboxFlags

PROFILE_HELP = ("judge profile: strict (the official rules, and every known way around the library refused) or sebench "
                "(the official judge, rule for rule)")


@dataclass(frozen=True, kw_only=True)
class JudgeOptions(SandboxFlags):
    """The judge of a command: its profile and its sandbox (a base of the command's options dataclass).

    Attributes:
        profile: the judge profile (default :data:`se_gym.choices.DEFAULT_PROFILE`).
    """

    profile: str = field(default=DEFAULT_PROFILE, metadata={"help": PROFILE_HELP, "choices": PROFILES})

    def judge_kwargs(self) -> dict[str, Any]:
        """``Judge(library, **judge_kwargs())``: the profile and the sandbox spec (parsed once)."""
        return {"profile": self.profile, "sandbox": self.sandbox_spec}


@dataclass(frozen=True, kw_only=True)
class OfficialJudgeOptions(JudgeOptions):
    """:class:`JudgeOptions` whose profile defaults to the official judge's (``se-gym judge``, ``se-gym
    bench``: official rollouts, the benchmark's protocol).

    Attributes:
        profile: the judge profile (default :data:`se_gym.choices.OFFICIAL_PROFILE`).
    """

    profile: str = field(default=OFFICIAL_PROFILE, metadata={"help": PROFILE_HELP, "choices": PROFILES})


__all__ = ["JudgeOptions", "OfficialJudgeOptions"]
