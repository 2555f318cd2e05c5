"""What a conformance check found: a :class:`Report` of named checks, and the one error it raises."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import SEGymError


class ConformanceError(SEGymError, AssertionError):
    """A plug-in breaks its contract: the message names the first failed check and says why.

    Args:
        report: the whole :class:`Report` (every check, passed or not).
    """

    def __init__(self, report: "Report"):
        self.report = report
        name, why = report.failed[0]
        self.check = name
        more = report.failed[1:]
        tail = f" (and {len(more)} more: {', '.join(n for n, _ in more)})" if more else ""
        super().__init__(f"{report.kind} {report.subject} fails check {name!r}: {why}{tail}")


class CheckFailed(SEGymError, AssertionError):
    """Raised inside a check to fail it with a message (caught by :class:`Checks`, never beyond it)."""


def require(condition: Any, message: str) -> None:
    """Fail the running check with ``message`` unless ``condition`` holds.

    Args:
        condition: what the contract asks.
        message: why it fails, for the plug-in's author.
    """
    if not condition:
        raise CheckFailed(message)


@dataclass
class Report:
    """The outcome of one conformance check.

    Args:
        kind: what was checked (``"sandbox"``, ``"task suite"``, ``"agent"``).
        subject: its name, as the error messages show it.
        passed: the checks that passed, in order.
        failed: ``(check, why)`` for each check that failed.
        skipped: ``(check, why)`` for each check that could not run (a check it needs failed, or the
            caller gave too little to run it).
        notes: what a check found worth saying without failing (``check -> text``).
    """

    kind: str
    subject: str
    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no check failed."""
        return not self.failed

    def raise_for_failures(self) -> "Report":
        """Raise :class:`ConformanceError` naming the first failed check; otherwise return the report."""
        if self.failed:
            raise ConformanceError(self)
        return self

    def __str__(self) -> str:
        lines = [f"{self.kind} {self.subject}: {len(self.passed)} passed, {len(self.failed)} failed, {len(self.skipped)} skipped"]
        lines += [f"  ok      {name}" + (f" ({self.notes[name]})" if name in self.notes else "") for name in self.passed]
        lines += [f"  FAILED  {name}: {why}" for name, why in self.failed]
        lines += [f"  skipped {name}: {why}" for name, why in self.skipped]
        return "\n".join(lines)


class Checks:
    """Runs named checks into a :class:`Report`; a check fails by :func:`require` or by raising.

    Args:
        kind: what is checked (``"sandbox"``).
        subject: its name.
    """

    def __init__(self, kind: str, subject: str):
        self.report = Report(kind, subject)

    def run(self, name: str, fn: Callable[[], Any], needs: tuple[str, ...] = ()) -> bool:
        """Run the check ``name``; it is skipped when one of ``needs`` did not pass.

        Args:
            name: the check's name (what the error names).
            fn: the check; what it returns (a string) is kept as a note.
            needs: checks that must have passed first.

        Returns:
            Whether the check passed.
        """
        missing = [n for n in needs if n not in self.report.passed]
        if missing:
            self.report.skipped.append((name, f"needs {', '.join(missing)}"))
            return False
        try:
            note = fn()
        except CheckFailed as exc:
            self.report.failed.append((name, str(exc)))
            return False
        except Exception as exc:  # the plug-in raised where the contract says it answers
            self.report.failed.append((name, f"raised {type(exc).__name__}: {exc}"))
            return False
        self.report.passed.append(name)
        if note:
            self.report.notes[name] = str(note)
        return True

    def skip(self, name: str, why: str) -> None:
        """Record the check ``name`` as not run, and why.

        Args:
            name: the check.
            why: what it would need.
        """
        self.report.skipped.append((name, why))

    def finish(self, raises: bool) -> Report:
        """The report; with ``raises``, a :class:`ConformanceError` when a check failed.

        Args:
            raises: raise on a failed check instead of returning the report.
        """
        return self.report.raise_for_failures() if raises else self.report

__all__ = ["Checks", "ConformanceError", "Report", "require"]
