"""The judge's options as dataclasses every command that judges (and ``gym.make("SEBench-v0")``)
shares, so each flag, its help and its default are written once: ``--profile``, ``--sandbox SPEC``,
``--sandbox-option KEY=VALUE``, the limits (``--wall-s``, ``--cpu-s``, ``--memory-mb``) and ``--library``
(the pieces live in :mod:`se_gym.sandbox.options` and :mod:`se_gym.sandbox.spec`, which the sandbox's
own command uses too).

:data:`JUDGE_DEFAULTS` is their defaults as one value: the env's, the Judge's and the adapters'
signatures read their defaults from it (``profile: str = JUDGE_DEFAULTS.profile``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..choices import OfficialProfileOption, ProfileOption
from ..sandbox.options import LibraryOption, LimitOptions
from ..sandbox.spec import SandboxFlags


@dataclass(frozen=True, kw_only=True)
class JudgeOptions(SandboxFlags, LimitOptions, LibraryOption, ProfileOption):
    """The judge of a command: its profile (default :data:`se_gym.choices.DEFAULT_PROFILE`), its sandbox,
    the limits and the library (a base of the command's options dataclass)."""

    def check_judge_flags(self, error: type[Exception] = ValueError) -> None:
        """Check the sandbox spec (:meth:`~se_gym.sandbox.spec.SandboxFlags.check_sandbox_flags`) and the
        limits, raising ``error`` with one line.

        Args:
            error: the exception class to raise (a CLI's ``CLIError``).
        """
        self.check_sandbox_flags(error)
        try:
            self.limits()
        except ValueError as exc:
            raise error(str(exc)) from None

    def judge_kwargs(self) -> dict[str, Any]:
        """``Judge(library, **judge_kwargs())``: the profile, the sandbox spec (parsed once) and the limits."""
        return {"profile": self.profile, "sandbox": self.sandbox_spec, "limits": self.limits()}


@dataclass(frozen=True, kw_only=True)
class OfficialJudgeOptions(OfficialProfileOption, JudgeOptions):
    """:class:`JudgeOptions` whose profile defaults to the official judge's (``se-gym judge``, ``se-gym
    bench``: official rollouts, the benchmark's protocol)."""


# the defaults as one value, for signatures (gym.make's, the Judge's, the adapters')
JUDGE_DEFAULTS = JudgeOptions()

__all__ = ["JUDGE_DEFAULTS", "JudgeOptions", "OfficialJudgeOptions"]
