"""The one place for the fixed names a user picks from: books, judge profiles, splits, rewards.
Every option check goes through :func:`check`, so a typo fails at once with one line that lists the
valid choices (and the closest one).  Names that plug-ins can add (sandbox backends, generation
backends, task-suite kinds) live in registries instead: se_gym.sandbox.registry, se_gym.llm.base,
se_gym.tasks.spec."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Sequence

BOOKS = ("closed", "open")
PROFILES = ("strict", "sebench")
# the judge's profile where none is given (gym.make, the Judge, rollouts, the adapters), and the official
# judge's, which the commands that judge official rollouts or run the benchmark's protocol default to
DEFAULT_PROFILE = "strict"
OFFICIAL_PROFILE = "sebench"
SPLITS = ("train", "single_test", "multiple_test")
REWARDS = ("binary", "fraction")

PROFILE_HELP = ("judge profile: strict (the official rules, and every known way around the library refused) or sebench "
                "(the official judge, rule for rule)")


@dataclass(frozen=True, kw_only=True)
class ProfileOption:
    """``--profile``, defaulting to :data:`DEFAULT_PROFILE` (a base of a command's options dataclass;
    :class:`se_gym.judge.options.JudgeOptions` is the whole judge's).

    Attributes:
        profile: the judge profile.
    """

    profile: str = field(default=DEFAULT_PROFILE, metadata={"help": PROFILE_HELP, "choices": PROFILES})


@dataclass(frozen=True, kw_only=True)
class OfficialProfileOption(ProfileOption):
    """``--profile``, defaulting to the official judge's (:data:`OFFICIAL_PROFILE`): the commands that
    judge official rollouts, run the benchmark's protocol or write the official library.

    Attributes:
        profile: the judge profile.
    """

    profile: str = field(default=OFFICIAL_PROFILE, metadata={"help": PROFILE_HELP, "choices": PROFILES})


def describe(name: str, value: Any, choices: Sequence[Any]) -> str:
    """``"sandbox must be one of local, docker, http, ray; got 'dockr' (did you mean 'docker'?)"``.

    Args:
        name: what the value is.
        value: the value given.
        choices: the values allowed.
    """
    listed = ", ".join(str(c) for c in choices)
    msg = f"{name} must be one of {listed}; got {value!r}"
    if isinstance(value, str):
        close = difflib.get_close_matches(value, [c for c in choices if isinstance(c, str)], n=1, cutoff=0.6)
        if close:
            msg += f" (did you mean {close[0]!r}?)"
    return msg


def check(name: str, value: Any, choices: Sequence[Any], error: type[Exception] = ValueError) -> Any:
    """Return ``value`` if it is one of ``choices``; else raise ``error`` with a one-line message.

    Args:
        name: what the value is, for the message (``"sandbox"``).
        value: the value given.
        choices: the values allowed.
        error: the exception class to raise.
    """
    try:
        ok = value in choices
    except TypeError:  # unhashable/odd values are simply not a choice
        ok = False
    if not ok:
        raise error(describe(name, value, choices))
    return value


__all__ = ["BOOKS", "PROFILES", "SPLITS", "REWARDS", "OfficialProfileOption", "ProfileOption", "check", "describe"]
