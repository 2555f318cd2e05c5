"""The pieces of the judge's options that a sandbox needs too, each written once: the judge profile
(``--profile``: the library is written for it; :class:`se_gym.choices.ProfileOption`, below the
library's room, whose ``se-gym library build`` takes it too), the per-program limits (``--wall-s``, ``--cpu-s``,
``--memory-mb``) and ``--library``.  :class:`se_gym.judge.options.JudgeOptions` puts them together
with :class:`~se_gym.sandbox.spec.SandboxFlags`; ``se-gym sandbox`` uses them without the judge."""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from .base import Limits

LIBRARY_HELP = ("the library: seed:N or official:PATH/api_doc.jsonl (None: the tasks' own, seed:SEED for builtin:SEED and "
                "the api_doc.jsonl beside sebench:PATH; se-gym sandbox: none)")


@dataclass(frozen=True, kw_only=True)
class LimitOptions:
    """Per-program limits of the judge's sandbox (None: :class:`~se_gym.sandbox.base.Limits`' default,
    the official judge's 3 s).

    Attributes:
        wall_s: wall-clock seconds each program may run.
        cpu_s: CPU seconds each program may use (None: the wall limit).
        memory_mb: memory each program may allocate, MB.
    """

    wall_s: float | None = field(default=None, metadata={"help": f"wall-clock seconds a program may run (None: {Limits.wall_s})"})
    cpu_s: float | None = field(default=None, metadata={"help": f"CPU seconds a program may use (None: --wall-s's, {Limits.cpu_s})"})
    memory_mb: int | None = field(default=None, metadata={"help": f"memory a program may allocate, MB (None: {Limits.memory_mb})"})

    def limits(self) -> Limits | None:
        """The :class:`~se_gym.sandbox.base.Limits` these options give (None: none given, the defaults).

        Raises:
            ValueError: a limit that is not a positive number.
        """
        given = {f.name: getattr(self, f.name) for f in fields(LimitOptions) if getattr(self, f.name) is not None}
        for name, value in given.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be a positive number, got {value!r}")
        if "wall_s" in given and "cpu_s" not in given:  # a program given more time may use it
            given["cpu_s"] = given["wall_s"]
        return Limits(**given) if given else None


@dataclass(frozen=True, kw_only=True)
class LibraryOption:
    """``--library``: the library the tasks are written for.

    Attributes:
        library: a spec (``seed:N``, ``official:PATH``), or None: the tasks' own.
    """

    library: str | None = field(default=None, metadata={"help": LIBRARY_HELP})


__all__ = ["LIBRARY_HELP", "LibraryOption", "LimitOptions"]
