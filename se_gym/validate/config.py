"""The options of ``se-gym validate`` (one dataclass: the command line's flags are built from it)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..configs import int_or_none
from ..errors import SEGymError
from ..sandbox.base import Limits
from ..sandbox.options import LibraryOption, LimitOptions
from ..sandbox.spec import SandboxFlags


class ValidateError(SEGymError, ValueError):
    """A bad option or task spec for ``se-gym validate`` (one line)."""


@dataclass(frozen=True)
class ValidateConfig(SandboxFlags, LimitOptions, LibraryOption):
    """What ``se-gym validate`` checks and how.  The judge's shared options (:mod:`se_gym.sandbox.options`):
    ``--sandbox`` (every probe runs in it), ``--library`` (of the specs that do not say theirs; None:
    each spec's own) and the limits (``--wall-s``: seconds a probe may run, None: the official 3)."""

    specs: tuple[str, ...] = field(default=("builtin",), metadata={
        "help": "task specs: builtin[:SEED], sebench:PATH, jsonl:PATH (a user's file), selfplay:PATH (a run or its buffer)"})
    libraries: int = field(default=1, metadata={
        "help": "for builtin[:SEED]: mint this many libraries, seeds SEED..SEED+N-1, and check each one's suite"})
    splits: tuple[str, ...] = field(default=(), metadata={"help": "the splits to check (empty: every split a spec has)"})
    limit: int | None = field(default=None, metadata={"type": int_or_none, "help": "check at most this many tasks of each suite (None: all)"})
    out: str = field(default="se_gym_validate", metadata={
        "help": "folder for report.json and summary.txt; a rerun with the same options resumes suite by suite"})
    sandboxes: tuple[str, ...] = field(default=("local", "docker", "ray"), metadata={
        "help": "sandboxes whose walls are probed and whose verdicts must agree with --sandbox's, where this machine has them"})
    sandbox_sample: int = field(default=16, metadata={"help": "tasks of each suite judged again in every other sandbox"})
    second_process: bool = field(default=True, metadata={
        "help": "regenerate every task and prompt in a second process and compare bytes (and a sample of verdicts)"})
    verdict_every: int = field(default=8, metadata={"help": "the second process judges every N-th task again (1: every task)"})
    visible_cases: int = field(default=1, metadata={"help": "the env's visible_cases: leading test cases multi-turn feedback may show"})
    workers: int | None = field(default=None, metadata={"type": int_or_none, "help": "sandbox workers (None: the sandbox's default)"})
    retry_wall_s: float = field(default=20.0, metadata={
        "help": "a probe that timed out runs once more with this limit (a loaded machine is not the task's fault)"})
    chunk: int = field(default=256, metadata={"help": "tasks judged per batch"})
    restart: bool = field(default=False, metadata={"help": "discard what --out holds and start again"})
    progress: bool = field(default=True, metadata={"help": "progress bars"})

    def __post_init__(self) -> None:
        if self.wall_s is None:  # (the official limit, resolved: the run folder binds the number)
            object.__setattr__(self, "wall_s", Limits.wall_s)
        self.check_sandbox_flags(ValidateError)
        try:
            self.limits()
        except ValueError as exc:  # (a limit that is not a positive number: one line)
            raise ValidateError(str(exc)) from None
        if self.sandbox_option:  # one spec string, its options in it (the probes' judges and the second process take it)
            object.__setattr__(self, "sandbox", str(self.sandbox_spec))
        if not self.specs or not all(isinstance(s, str) and s for s in self.specs):
            raise ValidateError(f"give at least one task spec, got {self.specs!r}")
        for name in ("libraries", "sandbox_sample", "verdict_every", "chunk"):
            value = getattr(self, name)
            low = 0 if name == "sandbox_sample" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValidateError(f"--{name.replace('_', '-')} must be an int >= {low}, got {value!r}")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1):
            raise ValidateError(f"--limit must be an int >= 1 or None, got {self.limit!r}")
        if isinstance(self.visible_cases, bool) or not isinstance(self.visible_cases, int) or self.visible_cases < 0:
            raise ValidateError(f"--visible-cases must be an int >= 0, got {self.visible_cases!r}")
        for name in ("wall_s", "retry_wall_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValidateError(f"--{name.replace('_', '-')} must be a positive number of seconds, got {value!r}")
