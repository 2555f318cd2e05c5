"""One suite of a ``se-gym validate`` run, checked in a process of its own (a lane).

    python -m se_gym.validate.lane REQUEST.json

The request holds the run's options (``ValidateConfig``), the suite (``SuiteRef``), the modules to
import first (plug-ins that register task suite kinds) and the file to write the suite's part of
the report to.  The process prints the number of tasks checked as it goes (one number a line, for
the parent's progress bar).  Lanes are processes, not threads: each has its own interpreter, so
nothing one suite's checks do in Python waits for, or trips over, another's.
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any


class _Counts:
    """The progress bar's side of a lane: each update is a line on stdout."""

    def update(self, n: int = 1) -> None:
        print(int(n), flush=True)

    def set_postfix_str(self, text: str) -> None:
        pass


def lane(request: dict[str, Any]) -> None:
    from ..storage import write_text_atomic
    from .config import ValidateConfig
    from .run import check_suite
    from .suites import SuiteRef

    for module in request.get("imports", ()):
        importlib.import_module(module)
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in request["config"].items()}
    config = ValidateConfig(**options)
    part = check_suite(SuiteRef(request["spec"], request.get("library")), config, _Counts())
    write_text_atomic(request["out"], json.dumps(part))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: python -m se_gym.validate.lane REQUEST.json")
    lane(json.loads(Path(argv[0]).read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
