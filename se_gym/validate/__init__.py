"""``se-gym validate``: every task of a suite checked, one report (docs/validate.md).

Checks per task: ``oracle`` (the reference passes under both profiles, as a list and as an array
answer where the output allows both), ``floor`` (do-nothing answers earn nothing under strict),
``dependence`` (the reference's results depend on the library), ``determinism`` (tasks, prompts and
verdicts byte-identical in a second process and across sandboxes), ``leakage`` (no hidden output,
hidden input or reference line in any observation); per run: ``containment`` (a program can reach
neither the network nor this machine's files).
"""
from __future__ import annotations

from .checks import CHECKS, RUN_CHECKS, SEVERITY, Result
from .config import ValidateConfig, ValidateError
from .report import SCHEMA, SCHEMA_VERSION

__all__ = ["CHECKS", "RUN_CHECKS", "SEVERITY", "SCHEMA", "SCHEMA_VERSION", "Result", "ValidateConfig", "ValidateError", "validate"]


def validate(config: ValidateConfig) -> dict:
    """Run every check of ``config`` and return the report (written to ``config.out`` too).

    Args:
        config: the suites and how to check them (the options of ``se-gym validate``).

    Returns:
        The report (schema ``se-gym/validate-report`` version 1, docs/validate.md); its
        ``summary["exit_status"]`` is 1 when a defect has severity ``error``.
    """
    from .run import validate as run

    return run(config)
